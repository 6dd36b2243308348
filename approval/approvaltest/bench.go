package approvaltest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/countersign/countersign/approval"
)

// BenchDecideClaim measures Decide(Approved) plus Claim of a fresh pending
// approval, the path a click takes before a run. The approvals are created
// outside the timer. It reports the median and the 99th percentile of one
// decide+claim as median-µs and p99-µs.
func BenchDecideClaim(b *testing.B, s approval.Store) {
	ctx := context.Background()
	ids := make([]string, 0, b.N)
	prefix := randHex(4)
	for i := range b.N {
		a := Sample(fmt.Sprint("bench-", prefix, "-", i))
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
		d, err := s.Decide(ctx, ids[i], approval.Approved, alice, "", at)
		if err != nil || !d.Won {
			b.Fatalf("Decide = %+v, %v", d, err)
		}
		if _, ok, err := s.Claim(ctx, ids[i], at); err != nil || !ok {
			b.Fatalf("Claim = %v, %v", ok, err)
		}
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds())/1e3, "median-µs")
	b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds())/1e3, "p99-µs")
}
