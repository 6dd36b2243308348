package approvaltest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/approval"
)

// createMany creates n pending approvals in channel of slack, a
// millisecond apart from t0 (the last is the newest), a few goroutines at
// a time, and returns their ids in creation order.
func createMany(tb testing.TB, s approval.Store, channel string, n int) []string {
	tb.Helper()
	ctx := context.Background()
	ids := make([]string, n)
	tag := randHex(4)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				a := Sample(fmt.Sprint("many-", tag, "-", i))
				a.Conversation.Channel = channel
				a.CreatedAt = t0.Add(time.Duration(i) * time.Millisecond)
				a.ExpiresAt = a.CreatedAt.Add(time.Hour)
				got, _, err := s.Create(ctx, a)
				if err != nil {
					errs <- err
					return
				}
				ids[i] = got.ID
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		tb.Fatalf("Create: %v", err)
	}
	return ids
}

// prefixOf returns the shortest prefix of id (at least 4 characters) that
// starts no other id of ids.
func prefixOf(id string, ids []string) string {
	for n := 4; n < len(id); n++ {
		p := id[:n]
		alone := true
		for _, o := range ids {
			if o != id && len(o) >= n && o[:n] == p {
				alone = false
				break
			}
		}
		if alone {
			return p
		}
	}
	return id
}

// testFindPending: a typed decision's shortened id finds its card through
// the store's index, whatever the number pending (the newest of 5,000),
// only in its own channel, only while pending; a prefix several ids share
// finds them all, in id order, up to the limit.
func testFindPending(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	s, other := open(), open()
	ids := createMany(t, s, "C-many", 5000)
	find := func(channel, prefix string, limit int) []string {
		t.Helper()
		got, err := other.FindPending(ctx, "slack", channel, prefix, limit)
		if err != nil {
			t.Fatalf("FindPending(%s, %q): %v", channel, prefix, err)
		}
		out := make([]string, len(got))
		for i, a := range got {
			if a.State != approval.Pending {
				t.Errorf("FindPending returned %s in state %s", a.ID, a.State)
			}
			out[i] = a.ID
		}
		return out
	}
	newest := ids[len(ids)-1]
	short := prefixOf(newest, ids)
	tests := []struct {
		name    string
		channel string
		prefix  string
		limit   int
		want    []string
	}{
		{"the newest of 5,000 by its shortest prefix", "C-many", short, 2, []string{newest}},
		{"the oldest by its full id", "C-many", ids[0], 2, []string{ids[0]}},
		{"another channel's card is not found", "C-other", short, 2, nil},
		{"no card starts so", "C-many", "zzzzzzzz", 2, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := find(tc.channel, tc.prefix, tc.limit); !slices.Equal(got, tc.want) {
				t.Errorf("FindPending(%q, %q) = %v, want %v", tc.channel, tc.prefix, got, tc.want)
			}
		})
	}
	t.Run("a shared prefix finds several, in id order, up to the limit", func(t *testing.T) {
		// Ids are random: the first character alone starts many of 5,000.
		var want []string
		for _, id := range ids {
			if id[0] == newest[0] {
				want = append(want, id)
			}
		}
		slices.Sort(want)
		if got := find("C-many", newest[:1], 3); !slices.Equal(got, want[:3]) {
			t.Errorf("FindPending(%q, limit 3) = %v, want %v", newest[:1], got, want[:3])
		}
	})
	t.Run("a decided card is not found", func(t *testing.T) {
		if d, err := s.Decide(ctx, newest, approval.Cancelled, alice, "", t0.Add(time.Minute)); err != nil || !d.Won {
			t.Fatalf("Decide = %+v, %v", d, err)
		}
		if got := find("C-many", newest, 2); len(got) != 0 {
			t.Errorf("FindPending of a cancelled card = %v, want none", got)
		}
	})
	t.Run("an empty prefix is refused", func(t *testing.T) {
		if _, err := other.FindPending(ctx, "slack", "C-many", "", 2); !errors.Is(err, approval.ErrInvalid) {
			t.Errorf("FindPending with no prefix = %v, want ErrInvalid", err)
		}
	})
}

// testPendingChannels: the channels with a pending card are listed, on any
// client of the store, until their last card is decided; a channel of
// another platform is not.
func testPendingChannels(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	s, other := open(), open()
	channels := func(platform string) []string {
		t.Helper()
		got, err := other.PendingChannels(ctx, platform)
		if err != nil {
			t.Fatalf("PendingChannels(%s): %v", platform, err)
		}
		return got
	}
	if got := channels("slack"); len(got) != 0 {
		t.Fatalf("PendingChannels of an empty store = %v, want none", got)
	}
	mk := func(platform, channel, tcid string) *approval.Approval {
		a := Sample(tcid)
		a.Conversation.Platform, a.Conversation.Channel = platform, channel
		return create(t, s, a)
	}
	b1 := mk("slack", "C-b", "pc-1")
	b2 := mk("slack", "C-b", "pc-2")
	a1 := mk("slack", "C-a", "pc-3")
	d1 := mk("discord", "D-1", "pc-4")
	if got, want := channels("slack"), []string{"C-a", "C-b"}; !slices.Equal(got, want) {
		t.Errorf("PendingChannels(slack) = %v, want %v", got, want)
	}
	if got, want := channels("discord"), []string{"D-1"}; !slices.Equal(got, want) {
		t.Errorf("PendingChannels(discord) = %v, want %v", got, want)
	}
	at := t0.Add(time.Minute)
	if _, err := s.Decide(ctx, b1.ID, approval.Cancelled, alice, "", at); err != nil {
		t.Fatalf("Decide: %v", err)
	}
	if got, want := channels("slack"), []string{"C-a", "C-b"}; !slices.Equal(got, want) {
		t.Errorf("after one of C-b's two cards was decided: PendingChannels = %v, want %v", got, want)
	}
	if r, err := s.Approve(ctx, b2.ID, approval.Vote{By: bob, At: at, Need: 1}); err != nil || !r.Won {
		t.Fatalf("Approve = %+v, %v", r, err)
	}
	if _, err := s.Decide(ctx, a1.ID, approval.Expired, alice, "", at); err != nil {
		t.Fatalf("Decide: %v", err)
	}
	if got := channels("slack"); len(got) != 0 {
		t.Errorf("after every slack card was decided: PendingChannels = %v, want none", got)
	}
	if got, want := channels("discord"), []string{d1.Conversation.Channel}; !slices.Equal(got, want) {
		t.Errorf("PendingChannels(discord) = %v, want %v", got, want)
	}
}

// BenchFindPending measures a typed decision's lookup of the newest card
// by a shortened id among n pending in its channel: through the id index
// (FindPending), and as the lookup did before it, by listing the oldest
// pending cards of the channel (at most the store's cap) and matching each.
func BenchFindPending(b *testing.B, s approval.Store, n int) {
	ids := createMany(b, s, "bench-find-"+randHex(4), n)
	ctx := context.Background()
	newest := ids[len(ids)-1]
	short := prefixOf(newest, ids)
	a, err := s.Get(ctx, newest)
	if err != nil {
		b.Fatalf("Get: %v", err)
	}
	ch := a.Conversation.Channel
	b.Run("index", func(b *testing.B) {
		for b.Loop() {
			got, err := s.FindPending(ctx, "slack", ch, short, 2)
			if err != nil || len(got) != 1 || got[0].ID != newest {
				b.Fatalf("FindPending = %d, %v; want the newest", len(got), err)
			}
		}
	})
	b.Run("list-and-match", func(b *testing.B) {
		found := 0
		for b.Loop() {
			list, err := s.ListPending(ctx, "slack", ch, 0)
			if err != nil {
				b.Fatalf("ListPending: %v", err)
			}
			for _, a := range list {
				if strings.HasPrefix(a.ID, short) {
					found++
				}
			}
		}
		b.ReportMetric(float64(found)/float64(b.N), "found/op")
	})
}
