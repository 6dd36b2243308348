package terminal

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/countersign/countersign/adapters"
)

// sampleTurn is the turn the golden files show: two reads that ran
// without a card, one call that waited for approval and ran, the answer.
func sampleTurn(ctx context.Context, turn *adapters.Turn, cardRef string) {
	turn.Status(ctx, adapters.StatusThinking)
	turn.Task(ctx, adapters.Task{ID: "call_1", Title: "df -h", State: adapters.TaskInProgress, Details: "ran without a card: read-only"})
	turn.Task(ctx, adapters.Task{ID: "call_1", Title: "df -h", State: adapters.TaskComplete, Details: "exit code 0 in 9ms"})
	turn.Task(ctx, adapters.Task{ID: "call_2", Title: "du -sh /var/log", State: adapters.TaskInProgress, Details: "ran without a card: read-only"})
	turn.Task(ctx, adapters.Task{ID: "call_2", Title: "du -sh /var/log", State: adapters.TaskComplete, Details: "exit code 0 in 31ms"})
	turn.Text(ctx, "/var/log holds 9.1G; the oldest journal files can go.")
	turn.Status(ctx, adapters.StatusWaiting)
	turn.Task(ctx, adapters.Task{ID: "a1b2c3", Title: "journalctl --vacuum-size=1G", State: adapters.TaskPending, Details: "waiting for approval", CardRef: cardRef})
	// The same update again, as a bot's progress tick might send it.
	turn.Task(ctx, adapters.Task{ID: "a1b2c3", Title: "journalctl --vacuum-size=1G", State: adapters.TaskPending, Details: "waiting for approval", CardRef: cardRef})
	turn.Status(ctx, adapters.StatusRunning("journalctl --vacuum-size=1G"))
	turn.Task(ctx, adapters.Task{ID: "a1b2c3", Title: "journalctl --vacuum-size=1G", State: adapters.TaskInProgress, Details: "approved by bob; running", CardRef: cardRef})
	turn.Task(ctx, adapters.Task{ID: "a1b2c3", Title: "journalctl --vacuum-size=1G", State: adapters.TaskInProgress, Details: "running 2s: Vacuuming done", CardRef: cardRef})
	turn.Task(ctx, adapters.Task{ID: "a1b2c3", Title: "journalctl --vacuum-size=1G", State: adapters.TaskComplete, Details: "exit code 0 in 2.4s", CardRef: cardRef})
	turn.End(ctx, "Freed 8.1G: /var/log now holds 1.0G.")
}

// TestStreamLines: the terminal shows a turn's tasks as lines, one per
// change, and an unchanged task again prints nothing.
func TestStreamLines(t *testing.T) {
	out := &syncBuffer{}
	term := New(strings.NewReader(""), out, Options{User: "alice", Color: "never"})
	var a adapters.Adapter = term
	if _, ok := a.(adapters.TaskStream); !ok {
		t.Fatal("the terminal does not implement adapters.TaskStream")
	}
	ctx := context.Background()
	place := adapters.Place{Channel: Channel, Thread: Thread}
	ref, err := term.Post(ctx, place, adapters.Content{Text: "(the card)"})
	if err != nil {
		t.Fatal(err)
	}
	turn := adapters.StartTurn(term, place, adapters.User{ID: "alice"}, nil)
	if !turn.Streaming() {
		t.Fatal("Streaming() is false for an adapter with TaskStream")
	}
	sampleTurn(ctx, turn, ref)
	golden(t, "stream.golden", out.String())
	if n := strings.Count(out.String(), "waiting for approval"); n != 1 {
		t.Errorf("the pending task printed %d times, want once:\n%s", n, out.String())
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}
