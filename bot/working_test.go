package bot_test

import (
	"strings"
	"testing"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
	"github.com/countersign/countersign/agent/agenttest"
)

// TestAnswerTakesTheWorkingLinesPlace: a turn slow enough to show
// "Working on it…" answers in that line's place: the turn's replier, handed
// to the agent explicitly, carries its words there, and the line is not
// closed as "(finished)" next to a second message.
func TestAnswerTakesTheWorkingLinesPlace(t *testing.T) {
	hold := make(chan struct{}) // the answer waits until the working line is up
	model := agenttest.NewServer(t, agenttest.Reply{Content: "About half of the disk is used.", Hold: hold})
	r := startRig(t, rigOptions{platforms: []string{"slack"}, model: model})
	f := r.fakes["slack"]
	place := adapters.Place{Channel: "C1", Thread: "T1"}
	f.Say(t, adaptertest.Alice, place, "how full is the disk?")
	waitFor(t, "the working line", func() bool { return strings.Contains(flattenAll(f), "Working on it") })
	close(hold)
	waitFor(t, "the answer", func() bool { return strings.Contains(flattenAll(f), "About half") })
	r.end(t)
	all := flattenAll(f)
	if n := strings.Count(all, "About half"); n != 1 {
		t.Errorf("the answer is shown %d times, want once:\n%s", n, all)
	}
	if strings.Contains(all, "Working on it") || strings.Contains(all, "(finished)") {
		t.Errorf("the working line stayed, or was closed beside the answer:\n%s", all)
	}
}
