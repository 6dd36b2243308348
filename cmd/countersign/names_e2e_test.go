package main

import (
	"strings"
	"testing"

	"github.com/countersign/countersign/adapters/discord/discordtest"
	"github.com/countersign/countersign/adapters/slack/slacktest"
	"github.com/countersign/countersign/agent/agenttest"
)

// TestSlackApproversByName: approvers configured by id (a person U0BOB, a
// user group S0ONCALL) read on the card as bob and @oncall (issue 24,
// item 3), never as @U0BOB or @S0ONCALL.
func TestSlackApproversByName(t *testing.T) {
	fake := slacktest.New(t)
	fake.AddUser(bob)
	fake.AddGroup("S0ONCALL", "oncall", carol.ID)
	model := agenttest.NewServer(t,
		agenttest.Calls(agenttest.Call("call-1", "execute_command", `{"command":"rm -rf ./tmp_*","risk_level":"high"}`)),
	)
	slackRun(t, t.TempDir(), `
bot:
  default:
    approvers: ["U0BOB", "group:S0ONCALL"]
`, fake, model)
	thread := fake.Mention(alice, slackChannel, "", "clean up the temp files")
	v := slacktest.View(threadHas(t, fake, thread, "rm -rf ./tmp_*"))
	if !strings.Contains(v, "Needs an approval from bob or @oncall.") || strings.Contains(v, "U0BOB") || strings.Contains(v, "S0ONCALL") {
		t.Errorf("the card does not name its approvers by name:\n%s", v)
	}
}

// TestDiscordApproversByName: an approver role configured by id
// (role:<id>) reads on the card as the role's name.
func TestDiscordApproversByName(t *testing.T) {
	dir := discordFiles(t)
	fake := discordtest.New(t)
	fake.AddRole(dBob.Roles[0], "oncall")
	model := agenttest.NewServer(t,
		agenttest.Calls(agenttest.Call("c1", "execute_command", `{"command":"rm -rf ./tmp_*","risk_level":"high"}`)),
	)
	startDiscord(t, dir, discordConfig(t, dir, ""),
		"OPENAI_BASE_URL", model.BaseURL(), "OPENAI_MODEL", "test-model",
		"DISCORD_BOT_TOKEN", discordtest.Token, "DISCORD_API_URL", fake.URL)
	ops := fake.AddChannel("ops")
	fake.WaitSessions(t, 1)
	m := fake.Say(t, dAlice, ops, "clean up the temp files", true)
	v := text(card(t, fake, m))
	if !strings.Contains(v, "@oncall") || strings.Contains(v, dBob.Roles[0]) {
		t.Errorf("the card does not name the approver role by name:\n%s", v)
	}
}
