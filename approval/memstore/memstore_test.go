package memstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/approvaltest"
	"github.com/countersign/countersign/approval/memstore"
)

func quiet() *slog.Logger { return slog.New(slog.NewJSONHandler(io.Discard, nil)) }

// shared makes the stores of a contract suite: clients of one namespace
// are the same in-memory store, the way goroutines of one process share
// it.
func shared() func(t *testing.T, ns string) approval.Store {
	var (
		mu     sync.Mutex
		stores = map[string]*memstore.Store{}
	)
	return func(t *testing.T, ns string) approval.Store {
		mu.Lock()
		defer mu.Unlock()
		s, ok := stores[ns]
		if !ok {
			s = memstore.New(memstore.Options{Logger: quiet()})
			stores[ns] = s
		}
		return s
	}
}

// TestContract runs the contract suite; clients of one namespace are the
// same in-memory store, the way goroutines of one process share it.
func TestContract(t *testing.T) {
	approvaltest.Run(t, shared())
}

func TestAuditRing(t *testing.T) {
	ctx := context.Background()
	var buf bytes.Buffer
	s := memstore.New(memstore.Options{Logger: slog.New(slog.NewJSONHandler(&buf, nil)), AuditCap: 3})
	for i := range 5 {
		if err := s.Audit(ctx, approval.Event{At: time.Unix(int64(i), 0), Kind: "card", Detail: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		n    int
		want []string
	}{
		{2, []string{"3", "4"}},
		{3, []string{"2", "3", "4"}},
		{10, []string{"2", "3", "4"}},
	}
	for _, tc := range tests {
		got, err := s.AuditLog(ctx, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		var details []string
		for _, e := range got {
			details = append(details, e.Detail)
		}
		if !slices.Equal(details, tc.want) {
			t.Errorf("AuditLog(%d) with a ring of 3 after 5 events = %v, want %v", tc.n, details, tc.want)
		}
	}
	// Every event went out as one JSON line, message "audit".
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d log lines, want 5:\n%s", len(lines), buf.String())
	}
	var line map[string]any
	if err := json.Unmarshal([]byte(lines[4]), &line); err != nil {
		t.Fatalf("log line is not JSON: %v", err)
	}
	if line["msg"] != "audit" || line["kind"] != "card" || line["detail"] != "4" {
		t.Errorf("log line = %v", line)
	}
}

func TestClosed(t *testing.T) {
	ctx := context.Background()
	s := memstore.New(memstore.Options{Logger: quiet()})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Audit(ctx, approval.Event{Kind: "click"}); !errors.Is(err, memstore.ErrClosed) {
		t.Errorf("Audit after Close = %v, want ErrClosed", err)
	}
	if _, err := s.Get(ctx, approval.NewID()); !errors.Is(err, memstore.ErrClosed) {
		t.Errorf("Get after Close = %v, want ErrClosed", err)
	}
}

// TestConversationClock: expiry follows the injected clock.
func TestConversationClock(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	s := memstore.New(memstore.Options{Logger: quiet(), Now: func() time.Time { return now }})
	if err := s.SaveConversation(ctx, "k", []byte("v"), time.Hour); err != nil {
		t.Fatal(err)
	}
	now = now.Add(59 * time.Minute)
	if got, _ := s.LoadConversation(ctx, "k"); string(got) != "v" {
		t.Errorf("before the TTL: %q", got)
	}
	now = now.Add(time.Minute)
	if got, _ := s.LoadConversation(ctx, "k"); got != nil {
		t.Errorf("at the TTL: %q, want nil", got)
	}
}

// TestDeliveryClock: an event id is remembered for its ttl on the injected
// clock, and the sweep of expired ids keeps the live ones.
func TestDeliveryClock(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	s := memstore.New(memstore.Options{Logger: quiet(), Now: func() time.Time { return now }})
	steps := []struct {
		name    string
		advance time.Duration
		id      string
		ttl     time.Duration
		first   bool
	}{
		{"first delivery", 0, "slack:Ev1", 10 * time.Minute, true},
		{"redelivered within the ttl", 9*time.Minute + 59*time.Second, "slack:Ev1", 10 * time.Minute, false},
		{"a redelivery does not extend the ttl", time.Second, "slack:Ev1", 10 * time.Minute, true},
		{"remembered again from then", time.Minute, "slack:Ev1", time.Hour, false},
		{"a short ttl", 0, "slack:Ev2", time.Second, true},
		{"at its end", time.Second, "slack:Ev2", time.Second, true},
	}
	for _, st := range steps {
		now = now.Add(st.advance)
		got, err := s.FirstDelivery(ctx, st.id, st.ttl)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got != st.first {
			t.Errorf("%s: FirstDelivery(%s) = %v, want %v", st.name, st.id, got, st.first)
		}
	}
	// Enough short-lived ids to trigger sweeps: the long-lived one stays.
	for i := range 3000 {
		now = now.Add(time.Millisecond)
		if first, err := s.FirstDelivery(ctx, fmt.Sprint("slack:EvMany", i), time.Millisecond); err != nil || !first {
			t.Fatalf("event %d: FirstDelivery = %v, %v; want true", i, first, err)
		}
	}
	if got, err := s.FirstDelivery(ctx, "slack:Ev1", time.Hour); err != nil || got {
		t.Errorf("the long-lived id after sweeps: FirstDelivery = %v, %v; want false", got, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FirstDelivery(ctx, "slack:Ev9", time.Hour); !errors.Is(err, memstore.ErrClosed) {
		t.Errorf("FirstDelivery after Close = %v, want ErrClosed", err)
	}
}

// BenchmarkDecideClaim: one decide and one claim of a fresh approval.
func BenchmarkDecideClaim(b *testing.B) {
	approvaltest.BenchDecideClaim(b, memstore.New(memstore.Options{Logger: quiet()}))
}

// TestMemoryPerPending logs what one pending approval costs in the heap,
// for comparison with the Redis store's figure.
func TestMemoryPerPending(t *testing.T) {
	ctx := context.Background()
	s := memstore.New(memstore.Options{Logger: quiet()})
	const n = 2000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		if _, _, err := s.Create(ctx, approvaltest.Sample(fmt.Sprint("call-", i))); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	t.Logf("memory per pending approval: %d bytes", (int64(after.HeapAlloc)-int64(before.HeapAlloc))/n)
	runtime.KeepAlive(s)
}

// BenchmarkPending: !pending and the pending count with 50,000 approvals
// pending in a channel (see approvaltest.BenchPending).
func BenchmarkPending(b *testing.B) {
	approvaltest.BenchPending(b, memstore.New(memstore.Options{Logger: quiet()}), 50000)
}

// BenchmarkFindPending: a typed decision's lookup of the newest card by a
// shortened id among 5,000 pending in its channel.
func BenchmarkFindPending(b *testing.B) {
	approvaltest.BenchFindPending(b, memstore.New(memstore.Options{Logger: quiet()}), 5000)
}
