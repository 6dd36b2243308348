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

// BenchDecideClaim measures Decide(Approved) plus Claim of a fresh pending
// approval, the path a click takes before a run. The approvals are created
// outside the timer. It reports the median and the 99th percentile of one
// decide+claim as median-µs and p99-µs.
func BenchDecideClaim(b *testing.B, s approval.Store) {
	benchEach(b, s, "bench", func(ctx context.Context, id string, at time.Time) {
		d, err := s.Decide(ctx, id, approval.Approved, alice, "", at)
		if err != nil || !d.Won {
			b.Fatalf("Decide = %+v, %v", d, err)
		}
		if _, ok, err := s.Claim(ctx, id, at); err != nil || !ok {
			b.Fatalf("Claim = %v, %v", ok, err)
		}
	})
}

// benchEach creates b.N fresh pending approvals outside the timer, then
// times step on each, one after another, and reports the median and the
// 99th percentile of one step as median-µs and p99-µs.
func benchEach(b *testing.B, s approval.Store, name string, step func(ctx context.Context, id string, at time.Time)) {
	ctx := context.Background()
	ids := make([]string, 0, b.N)
	prefix := randHex(4)
	for i := range b.N {
		a := Sample(fmt.Sprint(name, "-", prefix, "-", i))
		a.Conversation.Channel = "bench-" + prefix
		got, _, err := s.Create(ctx, a)
		if err != nil {
			b.Fatalf("Create: %v", err)
		}
		ids = append(ids, got.ID)
	}
	at := t0.Add(time.Minute)
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		step(ctx, ids[i], at)
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds())/1e3, "median-µs")
	b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds())/1e3, "p99-µs")
}

// BenchPending measures what !pending asks of a store with n approvals
// pending in one channel (and as many again in another, so that a count of
// everything is not one channel's): ListPending plus CountPending of the
// channel, as the bot's !pending does, and CountPending of everything, as
// the metrics do. The approvals are created once, outside the timers, by
// a few goroutines at a time.
func BenchPending(b *testing.B, s approval.Store, n int) {
	ctx := context.Background()
	prefix := randHex(4)
	channels := []string{"bench-" + prefix, "other-" + prefix}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < 2*n; i += 8 {
				a := Sample(fmt.Sprint("pending-", prefix, "-", i))
				a.Conversation.Channel = channels[i%2]
				a.CreatedAt = t0.Add(time.Duration(i) * time.Millisecond)
				a.ExpiresAt = a.CreatedAt.Add(time.Hour)
				if _, _, err := s.Create(ctx, a); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatalf("Create: %v", err)
	}
	b.Run("pending-command", func(b *testing.B) {
		for b.Loop() {
			list, err := s.ListPending(ctx, "slack", channels[0], 25)
			if err != nil || len(list) == 0 || list[0].CreatedAt != t0 {
				b.Fatalf("ListPending = %d, %v; want the oldest first", len(list), err)
			}
			if c, err := s.CountPending(ctx, "slack", channels[0]); err != nil || c != n {
				b.Fatalf("CountPending = %d, %v; want %d", c, err, n)
			}
		}
	})
	b.Run("count-all", func(b *testing.B) {
		for b.Loop() {
			if c, err := s.CountPending(ctx, "", ""); err != nil || c < 2*n {
				b.Fatalf("CountPending of everything = %d, %v; want at least %d", c, err, 2*n)
			}
		}
	})
}

// BenchApproveClaim measures one winning Approve (a card that needs one
// approval) plus Claim of a fresh pending approval: the path every Approve
// click takes before a run, to set beside BenchDecideClaim. It reports the
// median and the 99th percentile as median-µs and p99-µs.
func BenchApproveClaim(b *testing.B, s approval.Store) {
	benchEach(b, s, "bench-approve", func(ctx context.Context, id string, at time.Time) {
		if r, err := s.Approve(ctx, id, vote("bob", at, 1)); err != nil || !r.Won {
			b.Fatalf("Approve = %+v, %v", r, err)
		}
		if _, ok, err := s.Claim(ctx, id, at); err != nil || !ok {
			b.Fatalf("Claim = %v, %v", ok, err)
		}
	})
}
