package shelltool

import (
	"testing"

	"github.com/countersign/countersign/internal/proctest"
)

// New changes nothing process-wide; FenceProcess makes the process a
// subreaper and not dumpable, or only a subreaper with keep_dumpable. Each
// case runs in a fresh test process, since both flags last for the life of
// the process.
func TestProcessFencesAreOptIn(t *testing.T) {
	step := proctest.Child(t, "new", "fence", "fence keep dumpable")
	if step == "" {
		return
	}
	wantDumpable, wantSubreaper := true, false
	switch step {
	case "new":
		newTool(t, nil)
	case "fence":
		if err := FenceProcess(false); err != nil {
			t.Fatal(err)
		}
		wantDumpable, wantSubreaper = false, true
	case "fence keep dumpable":
		if err := FenceProcess(true); err != nil {
			t.Fatal(err)
		}
		wantSubreaper = true
	default:
		t.Fatalf("unknown case %q", step)
	}
	if got := proctest.Dumpable(t); got != wantDumpable {
		t.Errorf("%s: dumpable %v, want %v", step, got, wantDumpable)
	}
	if got := proctest.Subreaper(t); got != wantSubreaper {
		t.Errorf("%s: child subreaper %v, want %v", step, got, wantSubreaper)
	}
}
