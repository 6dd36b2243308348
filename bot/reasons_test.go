package bot_test

import (
	"testing"

	"github.com/countersign/countersign/approval/rules"
	"github.com/countersign/countersign/bot"
)

// TestReasonsInTheTerminal: with reason_required [approve, cancel], a
// typed approve or cancel without a reason is refused privately and says
// how to give one; with one, the reason reaches the card (and the audit
// log).
func TestReasonsInTheTerminal(t *testing.T) {
	cfg := bot.Config{Default: bot.Policy{Settings: rules.Settings{ReasonRequired: []rules.Decision{rules.Approve, rules.Cancel}}}}
	w := newWorld(t, setup{botCfg: cfg, files: []string{"tmp_a", "tmp_b"}})
	w.say(t, "!run rm -rf ./tmp_a")
	id := w.screen.waitFor(t, cardRE)[1]
	w.say(t, "/as bob", "approve "+id)
	w.screen.waitFor(t, `\(to bob only\) A reason is required to approve `+id+`: type `+"`approve "+id+` <reason>`)
	if !w.exists("tmp_a") {
		t.Fatal("an approval without the required reason ran the call")
	}
	w.say(t, "approve "+id+" the folder is scratch space")
	w.screen.waitFor(t, `approved by bob \(the folder is scratch space\) at `)

	w.say(t, "/as alice", "!run rm -rf ./tmp_b")
	id2 := w.screen.waitFor(t, `approval ([a-z2-7]{26}) · execute_command[^┌]*rm -rf \./tmp_b`)[1]
	w.say(t, "cancel "+id2)
	w.screen.waitFor(t, `\(to alice only\) A reason is required to cancel `+id2)
	w.say(t, "cancel "+id2+" wrong folder")
	w.screen.waitFor(t, `cancelled by alice at [0-9:]+ UTC: wrong folder`)
	w.end(t)
	if w.exists("tmp_a") || !w.exists("tmp_b") {
		t.Errorf("tmp_a left: %v, tmp_b left: %v; want only the approved call to have run", w.exists("tmp_a"), w.exists("tmp_b"))
	}
	if got := w.audit(t, "refused_click", id); len(got) != 1 {
		t.Errorf("refused clicks of %s audited: %+v", id, got)
	}
}
