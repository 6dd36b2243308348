package bot_test

import (
	"testing"
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
