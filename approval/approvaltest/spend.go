package approvaltest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/internal/testenv"
)

// RunSpend runs the contract of approval.Spender against the stores open
// gives (clients of one ns share their data).
func RunSpend(t *testing.T, open Opener) {
	t.Run("Totals", func(t *testing.T) { testSpendTotals(t, func() approval.Store { return open(t, "spend-totals") }) })
	t.Run("Race", func(t *testing.T) { testSpendRace(t, func() approval.Store { return open(t, "spend-race") }) })
	t.Run("Expiry", func(t *testing.T) { testSpendExpiry(t, func() approval.Store { return open(t, "spend-expiry") }) })
	t.Run("Invalid", func(t *testing.T) { testSpendInvalid(t, func() approval.Store { return open(t, "spend-invalid") }) })
}

// testSpendTotals: adds sum up by key, on every client; keys are kept
// apart, odd bytes and braces included; a key never spent reads zero.
func testSpendTotals(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	a, b := open(), open()
	expiry := time.Now().Add(time.Hour)
	day := approval.ChannelDayKey("slack", "C{1}", time.Date(2026, 5, 1, 23, 59, 0, 0, time.UTC))
	conv := approval.ConversationKey(approval.Conversation{Platform: "slack", Channel: "C{1}", Thread: "t \x00\n"})
	steps := []struct {
		name   string
		s      approval.Store
		key    string
		tokens int64
		want   int64
	}{
		{"first add", a, day, 120, 120},
		{"second add on another client", b, day, 30, 150},
		{"another key", b, conv, 7, 7},
		{"the first key again", a, day, 1, 151},
	}
	for _, st := range steps {
		got, err := st.s.AddSpend(ctx, st.key, st.tokens, expiry)
		if err != nil {
			t.Fatalf("%s: AddSpend: %v", st.name, err)
		}
		if got != st.want {
			t.Errorf("%s: AddSpend(%q, %d) = %d, want %d", st.name, st.key, st.tokens, got, st.want)
		}
	}
	got, err := b.Spend(ctx, conv, "never", day)
	if err != nil {
		t.Fatalf("Spend: %v", err)
	}
	if len(got) != 3 {
		t.Fatalf("Spend of 3 keys returned %d totals", len(got))
	}
	for i, want := range []int64{7, 0, 151} {
		if got[i].Tokens != want {
			t.Errorf("Spend total %d = %d, want %d", i, got[i].Tokens, want)
		}
	}
	if !got[1].Until.IsZero() {
		t.Errorf("a key never spent has an expiry: %v", got[1].Until)
	}
	for _, i := range []int{0, 2} {
		if d := got[i].Until.Sub(expiry); d < -5*time.Second || d > 5*time.Second {
			t.Errorf("total %d is kept until %v, want about %v", i, got[i].Until, expiry)
		}
	}
	if none, err := a.Spend(ctx); err != nil || len(none) != 0 {
		t.Errorf("Spend of no keys = %v, %v; want nothing", none, err)
	}
}

// testSpendRace: 16 clients add to one key at once, 20 times each; every
// add is counted once, and the last total any of them saw is the sum.
func testSpendRace(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	const clients, adds = 16, 20
	expiry := time.Now().Add(time.Hour)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		seen = map[int64]bool{}
		errs []error
	)
	for i := range clients {
		s := open()
		wg.Go(func() {
			for range adds {
				n, err := s.AddSpend(ctx, "race", int64(i+1), expiry)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else if seen[n] {
					errs = append(errs, errors.New("two adds saw the same total"))
				}
				seen[n] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	want := int64(adds * clients * (clients + 1) / 2)
	got, err := open().Spend(ctx, "race")
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Tokens != want || !seen[want] {
		t.Errorf("total after the race = %d (seen by an add: %v), want %d", got[0].Tokens, seen[want], want)
	}
}

// testSpendExpiry: a total is forgotten at its expiry, and the next add
// starts afresh; a later add's expiry wins.
func testSpendExpiry(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	s := open()
	if _, err := s.AddSpend(ctx, "short", 50, time.Now().Add(200*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddSpend(ctx, "extended", 5, time.Now().Add(200*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddSpend(ctx, "extended", 5, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, func() bool {
		got, err := s.Spend(ctx, "short")
		return err == nil && got[0].Tokens == 0
	}, "the total past its expiry to be forgotten")
	got, err := s.Spend(ctx, "extended")
	if err != nil || got[0].Tokens != 10 {
		t.Errorf("a total whose last add extended it = %v, %v; want 10 tokens", got, err)
	}
	if n, err := s.AddSpend(ctx, "short", 3, time.Now().Add(time.Hour)); err != nil || n != 3 {
		t.Errorf("an add after the expiry = %d, %v; want a fresh total of 3", n, err)
	}
}

// testSpendInvalid: an add with no key, fewer than one token or no
// expiry is refused with ErrInvalid and records nothing.
func testSpendInvalid(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	s := open()
	later := time.Now().Add(time.Hour)
	for _, tc := range []struct {
		name   string
		key    string
		tokens int64
		expiry time.Time
	}{
		{"no key", "", 1, later}, {"no tokens", "k", 0, later}, {"negative", "k", -5, later}, {"no expiry", "k", 1, time.Time{}},
	} {
		if _, err := s.AddSpend(ctx, tc.key, tc.tokens, tc.expiry); !errors.Is(err, approval.ErrInvalid) {
			t.Errorf("%s: AddSpend error = %v, want ErrInvalid", tc.name, err)
		}
	}
	if got, err := s.Spend(ctx, "k"); err != nil || got[0].Tokens != 0 {
		t.Errorf("after invalid adds Spend(k) = %v, %v; want 0", got, err)
	}
}
