package adapters_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
)

// TestTurnWithoutCapabilities: an adapter with neither capability keeps
// today's behaviour: every call reports "not shown", so the bot posts its
// messages, and nothing reaches the adapter.
func TestTurnWithoutCapabilities(t *testing.T) {
	f := adaptertest.NewFake("plain")
	ctx := context.Background()
	turn := adapters.StartTurn(f, adapters.Place{Channel: "c", Thread: "t"}, adapters.User{ID: "u"}, nil)
	if turn.Streaming() {
		t.Error("Streaming() = true for an adapter without TaskStream")
	}
	if turn.Status(ctx, adapters.StatusThinking) {
		t.Error("Status reported shown for an adapter without TurnStatus")
	}
	if turn.Task(ctx, adapters.Task{ID: "x", Title: "df -h", State: adapters.TaskComplete}) {
		t.Error("Task reported shown for an adapter without TaskStream")
	}
	if turn.Text(ctx, "words") {
		t.Error("Text reported shown for an adapter without TaskStream")
	}
	if turn.End(ctx, "the answer") {
		t.Error("End reported the answer shown: the bot would not post it")
	}
}

// TestTaskStateValid: only Slack's four task states are states.
func TestTaskStateValid(t *testing.T) {
	for _, s := range []adapters.TaskState{adapters.TaskPending, adapters.TaskInProgress, adapters.TaskComplete, adapters.TaskError} {
		if !s.Valid() {
			t.Errorf("%q not valid", s)
		}
	}
	for _, s := range []adapters.TaskState{"", "done", "running"} {
		if s.Valid() {
			t.Errorf("%q valid", s)
		}
	}
}

// statusless is an adapter whose status is off, as slack.status: false.
type statusless struct {
	*adaptertest.Fake
	err error
}

func (s statusless) SetStatus(context.Context, adapters.Place, string) error { return s.err }

func (s statusless) Extras() adapters.Extras { return adapters.Extras{Status: s} }

// TestStatusOffIsNotWarned: a status the adapter knows it cannot show
// (ErrNoStatus: switched off, refused and already logged, no thread) is
// not a warning in every turn; any other failure is.
func TestStatusOffIsNotWarned(t *testing.T) {
	for _, c := range []struct {
		err  error
		warn bool
	}{
		{fmt.Errorf("slack thread status: %w: switched off", adapters.ErrNoStatus), false},
		{errors.New("slack: connection reset"), true},
	} {
		var logs bytes.Buffer
		log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		turn := adapters.StartTurn(statusless{adaptertest.NewFake("s"), c.err}, adapters.Place{Channel: "c", Thread: "t"}, adapters.User{ID: "u"}, log)
		if turn.Status(context.Background(), adapters.StatusThinking) {
			t.Errorf("%v: Status reported shown", c.err)
		}
		if got := strings.Contains(logs.String(), "level=WARN"); got != c.warn {
			t.Errorf("%v: warned = %v, want %v; log:\n%s", c.err, got, c.warn, logs.String())
		}
	}
}
