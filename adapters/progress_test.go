package adapters_test

import (
	"context"
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
