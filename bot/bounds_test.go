package bot

import (
	"fmt"
	"testing"
)

// TestCardsBounded: a replica that never sees the final state of the
// cards it showed (another replica ran them) keeps at most cardsMax.
func TestCardsBounded(t *testing.T) {
	var cs cards
	cs.init()
	for i := range cardsMax + 500 {
		cs.shown(fmt.Sprint("id", i))
	}
	if n := cs.len(); n != cardsMax {
		t.Errorf("%d cards remembered, want %d", n, cardsMax)
	}
	if cs.shown("idx") == nil || cs.shown("id0") == cs.shown("id1") {
		t.Error("cards mixed up")
	}
}
