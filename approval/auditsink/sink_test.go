package auditsink

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/countersign/countersign/approval"
)

// t0 is a round time in the past; sinks keep microseconds.
var t0 = time.Date(2025, 3, 1, 9, 0, 0, 123456000, time.UTC)

// sample is a run of events across two channels, two people and two
// approvals, every field set somewhere.
func sample() []approval.Event {
	return []approval.Event{
		{At: t0, Kind: approval.KindAssessment, Actor: "U1", Tool: "execute_command", Operation: "rm -rf ./tmp_*",
			Rule: "shell.rm", Decision: approval.DecisionConfirm, Channel: "C1", ApprovalID: "a1", Detail: "deletes files"},
		{At: t0.Add(time.Second), Kind: approval.KindCard, Actor: "U1", ApprovalID: "a1", Channel: "C1", Detail: "card"},
		{At: t0.Add(2 * time.Second), Kind: approval.KindAssessment, Actor: "U3", Tool: "execute_sql", Operation: "SELECT 1",
			Decision: approval.DecisionAuto, Channel: "C2"},
		{At: t0.Add(3 * time.Second), Kind: approval.KindClick, Actor: "U2", ApprovalID: "a1", Decision: approval.DecisionApprove,
			Outcome: approval.Outcome(approval.Approved), Channel: "C1"},
		{At: t0.Add(4 * time.Second), Kind: approval.KindExecution, Actor: "U2", ApprovalID: "a1", Tool: "execute_command",
			Decision: approval.DecisionApproved, Outcome: "ok", Channel: "C1", DurationMS: 1234, Detail: "ünïcode ✓"},
		{At: t0.Add(5 * time.Second), Kind: approval.KindExpiry, Actor: "system", ApprovalID: "a2", Channel: "C2"},
	}
}

var eventOpts = cmp.Options{cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) }), cmpopts.EquateEmpty()}

// testContract is what every Sink must do: keep each event whole, read
// them back in order through every filter, and refuse writes once closed.
func testContract(t *testing.T, open func(t *testing.T) Sink) {
	ctx := context.Background()
	s := open(t)
	if got, err := s.Read(ctx, Filter{}); err != nil || len(got) != 0 {
		t.Fatalf("Read of a new sink = %v, %v; want none", got, err)
	}
	events := sample()
	for _, e := range events {
		if err := s.Write(ctx, e); err != nil {
			t.Fatalf("Write(%s): %v", e.Kind, err)
		}
	}
	pick := func(i ...int) []approval.Event {
		var out []approval.Event
		for _, j := range i {
			out = append(out, events[j])
		}
		return out
	}
	tests := []struct {
		name string
		f    Filter
		want []approval.Event
	}{
		{"all", Filter{}, events},
		{"last 2", Filter{Last: 2}, pick(4, 5)},
		{"last more than there are", Filter{Last: 100}, events},
		{"since", Filter{Since: t0.Add(3 * time.Second)}, pick(3, 4, 5)},
		{"since, exactly an event's time", Filter{Since: events[4].At}, pick(4, 5)},
		{"channel", Filter{Channel: "C2"}, pick(2, 5)},
		{"user", Filter{Actor: "U2"}, pick(3, 4)},
		{"approval", Filter{ApprovalID: "a1"}, pick(0, 1, 3, 4)},
		{"approval and user", Filter{ApprovalID: "a1", Actor: "U1"}, pick(0, 1)},
		{"approval, last 1", Filter{ApprovalID: "a1", Last: 1}, pick(4)},
		{"nothing matches", Filter{Channel: "C9"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Read(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, eventOpts); diff != "" {
				t.Errorf("Read(%+v) (-want +got):\n%s", tt.f, diff)
			}
		})
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	if err := s.Write(ctx, events[0]); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close = %v, want ErrClosed", err)
	}
}

// collect follows r into a channel until the test ends.
func collect(t *testing.T, r Follower, f Filter) <-chan approval.Event {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan approval.Event, 100)
	done := make(chan error, 1)
	go func() {
		done <- r.Follow(ctx, f, func(e approval.Event) error { ch <- e; return nil })
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Follow: %v", err)
		}
	})
	return ch
}

// expect reads want from ch, in order, each within 10 seconds.
func expect(t *testing.T, ch <-chan approval.Event, want ...approval.Event) {
	t.Helper()
	for i, w := range want {
		select {
		case got := <-ch:
			if diff := cmp.Diff(w, got, eventOpts); diff != "" {
				t.Fatalf("followed event %d (-want +got):\n%s", i, diff)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("followed event %d (%s %s) never came", i, w.Kind, w.Detail)
		}
	}
}

func numbered(i int) approval.Event {
	return approval.Event{At: t0.Add(time.Duration(i) * time.Second), Kind: approval.KindAssessment, Channel: "C1", Detail: fmt.Sprint("event ", i)}
}
