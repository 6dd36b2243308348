package bot_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/agent/llm"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/tools"
)

// TestEditBeforeApprove: an approver narrows a wildcard delete before it
// runs: the old card says it was replaced and by whom, the edited call is
// a new card whose requester is the editor (so the editor cannot approve
// it alone), and only what the edit says runs. An edit to something
// absurd is still blocked.
func TestEditBeforeApprove(t *testing.T) {
	w := newWorld(t, setup{files: []string{"tmp_a", "tmp_b"}})
	w.say(t, "!run rm -rf ./tmp_*")
	id := w.screen.waitFor(t, cardRE)[1]
	w.say(t, "/as bob", "edit "+id+" rm -f ./tmp_a")
	w.screen.waitFor(t, `Replaced by bob's edit`)
	id2 := w.screen.waitFor(t, `approval ([a-z2-7]{26}) · execute_command[^┌]*asked by bob[^┌]*rm -f \./tmp_a`)[1]
	if id2 == id {
		t.Fatal("the edit did not make a new card")
	}
	w.say(t, "approve "+id2)
	w.screen.waitFor(t, `\(to bob only\) You cannot approve `+id2+`: You asked for this call`)
	w.say(t, "/as alice", "approve "+id2)
	w.screen.waitFor(t, `Ran: approved by alice`)

	w.say(t, "!run rm -rf ./tmp_*")
	id3 := w.screen.waitFor(t, `approval ([a-z2-7]{26}) · execute_command[^┌]*rm -rf \./tmp_\*[^┌]*waiting`)[1]
	w.say(t, "/as bob", "edit "+id3+" rm -rf /")
	w.screen.waitFor(t, `(?i)block`)
	w.end(t)
	if w.exists("tmp_a") || !w.exists("tmp_b") {
		t.Errorf("tmp_a left: %v, tmp_b left: %v; want only the edited call to have run", w.exists("tmp_a"), w.exists("tmp_b"))
	}
}

// TestEditNeedsItsOwnApprovals is issue 24's "done when": in a channel
// that needs two approvals, the requester's edit and an approver's edit
// of the model's card each give a new card, asked for by the editor, that
// needs its two approvals; nothing runs at once, although the model rated
// its call low. The model's next request holds one result for its call,
// naming the edit, the editor and what ran.
func TestEditNeedsItsOwnApprovals(t *testing.T) {
	for _, editor := range []string{"alice", "bob"} {
		t.Run("edited by "+editor, func(t *testing.T) {
			srv := agenttest.NewServer(t,
				agenttest.Calls(agenttest.Call("call_cleanup", "execute_command", `{"command":"rm -rf ./tmp_*","risk_level":"low"}`)),
				agenttest.Text("Noted."),
			)
			m, err := llm.New(llm.Config{BaseURL: srv.BaseURL(), Model: "test-model", MaxAttempts: 1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			w := newWorld(t, setup{model: m, files: []string{"tmp_a", "tmp_e", "tmp_f"}, botCfg: twoOf("alice", "bob", "carol", "dave")})
			w.say(t, "clean up the temp files")
			id := w.screen.waitFor(t, cardRE)[1]

			w.say(t, "/as "+editor, "edit "+id+" rm -f ./tmp_e ./tmp_f")
			w.screen.waitFor(t, `Replaced by `+editor+`'s edit`)
			id2 := w.screen.waitFor(t, `approval ([a-z2-7]{26}) · execute_command[^┌]*asked by `+editor+`[^┌]*rm -f \./tmp_e \./tmp_f`)[1]
			if !w.exists("tmp_e") {
				t.Fatal("the edited call ran at once")
			}
			w.say(t, "/as carol", "approve "+id2)
			w.screen.waitFor(t, `\(to carol only\) Your approval of `+id2+` is counted`)
			if !w.exists("tmp_e") {
				t.Fatal("the edited call ran after one approval of two")
			}
			w.say(t, "/as dave", "approve "+id2)
			w.screen.waitFor(t, `countersign: Noted\.`)
			w.end(t)

			if w.exists("tmp_e") || w.exists("tmp_f") || !w.exists("tmp_a") {
				t.Errorf("tmp_a %v, tmp_e %v, tmp_f %v left; want only the edited call to have run", w.exists("tmp_a"), w.exists("tmp_e"), w.exists("tmp_f"))
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d model requests, want 2: the turn resumes once", len(reqs))
			}
			var results []agenttest.WireMessage
			for _, msg := range reqs[1].Messages {
				if msg.Role == "tool" {
					results = append(results, msg)
				}
			}
			if len(results) != 1 || results[0].ToolCallID != "call_cleanup" {
				t.Fatalf("the model got %d tool results (%+v), want one for call_cleanup", len(results), results)
			}
			var r tools.Result
			if err := json.Unmarshal([]byte(results[0].Content), &r); err != nil {
				t.Fatal(err)
			}
			if !r.Executed || r.Status != tools.StatusOK || !strings.Contains(r.Message, editor+" edited it") || !strings.Contains(r.Message, "rm -f ./tmp_e ./tmp_f") {
				t.Errorf("the model's result %+v does not say that %s's edit ran", r, editor)
			}
		})
	}
}

// TestEditRefusals: an edit by someone who may not decide is refused
// privately, an edit to something absurd is blocked and changes nothing,
// and an edit of a finished card is refused.
func TestEditRefusals(t *testing.T) {
	w := newWorld(t, setup{files: []string{"tmp_a"}, botCfg: twoOf("bob", "carol")})
	w.say(t, "!run rm -rf ./tmp_*")
	id := w.screen.waitFor(t, cardRE)[1]

	w.say(t, "/as eve", "edit "+id+" rm -f ./tmp_a")
	w.screen.waitFor(t, `\(to eve only\) You cannot edit `+id)

	w.say(t, "/as bob", "edit "+id+" rm -rf /")
	w.screen.waitFor(t, `\(to bob only\) Your edit of `+id+` was refused, so nothing changed and the card still waits as it was: the edited operation is blocked by policy`)
	if a, err := w.store.Get(context.Background(), id); err != nil || a.State != approval.Pending {
		t.Fatalf("after a blocked edit the card is %v (%v), want it waiting", a, err)
	}

	w.say(t, "cancel "+id)
	w.screen.waitFor(t, `cancelled by bob`)
	w.say(t, "edit "+id+" rm -f ./tmp_a")
	w.screen.waitFor(t, `\(to bob only\) Approval `+id+` is already cancelled`)
	w.end(t)
	if !w.exists("tmp_a") {
		t.Error("a refused edit ran")
	}
	if n, err := w.store.CountPending(context.Background(), "", ""); err != nil || n != 0 {
		t.Errorf("%d cards waiting (%v), want none: no refused edit made a card", n, err)
	}
}
