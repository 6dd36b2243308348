package main

import (
	"os"
	"strings"
	"testing"

	"github.com/countersign/countersign/adapters/slack"
	"github.com/countersign/countersign/adapters/slack/slacktest"
	"github.com/countersign/countersign/agent/agenttest"
)

// TestTracePath runs the path docs/architecture.md traces, for .ci/trace
// to measure with coverage: one Slack message that the model answers with
// a read (auto) and `rm -rf ./tmp_*` (a card), and one Approve click.
// COUNTERSIGN_TRACE_STEP says how far it goes: "start" (the bot only),
// "message" (until the card is up) or "click" (until the card is final);
// unset, the test is skipped (TestSlackCallBudget checks the same flow's
// behaviour in every run).
func TestTracePath(t *testing.T) {
	step := os.Getenv("COUNTERSIGN_TRACE_STEP")
	if step == "" {
		t.Skip("a measurement for .ci/trace; set COUNTERSIGN_TRACE_STEP to start, message or click")
	}
	dir := streamFolder(t)
	fake := slacktest.New(t)
	fake.AddGroup("S0ONCALL", "oncall", bob.ID)
	model := agenttest.NewServer(t,
		agenttest.Calls(
			agenttest.Call("call-ls", "execute_command", `{"command":"ls","risk_level":"low"}`),
			agenttest.Call("call-rm", "execute_command", `{"command":"rm -rf ./tmp_*","risk_level":"high"}`)),
		agenttest.Text("Removed the temp files."),
	)
	slackRun(t, dir, streamConfig, fake, model)
	if step == "start" {
		return
	}
	thread := fake.Mention(alice, slackChannel, "", "clean up the temp files")
	card := threadHas(t, fake, thread, "rm -rf ./tmp_")
	if step == "message" {
		return
	}
	fake.Acked(t, fake.Click(bob, slackChannel, card.TS, slack.ActionApprove, approvalID(t, card)))
	threadHas(t, fake, thread, "Removed the temp files.")
	fake.Wait(t, "the card's final state", func() bool {
		m, _ := fake.Message(slackChannel, card.TS)
		return strings.Contains(slacktest.View(m), "exit code")
	})
	fake.Wait(t, "the status cleared", func() bool { return fake.Status(slackChannel, thread) == "" })
}
