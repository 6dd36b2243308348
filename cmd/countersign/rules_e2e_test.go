package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/countersign/countersign/adapters/slack"
	"github.com/countersign/countersign/adapters/slack/slacktest"
	"github.com/countersign/countersign/agent/agenttest"
)

// TestSlackApprovalRules tries issue 19 as a new user would, in Slack
// against the in-process fake: a two-of-three rule (the card says who and
// how many, the first approval is counted in place, the second runs it
// and the card's title says it ran), then a cancel that requires a reason:
// the Cancel button opens a form (views.open with the click's trigger),
// and the reason typed there reaches the card and the model.
func TestSlackApprovalRules(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"tmp_a", "tmp_b", "old_c"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fake := slacktest.New(t)
	model := agenttest.NewServer(t,
		agenttest.Calls(agenttest.Call("call-1", "execute_command", `{"command":"rm -rf ./tmp_*","risk_level":"high"}`)),
		agenttest.Text("Removed the temp files."),
	)
	slackRun(t, dir, `
bot:
  default:
    approvers: ["U0BOB", "U0CAROL", "U0DAVE"]
    approvals_required: 2
    reason_required: [cancel]
`, fake, model)

	thread := fake.Mention(alice, slackChannel, "", "clean up the temp files")
	card := threadHas(t, fake, thread, "rm -rf ./tmp_*")
	if v := slacktest.View(card); !strings.Contains(v, "Needs two approvals from @U0BOB, @U0CAROL or @U0DAVE.") {
		t.Errorf("the card does not say who may decide and how many:\n%s", v)
	}
	id := approvalID(t, card)

	fake.Acked(t, fake.Click(bob, slackChannel, card.TS, slack.ActionApprove, id))
	fake.Wait(t, "the count on the card", func() bool {
		m, _ := fake.Message(slackChannel, card.TS)
		return strings.Contains(slacktest.View(m), "1 of 2: bob ✓ — one more from")
	})
	if _, err := os.Stat(filepath.Join(dir, "tmp_a")); err != nil {
		t.Fatal("the call ran after one approval of two")
	}
	fake.Acked(t, fake.Click(carol, slackChannel, card.TS, slack.ActionApprove, id))
	threadHas(t, fake, thread, "Removed the temp files.")
	fake.Wait(t, "the finished card", func() bool {
		m, _ := fake.Message(slackChannel, card.TS)
		v := slacktest.View(m)
		return strings.Contains(v, "Ran: approved by bob and carol") && strings.Contains(v, "approved by bob and carol at")
	})

	// A cancel with a reason, through the form.
	model.Push(
		agenttest.Calls(agenttest.Call("call-2", "execute_command", `{"command":"rm -rf ./old_*","risk_level":"high"}`)),
		agenttest.Text("Understood, I left old_c alone."),
	)
	fake.Say(alice, slackChannel, thread, "and the old ones")
	card2 := threadHas(t, fake, thread, "rm -rf ./old_*")
	id2 := approvalID(t, card2)
	if !strings.Contains(string(card2.Blocks), slack.ActionCancelReason) {
		t.Fatalf("the Cancel button of a card whose cancel needs a reason does not ask for one:\n%s", card2.Blocks)
	}
	fake.Acked(t, fake.Click(alice, slackChannel, card2.TS, slack.ActionCancelReason, id2))
	var form slacktest.AppView
	fake.Wait(t, "the reason form", func() bool {
		for _, v := range fake.Views() {
			if v.Method == "views.open" {
				form = v
				return true
			}
		}
		return false
	})
	if form.TriggerID == "" {
		t.Errorf("the form was opened without the click's trigger: %+v", form)
	}
	fake.Acked(t, fake.Submit(alice, form, map[string]map[string]string{"countersign_reason_block": {"reason": "old_c is still needed"}}))
	threadHas(t, fake, thread, "I left old_c alone")
	fake.Wait(t, "the cancelled card", func() bool {
		m, _ := fake.Message(slackChannel, card2.TS)
		v := slacktest.View(m)
		return strings.Contains(v, "Cancelled by alice") && strings.Contains(v, "old_c is still needed")
	})
	told := false
	for _, r := range model.Requests() {
		for _, m := range r.Messages {
			if m.Role == "tool" && strings.Contains(m.Content, "old_c is still needed") {
				told = true
			}
		}
	}
	if !told {
		t.Error("the model was not told the reason for the cancel")
	}
	if _, err := os.Stat(filepath.Join(dir, "old_c")); err != nil {
		t.Error("a cancelled call ran")
	}

	// An edit that narrows a wildcard delete: the Edit button opens a form
	// holding the operation; the edited call is a new card asked by the
	// editor, and the old one says it was replaced.
	for _, f := range []string{"log_1", "log_2"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	model.Push(
		agenttest.Calls(agenttest.Call("call-3", "execute_command", `{"command":"rm -f ./log_*","risk_level":"high"}`)),
		agenttest.Text("Bob changed the call; I will wait for its card."),
	)
	fake.Say(alice, slackChannel, thread, "and the logs")
	card3 := threadHas(t, fake, thread, "rm -f ./log_*")
	id3 := approvalID(t, card3)
	fake.Acked(t, fake.Click(bob, slackChannel, card3.TS, slack.ActionEdit, id3))
	var edit slacktest.AppView
	fake.Wait(t, "the edit form", func() bool {
		for _, v := range fake.Views() {
			if v.Method == "views.open" && v.View["callback_id"] == "countersign_edit" {
				edit = v
				return true
			}
		}
		return false
	})
	if raw, _ := json.Marshal(edit.View); !strings.Contains(string(raw), `"initial_value":"rm -f ./log_*"`) {
		t.Errorf("the edit form does not hold the operation: %s", raw)
	}
	fake.Acked(t, fake.Submit(bob, edit, map[string]map[string]string{"countersign_edit_block": {"operation": "rm -f ./log_1"}}))
	fake.Wait(t, "the replaced card", func() bool {
		m, _ := fake.Message(slackChannel, card3.TS)
		return strings.Contains(slacktest.View(m), "Replaced by bob's edit")
	})
	var card4 slacktest.Message
	fake.Wait(t, "the edited call's card", func() bool {
		for _, m := range cards(fake, thread) {
			if m.TS != card3.TS && strings.Contains(slacktest.View(m), "rm -f ./log_1") && strings.Contains(string(m.Blocks), slack.ActionApprove) {
				card4 = m
				return true
			}
		}
		return false
	})
	if v := slacktest.View(card4); !strings.Contains(v, "U0BOB") || strings.Contains(v, "log_*") {
		t.Errorf("the edited card is not bob's own call for log_1:\n%s", v)
	}
	id4 := approvalID(t, card4)
	fake.Acked(t, fake.Click(carol, slackChannel, card4.TS, slack.ActionApprove, id4))
	fake.Acked(t, fake.Click(dave, slackChannel, card4.TS, slack.ActionApprove, id4))
	fake.Wait(t, "the edited call's run", func() bool {
		m, _ := fake.Message(slackChannel, card4.TS)
		return strings.Contains(slacktest.View(m), "Ran: approved by")
	})
	if _, err := os.Stat(filepath.Join(dir, "log_1")); err == nil {
		t.Error("the edited call did not run")
	}
	if _, err := os.Stat(filepath.Join(dir, "log_2")); err != nil {
		t.Error("the edit did not narrow the delete: log_2 is gone")
	}
	// The model's next request holds one result for its call, naming the
	// edit and what ran (issue 24).
	threadHas(t, fake, thread, "Bob changed the call; I will wait for its card.")
	reqs := model.Requests()
	var results []string
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == "tool" && m.ToolCallID == "call-3" {
			results = append(results, m.Content)
		}
	}
	if len(results) != 1 || !strings.Contains(results[0], "rm -f ./log_1") || !strings.Contains(results[0], "bob") {
		t.Errorf("the model got %d results for its edited call, want one naming bob's edit and what ran: %q", len(results), results)
	}

	// The requester's own edit, typed: a new card that needs its two
	// approvals, whoever the requester is; nothing runs at once.
	model.Push(
		agenttest.Calls(agenttest.Call("call-4", "execute_command", `{"command":"rm -f ./log_*","risk_level":"low"}`)),
		agenttest.Text("Done with the logs."),
	)
	fake.Say(alice, slackChannel, thread, "and the rest of the logs")
	var card5 slacktest.Message
	fake.Wait(t, "the third card for the logs", func() bool {
		for _, m := range cards(fake, thread) {
			if m.TS != card3.TS && strings.Contains(slacktest.View(m), "rm -f ./log_*") && strings.Contains(string(m.Blocks), slack.ActionApprove) {
				card5 = m
				return true
			}
		}
		return false
	})
	fake.Say(alice, slackChannel, thread, "edit "+approvalID(t, card5)+" rm -f ./log_2")
	var card6 slacktest.Message
	fake.Wait(t, "the requester's edited card", func() bool {
		for _, m := range cards(fake, thread) {
			if strings.Contains(slacktest.View(m), "rm -f ./log_2") && strings.Contains(string(m.Blocks), slack.ActionApprove) {
				card6 = m
				return true
			}
		}
		return false
	})
	if _, err := os.Stat(filepath.Join(dir, "log_2")); err != nil {
		t.Fatal("the requester's edit ran at once")
	}
	if v := slacktest.View(card6); !strings.Contains(v, "Needs two approvals") {
		t.Errorf("the requester's edited card does not need its two approvals:\n%s", v)
	}
}

// TestSlackAppHome: opening the App Home shows the person the cards they
// may decide in the conversations they are in (conversations.members:
// never a private channel they are not in), with the operation, channel
// and a link; it is published again when such a card changes; someone who
// may decide nothing sees an empty inbox.
func TestSlackAppHome(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tmp_a"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fake := slacktest.New(t)
	fake.SetMembers(slackChannel, alice.ID, bob.ID, carol.ID, slacktest.BotUserID)
	fake.SetMembers("G0PRIVATE", alice.ID, slacktest.BotUserID)
	model := agenttest.NewServer(t,
		agenttest.Calls(agenttest.Call("call-1", "execute_command", `{"command":"rm -f ./tmp_a","risk_level":"high"}`)),
		agenttest.Calls(agenttest.Call("call-2", "execute_command", `{"command":"rm -f ./tmp_private","risk_level":"high"}`)),
		agenttest.Text("Removed tmp_a."),
	)
	slackRun(t, dir, `
bot:
  default:
    approvers: ["U0BOB"]
`, fake, model)
	thread := fake.Mention(alice, slackChannel, "", "remove tmp_a")
	card := threadHas(t, fake, thread, "rm -f ./tmp_a")
	id := approvalID(t, card)
	private := fake.Mention(alice, "G0PRIVATE", "", "remove tmp_private")
	var privateCard slacktest.Message
	fake.Wait(t, "the private channel's card", func() bool {
		for _, m := range fake.Thread("G0PRIVATE", private) {
			if m.User == slacktest.BotUserID && strings.Contains(slacktest.View(m), "tmp_private") {
				privateCard = m
				return true
			}
		}
		return false
	})
	privateID := approvalID(t, privateCard)

	var last string
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(last)
		}
	})
	home := func(u slacktest.User, want string) {
		t.Helper()
		fake.Wait(t, u.Name+"'s home saying "+want, func() bool {
			vs := fake.Views()
			for i := len(vs) - 1; i >= 0; i-- {
				if vs[i].Method == "views.publish" && vs[i].UserID == u.ID {
					raw, _ := json.Marshal(vs[i].View)
					last = string(raw)
					return strings.Contains(string(raw), want)
				}
			}
			return false
		})
	}
	fake.Deliver(map[string]any{"type": "app_home_opened", "user": bob.ID, "channel": "D0BOB", "tab": "home", "event_ts": "1700000100.000001"})
	home(bob, "approval `"+id+"`")
	home(bob, "rm -f ./tmp_a")
	home(bob, "#"+slackChannel)
	if v := last; strings.Contains(v, privateID) || strings.Contains(v, "tmp_private") {
		t.Errorf("bob's home shows the card of a private channel he is not in:\n%s", v)
	}
	fake.Deliver(map[string]any{"type": "app_home_opened", "user": carol.ID, "channel": "D0CAROL", "tab": "home", "event_ts": "1700000100.000002"})
	home(carol, "No card waits for your decision.")

	fake.Acked(t, fake.Click(bob, slackChannel, card.TS, slack.ActionApprove, id))
	threadHas(t, fake, thread, "Removed tmp_a.")
	home(bob, "No card waits for your decision.")
}
