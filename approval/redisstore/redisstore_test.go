package redisstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/approvaltest"
	"github.com/countersign/countersign/approval/redisstore"
	"github.com/countersign/countersign/internal/testenv"
)

func quiet() *slog.Logger { return slog.New(slog.NewJSONHandler(io.Discard, nil)) }

// newClient returns a new client of the test Redis, closed at the end of
// the test.
func newClient(tb testing.TB) *redis.Client {
	tb.Helper()
	opt, err := redis.ParseURL(testenv.RedisURL(tb))
	if err != nil {
		tb.Fatalf("parse Redis URL: %v", err)
	}
	c := redis.NewClient(opt)
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// prefix returns a key prefix no other test uses, so tests share the
// throwaway server without flushing it.
func prefix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "cst-" + hex.EncodeToString(b)
}

// open returns a store with its own client, closed at the end of the test.
func open(tb testing.TB, p string) *redisstore.Store {
	tb.Helper()
	s := redisstore.New(newClient(tb), redisstore.Options{Prefix: p, Logger: quiet()})
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// TestContract runs the contract suite; every client is its own
// redis.Client and store over the same server, as replicas would be.
func TestContract(t *testing.T) {
	testenv.RedisURL(t)
	base := prefix()
	approvaltest.Run(t, func(t *testing.T, ns string) approval.Store {
		return open(t, base+":"+ns)
	})
}

// TestContractSequential runs the contract suite on the path a Cluster
// client takes, where the unsettled mark and the transition script are two
// round trips (see transition), on the standalone test server.
func TestContractSequential(t *testing.T) {
	testenv.RedisURL(t)
	base := prefix()
	approvaltest.Run(t, func(t *testing.T, ns string) approval.Store {
		s := open(t, base+":"+ns)
		redisstore.SetOrdered(s, false)
		return s
	})
}

func TestTTL(t *testing.T) {
	ctx := context.Background()
	p := prefix()
	s := open(t, p)
	raw := newClient(t)
	a, _, err := s.Create(ctx, approvaltest.Sample("call-1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SaveTurn(ctx, &approval.Turn{ID: "turn-1", Pending: []string{a.ID}, State: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveConversation(ctx, "slack:C1:T1", []byte("[]"), 2*time.Hour); err != nil {
		t.Fatal(err)
	}
	pending := 15*time.Minute + 24*time.Hour
	tests := []struct {
		name string
		key  string
		want time.Duration
	}{
		{"pending record: deadline plus retention", redisstore.RecordKey(s, a.ID), pending},
		{"tool call key: the same", p + ":tc:call-1", pending},
		{"turn", p + ":{t:turn-1}:t", 25 * time.Hour},
		{"conversation", p + ":conv:slack:C1:T1", 2 * time.Hour},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := raw.PTTL(ctx, tc.key).Result()
			if err != nil {
				t.Fatal(err)
			}
			if got > tc.want || got < tc.want-time.Minute {
				t.Errorf("PTTL %s = %v, want about %v", tc.key, got, tc.want)
			}
		})
	}
	if _, err := s.Decide(ctx, a.ID, approval.Approved, approval.User{ID: "U2"}, "", approvaltest.Sample("x").CreatedAt); err != nil {
		t.Fatal(err)
	}
	if got := raw.PTTL(ctx, redisstore.RecordKey(s, a.ID)).Val(); got > 24*time.Hour || got < 23*time.Hour {
		t.Errorf("PTTL of a decided record = %v, want about the 24h retention", got)
	}
}

// TestKeyLayout: every key of one approval carries its shard's hash tag,
// every key of a turn its own, and the only other keys are the documented
// global ones.
func TestKeyLayout(t *testing.T) {
	ctx := context.Background()
	p := prefix()
	s := open(t, p)
	a, _, err := s.Create(ctx, approvaltest.Sample("call-1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SaveTurn(ctx, &approval.Turn{ID: "turn-1", Pending: []string{a.ID}, State: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveConversation(ctx, "slack:C1:T1", []byte("[]"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := s.Audit(ctx, approval.Event{Kind: "card", ApprovalID: a.ID}); err != nil {
		t.Fatal(err)
	}
	long := "slack:" + strings.Repeat("E", 200)
	for _, id := range []string{"slack:Ev1", long} {
		if _, err := s.FirstDelivery(ctx, id, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	keys, err := newClient(t).Keys(ctx, p+":*").Result()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		redisstore.RecordKey(s, a.ID):        true,
		redisstore.PendingIndex(s, a.ID):     true,
		redisstore.IDIndex(s, a.ID):          true,
		redisstore.ChannelCounts(s, a.ID):    true,
		p + ":tc:call-1":                     true,
		p + ":due":                           true,
		p + ":{t:turn-1}:t":                  true,
		p + ":conv:slack:C1:T1":              true,
		p + ":audit":                         true,
		p + ":ev:slack:Ev1":                  true,
		p + ":ev:" + approval.EventKey(long): true,
	}
	for _, k := range keys {
		if !want[k] {
			t.Errorf("unexpected key %s", k)
		}
		delete(want, k)
	}
	for k := range want {
		t.Errorf("missing key %s", k)
	}
	// An event key lives for the ttl given, no longer.
	ttl, err := newClient(t).PTTL(ctx, p+":ev:slack:Ev1").Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl <= 0 || ttl > time.Minute {
		t.Errorf("the event key's TTL is %s, want (0, 1m]", ttl)
	}
}

// TestAuditFailure: when the event cannot be written, Audit says so.
func TestAuditFailure(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		store func(t *testing.T) approval.Store
	}{
		{"closed client", func(t *testing.T) approval.Store {
			s := redisstore.New(newClient(t), redisstore.Options{Prefix: prefix(), Logger: quiet()})
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			return s
		}},
		{"server refuses the write", func(t *testing.T) approval.Store {
			p := prefix()
			// The stream's key holds a string: XADD fails with WRONGTYPE.
			if err := newClient(t).Set(ctx, p+":audit", "not a stream", time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
			return open(t, p)
		}},
		{"unreachable server", func(t *testing.T) approval.Store {
			c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
			s := redisstore.New(c, redisstore.Options{Prefix: prefix(), Logger: quiet()})
			t.Cleanup(func() { _ = s.Close() })
			return s
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.store(t)
			if err := s.Audit(ctx, approval.Event{Kind: "execution", ApprovalID: "a1"}); err == nil {
				t.Errorf("Audit succeeded, want an error")
			}
		})
	}
}

// TestAuditCap: the stream is trimmed to about AuditMaxLen (Redis trims
// whole nodes of the stream, so "about" means within a node's 100 entries)
// and still reads newest last.
func TestAuditCap(t *testing.T) {
	ctx := context.Background()
	p := prefix()
	s := redisstore.New(newClient(t), redisstore.Options{Prefix: p, Logger: quiet(), AuditMaxLen: 10})
	for i := range 500 {
		if err := s.Audit(ctx, approval.Event{Kind: "click", Detail: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := newClient(t).XLen(ctx, p+":audit").Val(); n >= 250 {
		t.Errorf("stream holds %d events after 500 with AuditMaxLen 10, want it trimmed", n)
	}
	got, err := s.AuditLog(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Detail != "497" || got[2].Detail != "499" {
		t.Errorf("AuditLog(3) = %+v, want events 497, 498, 499", got)
	}
}

// TestStaleIndexes: deadline index entries left by a crash between the
// atomic transition and the index update, and channel index entries an
// earlier version left, are skipped and dropped by the readers.
func TestStaleIndexes(t *testing.T) {
	ctx := context.Background()
	p := prefix()
	s := open(t, p)
	raw := newClient(t)
	a, _, err := s.Create(ctx, approvaltest.Sample("call-1"))
	if err != nil {
		t.Fatal(err)
	}
	decided, _, err := s.Create(ctx, approvaltest.Sample("call-2"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Decide(ctx, decided.ID, approval.Cancelled, approval.User{ID: "U2"}, "", decided.CreatedAt); err != nil {
		t.Fatal(err)
	}
	ghost := approval.NewID()
	// As if Decide's index step and a Create's undo had been lost, and an
	// earlier version had indexed them by channel.
	for _, k := range []string{p + ":due", p + ":pending:slack:C1"} {
		raw.ZAdd(ctx, k, redis.Z{Score: 0, Member: decided.ID}, redis.Z{Score: 0, Member: ghost})
	}
	// With limit 1 the stale entries, which sort first, would fill the
	// answer: Due reads on past them.
	due, err := s.Due(ctx, a.ExpiresAt, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 1 || due[0] != a.ID {
		t.Errorf("Due = %v, want just %s", due, a.ID)
	}
	list, err := s.ListPending(ctx, "slack", "C1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != a.ID {
		t.Errorf("ListPending = %d records, want just %s", len(list), a.ID)
	}
	if n := raw.ZCard(ctx, p+":due").Val(); n != 1 {
		t.Errorf("the deadline index holds %d entries after the readers ran, want 1", n)
	}
	if n := raw.Exists(ctx, p+":pending:slack:C1").Val(); n != 0 {
		t.Errorf("the earlier version's channel index is still there after the readers emptied it")
	}
}

// TestCountPendingExact: the count reads the shards' pending indexes, which
// the scripts keep exact: a decided approval leaves them in the same step
// as its decision, stale entries elsewhere do not count, and the entry of
// a record that ran out of time unswept is dropped by the next listing.
func TestCountPendingExact(t *testing.T) {
	ctx := context.Background()
	p := prefix()
	s := open(t, p)
	raw := newClient(t)
	var ids []string
	for i := range 4 {
		a, _, err := s.Create(ctx, approvaltest.Sample(fmt.Sprint("call-", i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
	}
	other := approvaltest.Sample("call-other")
	other.Conversation.Channel = "C2"
	if _, _, err := s.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Decide(ctx, ids[0], approval.Cancelled, approval.User{ID: "U2"}, "", approvaltest.Sample("x").CreatedAt); err != nil {
		t.Fatal(err)
	}
	raw.ZAdd(ctx, p+":due", redis.Z{Score: 0, Member: ids[0]}, redis.Z{Score: 0, Member: approval.NewID()})
	count := func(platform, channel string) int {
		t.Helper()
		n, err := s.CountPending(ctx, platform, channel)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if c1, c2, all := count("slack", "C1"), count("slack", "C2"), count("", ""); c1 != 3 || c2 != 1 || all != 4 {
		t.Errorf("counts C1 %d, C2 %d, all %d; want 3, 1, 4", c1, c2, all)
	}
	if n := count("slack", "C"); n != 0 {
		t.Errorf("channel C, a prefix of C1, counts %d; want 0", n)
	}
	// A record gone with its TTL while pending: counted until a listing
	// of its channel drops its entry.
	if err := raw.Del(ctx, redisstore.RecordKey(s, ids[1])).Err(); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListPending(ctx, "slack", "C1", 0)
	if err != nil || len(list) != 2 {
		t.Fatalf("ListPending = %d, %v; want the 2 still there", len(list), err)
	}
	if c1, all := count("slack", "C1"), count("", ""); c1 != 2 || all != 3 {
		t.Errorf("after the listing: counts C1 %d, all %d; want 2, 3", c1, all)
	}
}

// TestApprovalOfAnEarlierVersion: a pending approval written by a version
// before the shards (its record at {id}, its channel in a channel index)
// is listed, counted, read, decided once and claimed once.
func TestApprovalOfAnEarlierVersion(t *testing.T) {
	ctx := context.Background()
	p := prefix()
	s := open(t, p)
	raw := newClient(t)
	// Write it as that version did, through a throwaway store's record.
	tmp := open(t, prefix())
	a, _, err := tmp.Create(ctx, approvaltest.Sample("call-old"))
	if err != nil {
		t.Fatal(err)
	}
	fields, err := raw.HGetAll(ctx, redisstore.RecordKey(tmp, a.ID)).Result()
	if err != nil {
		t.Fatal(err)
	}
	delete(fields, "i") // that version kept no index member
	old := redisstore.LegacyKey(s, a.ID)
	if err := raw.HSet(ctx, old, fields).Err(); err != nil {
		t.Fatal(err)
	}
	raw.ZAdd(ctx, p+":pending:slack:C1", redis.Z{Score: float64(a.CreatedAt.UnixMilli()), Member: a.ID})
	raw.ZAdd(ctx, p+":due", redis.Z{Score: float64(a.ExpiresAt.UnixMilli()), Member: a.ID})
	fresh, _, err := s.Create(ctx, approvaltest.Sample("call-new"))
	if err != nil {
		t.Fatal(err)
	}

	list, err := s.ListPending(ctx, "slack", "C1", 0)
	if err != nil || len(list) != 2 {
		t.Fatalf("ListPending = %d, %v; want the old and the new", len(list), err)
	}
	if n, err := s.CountPending(ctx, "slack", "C1"); err != nil || n != 2 {
		t.Errorf("CountPending = %d, %v; want 2", n, err)
	}
	if got, err := s.Get(ctx, a.ID); err != nil || got.State != approval.Pending {
		t.Fatalf("Get of the old record = %+v, %v", got, err)
	}
	at := a.CreatedAt.Add(time.Minute)
	for i, want := range []bool{true, false} {
		d, err := s.Decide(ctx, a.ID, approval.Approved, approval.User{ID: fmt.Sprint("U", i)}, "", at)
		if err != nil || d.Won != want {
			t.Fatalf("Decide %d of the old record = %+v, %v; want won %v", i, d, err, want)
		}
	}
	for i, want := range []bool{true, false} {
		if _, ok, err := s.Claim(ctx, a.ID, at); err != nil || ok != want {
			t.Fatalf("Claim %d of the old record = %v, %v; want %v", i, ok, err, want)
		}
	}
	if err := s.SetMessageRef(ctx, a.ID, "m1"); err != nil {
		t.Errorf("SetMessageRef of the old record: %v", err)
	}
	if err := s.Heartbeat(ctx, a.ID, at.Add(time.Second)); err != nil {
		t.Errorf("Heartbeat of the old record: %v", err)
	}
	list, err = s.ListPending(ctx, "slack", "C1", 0)
	if err != nil || len(list) != 1 || list[0].ID != fresh.ID {
		t.Errorf("ListPending after the decision = %d, %v; want the new one alone", len(list), err)
	}
	if n, err := s.CountPending(ctx, "slack", "C1"); err != nil || n != 1 {
		t.Errorf("CountPending after the decision = %d, %v; want 1", n, err)
	}
	if n := raw.Exists(ctx, redisstore.RecordKey(s, a.ID)).Val(); n != 0 {
		t.Errorf("a record was made in the shards for the old approval")
	}
}

// TestToolCallHeldByGoneRecord: a tool call id whose record is gone is
// refused, and what Create wrote on the way is removed.
func TestToolCallHeldByGoneRecord(t *testing.T) {
	ctx := context.Background()
	p := prefix()
	s := open(t, p)
	raw := newClient(t)
	if err := raw.Set(ctx, p+":tc:call-1", approval.NewID(), time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	if a, created, err := s.Create(ctx, approvaltest.Sample("call-1")); !errors.Is(err, approval.ErrConflict) {
		t.Errorf("Create = %v, %v, %v; want ErrConflict", a, created, err)
	}
	keys, err := raw.Keys(ctx, p+":*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 {
		t.Errorf("keys after the refused Create = %v, want only the tool call key", keys)
	}
}

// TestMemoryPerPending measures what one pending approval costs in Redis:
// MEMORY USAGE of its record and tool call key, plus its share of the two
// indexes. Target: under 4 KiB.
func TestMemoryPerPending(t *testing.T) {
	ctx := context.Background()
	p := prefix()
	s := open(t, p)
	raw := newClient(t)
	const n = 200
	var own int64
	for i := range n {
		a, _, err := s.Create(ctx, approvaltest.Sample(fmt.Sprint("call-", i)))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{redisstore.RecordKey(s, a.ID), p + ":tc:" + a.ToolCallID} {
			own += raw.MemoryUsage(ctx, k).Val()
		}
	}
	index := raw.MemoryUsage(ctx, p+":due").Val()
	shardIndexes, err := raw.Keys(ctx, p+":{s*}:pending").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range shardIndexes {
		index += raw.MemoryUsage(ctx, k).Val()
	}
	per := (own + index) / n
	t.Logf("memory per pending approval: %d bytes (record and tool call key %d, index share %d)", per, own/n, index/n)
	if per >= 4096 {
		t.Errorf("memory per pending approval %d bytes, target under 4096", per)
	}
}

func BenchmarkDecideClaim(b *testing.B) {
	s := redisstore.New(newClient(b), redisstore.Options{Prefix: prefix(), Logger: quiet()})
	approvaltest.BenchDecideClaim(b, s)
}

// BenchmarkApproveClaim: one winning vote and a claim of a fresh approval,
// the path of every Approve click, beside BenchmarkDecideClaim.
func BenchmarkApproveClaim(b *testing.B) {
	s := redisstore.New(newClient(b), redisstore.Options{Prefix: prefix(), Logger: quiet()})
	approvaltest.BenchApproveClaim(b, s)
}

// TestStaleUnsettledEntries: cs:unsettled entries left by transitions that
// never happened (a decider that died before its script, a record gone)
// are dropped once old, never listed, and never hide a real one behind
// the limit; a recent entry of a pending record stays, since its decide
// may be in flight.
func TestStaleUnsettledEntries(t *testing.T) {
	ctx := context.Background()
	p := prefix()
	s := open(t, p)
	raw := newClient(t)
	key := p + ":unsettled"
	old, _, err := s.Create(ctx, approvaltest.Sample("call-old"))
	if err != nil {
		t.Fatal(err)
	}
	fresh, _, err := s.Create(ctx, approvaltest.Sample("call-fresh"))
	if err != nil {
		t.Fatal(err)
	}
	decided, _, err := s.Create(ctx, approvaltest.Sample("call-decided"))
	if err != nil {
		t.Fatal(err)
	}
	at := decided.CreatedAt.Add(time.Minute)
	if _, err := s.Decide(ctx, decided.ID, approval.Cancelled, approval.User{ID: "U2"}, "", at); err != nil {
		t.Fatal(err)
	}
	ghost := approval.NewID()
	raw.ZAdd(ctx, key,
		redis.Z{Score: 0, Member: old.ID},
		redis.Z{Score: 0, Member: ghost},
		redis.Z{Score: float64(at.Add(time.Minute).UnixMilli()), Member: fresh.ID},
	)
	// With limit 1 the stale entries, which sort first, would fill the
	// answer: Unsettled reads on past them.
	got, err := s.Unsettled(ctx, at, at.Add(time.Hour), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != decided.ID {
		t.Errorf("Unsettled = %d records, want just %s", len(got), decided.ID)
	}
	members, err := raw.ZRange(ctx, key, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{decided.ID: true, fresh.ID: true}
	if len(members) != len(want) || !want[members[0]] || !want[members[1]] {
		t.Errorf("%s holds %v after the reader ran, want the decided and the fresh pending entries", key, members)
	}
}

// TestTurnSavedByAnEarlierVersion: a turn kept the earlier way (the order
// as field o, the pending ids in a set of their own) is still read and
// resolved: exactly one Resolve, the one that empties it, reports last.
func TestTurnSavedByAnEarlierVersion(t *testing.T) {
	ctx := context.Background()
	p := prefix()
	s := open(t, p)
	raw := newClient(t)
	tag := p + ":{t:turn-old}"
	if err := raw.HSet(ctx, tag+":t", "r", `{"id":"turn-old","conversation":{"platform":"slack","channel":"C1"},"state":{"x":1},"created_at":"2025-03-01T09:00:00Z"}`,
		"o", `["a1","a2","a3"]`).Err(); err != nil {
		t.Fatal(err)
	}
	if err := raw.SAdd(ctx, tag+":p", "a1", "a2", "a3").Err(); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetTurn(ctx, "turn-old")
	if err != nil || strings.Join(got.Pending, ",") != "a1,a2,a3" || string(got.State) != `{"x":1}` {
		t.Fatalf("GetTurn = %+v, %v; want a1,a2,a3 pending", got, err)
	}
	var lasts []string
	for _, id := range []string{"a2", "a2", "a1", "a3", "a3"} {
		last, err := s.Resolve(ctx, "turn-old", id)
		if err != nil {
			t.Fatalf("Resolve %s: %v", id, err)
		}
		if last {
			lasts = append(lasts, id)
		}
	}
	if strings.Join(lasts, ",") != "a3" {
		t.Errorf("Resolve reported last for %v, want only a3", lasts)
	}
	if got, err := s.GetTurn(ctx, "turn-old"); err != nil || len(got.Pending) != 0 {
		t.Errorf("GetTurn after the last Resolve = %+v, %v; want none pending", got, err)
	}
}

// BenchmarkPending: !pending and the pending count with 50,000 approvals
// pending in a channel (see approvaltest.BenchPending).
func BenchmarkPending(b *testing.B) {
	approvaltest.BenchPending(b, open(b, prefix()), 50000)
}

// BenchmarkFindPending: a typed decision's lookup of the newest card by a
// shortened id among 5,000 pending in its channel.
func BenchmarkFindPending(b *testing.B) {
	approvaltest.BenchFindPending(b, open(b, prefix()), 5000)
}
