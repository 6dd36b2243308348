package agent_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/approvaltest"
)

// TestSweepDrainsAStorm: 10,000 approvals falling due at once are all
// expired, each exactly once, within a bounded number of sweeps: in one
// sweep when its time budget allows, and in at most one sweep per batch of
// 100 when the budget is spent after every batch, each sweep but the last
// reporting that more is due.
func TestSweepDrainsAStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 10,000 approvals")
	}
	const n, batch = 10000, 100
	tests := []struct {
		name      string
		budget    time.Duration
		maxSweeps int
		backends  []backend
	}{
		{"budget for all", time.Hour, 1, backends},
		// How sweeps split the work does not depend on the store.
		{"budget for one batch", time.Nanosecond, n/batch + 1, []backend{memoryBackend}},
	}
	for _, tc := range tests {
		for _, b := range tc.backends {
			t.Run(b.name+"/"+tc.name, func(t *testing.T) {
				defer agent.SetSweepBudget(tc.budget)()
				e := newEnv(t, b)
				s := e.open()
				ids := createDue(t, s, e.clock.Now(), n)
				e.clock.Advance(2 * time.Minute)
				a := e.agent(s)
				start := time.Now()
				sweeps := 0
				for more := true; more; {
					if sweeps == tc.maxSweeps {
						t.Fatalf("still more due after %d sweeps", sweeps)
					}
					var err error
					more, err = a.SweepMore(ctx)
					if err != nil {
						t.Fatalf("sweep %d: %v", sweeps+1, err)
					}
					sweeps++
				}
				took := time.Since(start)
				if left, err := s.Due(ctx, e.clock.Now(), 0); err != nil || len(left) != 0 {
					t.Errorf("after %d sweeps Due = %d ids, %v; want none", sweeps, len(left), err)
				}
				for _, id := range ids {
					if rec, err := s.Get(ctx, id); err != nil || rec.State != approval.Expired {
						t.Fatalf("Get(%s) = %v, %v; want it expired", id, rec, err)
					}
				}
				updated := map[string]int{}
				for _, u := range e.sink.Updates() {
					updated[u.Approval.ID]++
				}
				for _, id := range ids {
					if updated[id] != 1 {
						t.Fatalf("approval %s: %d card updates, want 1", id, updated[id])
					}
				}
				t.Logf("%s: %d approvals expired in %d sweeps, %v (%v per approval)", b.name, n, sweeps, took.Round(time.Millisecond), (took / n).Round(time.Microsecond))
			})
		}
	}
}

// createDue creates n pending approvals in one channel that expire a
// minute after now, without turns, and returns their ids.
func createDue(t *testing.T, s approval.Store, now time.Time, n int) []string {
	t.Helper()
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				a := approvaltest.Sample(fmt.Sprint("storm-", i))
				a.TurnID = ""
				a.Conversation = conv
				a.CreatedAt, a.ExpiresAt = now, now.Add(time.Minute)
				got, _, err := s.Create(context.Background(), a)
				if err != nil {
					errs <- err
					return
				}
				ids[i] = got.ID
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Create: %v", err)
	}
	return ids
}
