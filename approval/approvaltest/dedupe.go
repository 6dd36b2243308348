package approvaltest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/approval"
)

// deduper is s's record of event ids: part of every approval.Store.
func deduper(t *testing.T, s approval.Store) approval.Deduper {
	t.Helper()
	return s
}

// testDedupe: the first delivery of an event id is first, on any client;
// every later one within the TTL is not; ids are opaque and long ones kept
// apart.
func testDedupe(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	a, b := deduper(t, open()), deduper(t, open())
	long := strings.Repeat("x", 300)
	steps := []struct {
		name  string
		d     approval.Deduper
		id    string
		first bool
	}{
		{"first delivery", a, "slack:Ev1", true},
		{"redelivery to the same client", a, "slack:Ev1", false},
		{"redelivery to another client", b, "slack:Ev1", false},
		{"another event", b, "slack:Ev2", true},
		{"same id on another platform", a, "discord:Ev1", true},
		{"a long id", a, long + "1", true},
		{"a long id that differs at the end", a, long + "2", true},
		{"the long id again", b, long + "1", false},
		{"an id that looks like a hash", a, "#" + long[:43], true},
		{"odd bytes", a, "slack:\x00 \n{ev}:*", true},
		{"odd bytes again", b, "slack:\x00 \n{ev}:*", false},
	}
	for _, st := range steps {
		got, err := st.d.FirstDelivery(ctx, st.id, time.Hour)
		if err != nil {
			t.Fatalf("%s: FirstDelivery: %v", st.name, err)
		}
		if got != st.first {
			t.Errorf("%s: FirstDelivery(%.20q) = %v, want %v", st.name, st.id, got, st.first)
		}
	}

	invalid := []struct {
		name string
		id   string
		ttl  time.Duration
	}{
		{"no id", "", time.Hour},
		{"zero ttl", "slack:Ev3", 0},
		{"negative ttl", "slack:Ev3", -time.Second},
	}
	for _, tc := range invalid {
		if got, err := a.FirstDelivery(ctx, tc.id, tc.ttl); !errors.Is(err, approval.ErrInvalid) || got {
			t.Errorf("%s: FirstDelivery = %v, %v; want false, ErrInvalid", tc.name, got, err)
		}
	}
	if got, err := a.FirstDelivery(ctx, "slack:Ev3", time.Hour); err != nil || !got {
		t.Errorf("FirstDelivery after invalid calls = %v, %v; want true: they must record nothing", got, err)
	}

	// The TTL is real time here (the Redis server's clock); a store with
	// an injected clock tests its expiry with it as well.
	short := "slack:EvShort-" + randHex(4)
	if got, err := a.FirstDelivery(ctx, short, 100*time.Millisecond); err != nil || !got {
		t.Fatalf("FirstDelivery with a short ttl = %v, %v; want true", got, err)
	}
	time.Sleep(250 * time.Millisecond)
	if got, err := b.FirstDelivery(ctx, short, time.Hour); err != nil || !got {
		t.Errorf("FirstDelivery after the ttl = %v, %v; want true: the id is forgotten", got, err)
	}
	if got, err := a.FirstDelivery(ctx, "slack:Ev1", time.Hour); err != nil || got {
		t.Errorf("FirstDelivery of a long-lived id = %v, %v; want false", got, err)
	}
}

// testDedupeRace: 32 clients get the same event at once, round after
// round; exactly one of them is first each time.
func testDedupeRace(t *testing.T, open func() approval.Store) {
	const (
		clients = 32
		rounds  = 20
	)
	ds := make([]approval.Deduper, clients)
	for i := range ds {
		ds[i] = deduper(t, open())
	}
	ctx := context.Background()
	for round := range rounds {
		id := fmt.Sprint("slack:EvRace-", round)
		var (
			start  = make(chan struct{})
			wg     sync.WaitGroup
			mu     sync.Mutex
			firsts int
			errs   []error
		)
		for i := range clients {
			wg.Go(func() {
				<-start
				first, err := ds[i].FirstDelivery(ctx, id, time.Hour)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
				}
				if first {
					firsts++
				}
			})
		}
		close(start)
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if firsts != 1 {
			t.Fatalf("round %d: %d of %d clients were told the event is new, want exactly 1", round, firsts, clients)
		}
	}
}
