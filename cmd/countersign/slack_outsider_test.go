package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/countersign/countersign/adapters/slack"
	"github.com/countersign/countersign/adapters/slack/slacktest"
	"github.com/countersign/countersign/agent/agenttest"
)

// TestSlackOutsiderIsRefusedOnce: a Slack Connect user of another
// organisation, even one an approver list names, is refused by the bot's
// one check, clicked or typed, with exactly one notice each; nothing runs.
func TestSlackOutsiderIsRefusedOnce(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	fake := slacktest.New(t)
	model := agenttest.NewServer(t)
	slackRun(t, dir, `
bot:
  default:
    approvers: [U0BOB, U0MAL]
`, fake, model)
	mallory := slacktest.User{ID: "U0MAL", Name: "mallory", Team: "T0OTHER"}
	thread := fake.MentionOnce(alice, slackChannel, "", "!run rm -f ./x")
	card := threadHas(t, fake, thread, "rm -f ./x")
	id := approvalID(t, card)

	fake.Acked(t, fake.Click(mallory, slackChannel, card.TS, slack.ActionApprove, id))
	fake.Say(mallory, slackChannel, thread, "approve "+id)
	// Bob's cancel comes after both: once the card shows it, the bot has
	// handled mallory's two decisions (the adapter hands events over in
	// order).
	fake.Acked(t, fake.Click(bob, slackChannel, card.TS, slack.ActionCancel, id))
	fake.Wait(t, "the card cancelled by bob", func() bool {
		m, _ := fake.Message(slackChannel, card.TS)
		return strings.Contains(slacktest.View(m), "cancelled")
	})
	fake.Wait(t, "a notice for each of mallory's decisions", func() bool { return len(fake.Ephemerals(mallory.ID)) >= 2 })
	notices := fake.Ephemerals(mallory.ID)
	if len(notices) != 2 {
		t.Fatalf("mallory got %d notices for two refused decisions, want one each: %+v", len(notices), notices)
	}
	for _, n := range notices {
		if !strings.Contains(n.Text, "another workspace") || !strings.Contains(n.Text, "Nothing changed") {
			t.Errorf("mallory was told %q; want that she belongs to another workspace and nothing changed", n.Text)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err != nil {
		t.Error("x is gone: an outsider's decision ran the command")
	}
}

// TestSlackUncheckedGroupIsSaidOnce: when Slack cannot say whether the
// person deciding is in the approver group, the decision is refused with
// exactly one notice, which names the group; once Slack answers, the same
// person's decision counts.
func TestSlackUncheckedGroupIsSaidOnce(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	fake := slacktest.New(t)
	fake.AddGroup("S0ONCALL", "oncall", bob.ID)
	model := agenttest.NewServer(t)
	slackRun(t, dir, `
bot:
  default:
    approvers: ["group:@oncall"]
`, fake, model)
	thread := fake.MentionOnce(alice, slackChannel, "", "!run rm -f ./x")
	card := threadHas(t, fake, thread, "rm -f ./x")
	id := approvalID(t, card)

	fake.FailGroups("internal_error")
	fake.Acked(t, fake.Click(bob, slackChannel, card.TS, slack.ActionApprove, id))
	fake.Wait(t, "a notice to bob", func() bool { return len(fake.Ephemerals(bob.ID)) > 0 })
	fake.FailGroups("")
	// Carol's words after it: once answered, bob's click has been handled.
	fake.Say(carol, slackChannel, thread, "!pending")
	threadHas(t, fake, thread, "waiting")
	if n := fake.Ephemerals(bob.ID); len(n) != 1 || !strings.Contains(n[0].Text, "could not check whether you are in the user group @oncall") {
		t.Fatalf("bob got %+v; want one notice naming the group it could not check", n)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err != nil {
		t.Fatal("x is gone: a decision needing an unchecked group ran the command")
	}
	fake.Acked(t, fake.Click(bob, slackChannel, card.TS, slack.ActionApprove, id))
	fake.Wait(t, "x removed once Slack answers", func() bool {
		_, err := os.Stat(filepath.Join(dir, "x"))
		return os.IsNotExist(err)
	})
	if n := len(fake.Ephemerals(bob.ID)); n != 1 {
		t.Errorf("bob got %d notices in all, want the one", n)
	}
}
