package approvaltest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/approval"
)

// inbox is s's inbox: part of every approval.Store.
func inbox(t *testing.T, s approval.Store) approval.Inbox {
	t.Helper()
	return s
}

func entryIDs(es []approval.InboxEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

// testInbox: entries of a live owner are nobody else's; those of an owner
// silent since the cutoff, or gone, go to one taker, oldest first, with
// their data; answered entries are never taken.
func testInbox(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	a, b := inbox(t, open()), inbox(t, open())
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	entry := func(id string, at time.Time) approval.InboxEntry {
		return approval.InboxEntry{ID: id, Data: []byte(`{"text":"!run ` + id + `"}`), AcceptedAt: at}
	}
	if err := a.Accept(ctx, "dead", t0, entry("slack:E2", t0.Add(2*time.Second)), entry("slack:E1", t0.Add(time.Second)), entry("slack:E3", t0.Add(3*time.Second))); err != nil {
		t.Fatalf("Accept: %v", err)
	}
	if err := a.Accept(ctx, "live", t0.Add(time.Minute), entry("slack:L1", t0.Add(4*time.Second))); err != nil {
		t.Fatalf("Accept: %v", err)
	}
	if err := a.Answered(ctx, "slack:E3", "slack:missing"); err != nil {
		t.Fatalf("Answered: %v", err)
	}
	// The owner "dead" has not beaten since t0; "live" beat at t0+1m.
	got, err := b.TakeOver(ctx, "taker", t0.Add(30*time.Second), t0.Add(2*time.Minute), 0)
	if err != nil {
		t.Fatalf("TakeOver: %v", err)
	}
	if ids := entryIDs(got); !slices.Equal(ids, []string{"slack:E1", "slack:E2"}) {
		t.Fatalf("TakeOver gave %q, want the dead owner's unanswered entries oldest first [slack:E1 slack:E2]", ids)
	}
	if string(got[0].Data) != `{"text":"!run slack:E1"}` || !got[0].AcceptedAt.Equal(t0.Add(time.Second)) {
		t.Errorf("entry = %+v; data or time lost", got[0])
	}
	again, err := a.TakeOver(ctx, "second", t0.Add(30*time.Second), t0.Add(2*time.Minute), 0)
	if err != nil {
		t.Fatalf("TakeOver: %v", err)
	}
	if len(again) != 0 {
		t.Errorf("a second taker got %q: the taker that holds them is alive", entryIDs(again))
	}
	// The live owner leaves: its entry is anyone's at once.
	if err := a.Leave(ctx, "live"); err != nil {
		t.Fatalf("Leave: %v", err)
	}
	left, err := b.TakeOver(ctx, "second", t0.Add(30*time.Second), t0.Add(2*time.Minute), 0)
	if err != nil {
		t.Fatalf("TakeOver: %v", err)
	}
	if ids := entryIDs(left); !slices.Equal(ids, []string{"slack:L1"}) {
		t.Errorf("after Leave, TakeOver gave %q, want [slack:L1]", ids)
	}
	// The taker beats; then dies: its entries move on once it is silent.
	if err := b.Beat(ctx, "taker", t0.Add(3*time.Minute)); err != nil {
		t.Fatalf("Beat: %v", err)
	}
	if got, _ := a.TakeOver(ctx, "third", t0.Add(90*time.Second), t0.Add(4*time.Minute), 0); len(got) != 0 {
		t.Errorf("entries of a taker that beat after the cutoff moved: %q", entryIDs(got))
	}
	moved, err := a.TakeOver(ctx, "third", t0.Add(3*time.Minute), t0.Add(5*time.Minute), 1)
	if err != nil {
		t.Fatalf("TakeOver: %v", err)
	}
	if ids := entryIDs(moved); !slices.Equal(ids, []string{"slack:E1"}) {
		t.Errorf("limit 1: TakeOver gave %q, want [slack:E1]", ids)
	}
	if err := a.Accept(ctx, "", t0); err == nil {
		t.Error("Accept with no owner: no error")
	}
}

// testInboxRace: many takers at once; every entry of a dead owner goes to
// exactly one of them.
func testInboxRace(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	first := inbox(t, open())
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	const n, takers = 120, 8
	entries := make([]approval.InboxEntry, n)
	for i := range entries {
		entries[i] = approval.InboxEntry{ID: fmt.Sprint("slack:E", i), Data: []byte("x"), AcceptedAt: t0}
	}
	if err := first.Accept(ctx, "dead", t0, entries...); err != nil {
		t.Fatalf("Accept: %v", err)
	}
	var mu sync.Mutex
	count := map[string]int{}
	var wg sync.WaitGroup
	for i := range takers {
		in := inbox(t, open())
		wg.Go(func() {
			for {
				got, err := in.TakeOver(ctx, fmt.Sprint("taker", i), t0.Add(time.Second), t0.Add(time.Minute), 7)
				if err != nil {
					t.Errorf("TakeOver: %v", err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, e := range got {
					count[e.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(count) != n {
		t.Errorf("%d entries taken, want %d", len(count), n)
	}
	for id, c := range count {
		if c != 1 {
			t.Errorf("%s taken %d times", id, c)
		}
	}
}
