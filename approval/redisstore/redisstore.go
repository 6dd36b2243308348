// Package redisstore is the approval store on Redis, shared by any number
// of bot replicas. It speaks to Redis through redis.UniversalClient, so a
// standalone server, Sentinel and Cluster all work.
//
// # Key layout
//
// With the default prefix "cs":
//
//	cs:{s<n>}:a:<id>       hash: one approval (see scripts.go for fields);
//	                       n, 0 to 63, is the CRC-32 of the id modulo 64
//	cs:{s<n>}:pending      sorted set: the pending approvals of shard n, all
//	                       of score 0, each member its channel, creation and
//	                       id (pendingMember), so one channel's entries are
//	                       one lexical range, oldest first
//	cs:{s<n>}:ids          sorted set: the pending approvals of shard n, of
//	                       score 0, each member its channel prefix and id,
//	                       so the pending ids of one channel that start
//	                       with a prefix are one lexical range (FindPending)
//	cs:{s<n>}:chans        hash: "platform:channel" → how many of its
//	                       approvals in shard n are pending (PendingChannels)
//	cs:tc:<tool call id>   string: the approval id, for idempotent Create
//	cs:due                 sorted set: pending ids by deadline (unix ms)
//	cs:{t:<turn id>}:t     hash: a suspended turn and its approvals
//	                       still pending (see scripts.go; turns saved by
//	                       earlier versions also have a set, cs:{t:…}:p)
//	cs:unsettled           sorted set: decided ids not yet settled, by last
//	                       life (decision, claim, heartbeat, finish; unix ms)
//	cs:conv:<key>          string: a conversation, with its TTL
//	cs:ev:<platform>:<id>  string: a chat event seen, with its TTL (ids
//	                       longer than 128 bytes are hashed: approval.EventKey)
//	cs:audit               stream: the audit log, capped
//
// Versions before the shards kept a record at cs:{<id>}:a and indexed it
// in cs:pending:<platform>:<channel>; such records are still read, decided
// and run (every read by id falls back to the old key), listed and counted
// from the old index, which empties as they are decided or expire.
//
// # Atomicity and Cluster
//
// Every transition is one Lua script over the keys of one hash tag (one
// shard of approvals, or one turn), so it is atomic and runs in one slot
// of a cluster. A shard's pending index shares its records' tag, so the
// scripts that make and decide an approval add and remove its entry in
// the same step: CountPending is one ZLEXCOUNT per shard and ListPending
// reads the oldest entries of each shard, merged, then only the records it
// returns, however many are pending. The 64 shards spread the approvals
// over 64 slots of a cluster. The global indexes (cs:tc, cs:due) live in
// other slots and are never touched inside a script: they are updated in a
// separate step, before or after the atomic transition, and their readers
// are tolerant. Create writes the record and its pending entry, then the
// deadline index, then claims the tool call id with SET NX (a loser
// deletes what it wrote and returns the winner's record). Decide removes
// the id from the deadline index after the transition. Due re-checks each
// record's state and drops stale entries, so a crash between the steps
// leaves at most an index entry that the next reader removes; and since
// expiring goes through Decide, a stale Due entry can never expire a
// decided approval. A pending record that outlives its TTL unswept (no
// replica ran for a day) leaves a pending entry, counted until a listing
// of its channel finds the record gone and drops it.
//
// cs:unsettled is written before each transition (Decide, Claim, Finish;
// on one server in the same pipeline as the script, one round trip, see
// transition), so that a process dying right after one always leaves an entry for
// Unsettled to find; an entry written by a transition that then did not
// happen is harmless: Unsettled re-reads each record, lists only decided
// ones not yet settled (Settle marks the record itself, field z, so an
// entry a losing Claim writes back after the settle is not listed), and
// drops entries of missing or settled records and of records still
// pending long after the entry was written. An entry's score only says which
// records are worth reading: a record is judged by its own last life
// (field l), written by the script of each transition and Heartbeat,
// because another replica may claim or finish it between the read of the
// index and the read of the record. Likewise a stale entry is removed only
// while its score is still the one read (one script over cs:unsettled
// alone), so that a Decide touching it meanwhile keeps its entry.
//
// Records live until their deadline plus Options.Retention; every
// transition extends that to now plus Retention. Turns live for
// Options.TurnTTL. All TTLs are relative to the Redis server's clock, so
// callers may pass in times from an injected clock.
package redisstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/tools"
)

var (
	_ approval.Store   = (*Store)(nil)
	_ approval.Deduper = (*Store)(nil)
)

// Options configures a Store. The zero value is ready to use.
type Options struct {
	// Prefix starts every key. Default "cs".
	Prefix string
	// Logger receives one structured line per audit event. Default: JSON on
	// standard error (approval.NewAuditLogger).
	Logger *slog.Logger
	// Retention is how long a record is kept after its deadline, and after
	// each transition. Default 24h.
	Retention time.Duration
	// TurnTTL is how long a suspended turn is kept. Default 25h.
	TurnTTL time.Duration
	// AuditMaxLen caps the audit stream (approximately, MAXLEN ~).
	// Default 100000.
	AuditMaxLen int64
	// ListLimit caps how many approvals ListPending returns. Default 1000.
	ListLimit int64
	// Now is the clock for a Create without CreatedAt and an Audit event
	// without At. Default time.Now.
	Now func() time.Time
}

// Store is the Redis approval store.
type Store struct {
	c         redis.UniversalClient
	prefix    string
	log       *slog.Logger
	retention time.Duration
	turnTTL   time.Duration
	auditMax  int64
	listLimit int64
	now       func() time.Time
	// ordered: every command goes to one server over one connection, so
	// a pipeline's commands run in the order they were queued (see
	// transition).
	ordered bool
}

// New returns a store over c. The store owns c: Close closes it.
func New(c redis.UniversalClient, opts Options) *Store {
	s := &Store{
		c:         c,
		prefix:    opts.Prefix,
		log:       opts.Logger,
		retention: opts.Retention,
		turnTTL:   opts.TurnTTL,
		auditMax:  opts.AuditMaxLen,
		listLimit: opts.ListLimit,
		now:       opts.Now,
	}
	_, s.ordered = c.(*redis.Client)
	if s.prefix == "" {
		s.prefix = "cs"
	}
	if s.log == nil {
		s.log = approval.NewAuditLogger()
	}
	if s.retention <= 0 {
		s.retention = 24 * time.Hour
	}
	if s.turnTTL <= 0 {
		s.turnTTL = 25 * time.Hour
	}
	if s.auditMax <= 0 {
		s.auditMax = 100000
	}
	if s.listLimit <= 0 {
		s.listLimit = 1000
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

func (s *Store) toolCallKey(tc string) string {
	return s.prefix + ":tc:" + tc
}
func (s *Store) dueKey() string { return s.prefix + ":due" }
func (s *Store) turnKeys(id string) []string {
	tag := s.prefix + ":{t:" + id + "}"
	return []string{tag + ":t", tag + ":p"}
}
func (s *Store) unsettledKey() string      { return s.prefix + ":unsettled" }
func (s *Store) convKey(key string) string { return s.prefix + ":conv:" + key }
func (s *Store) auditKey() string          { return s.prefix + ":audit" }
func (s *Store) eventKey(id string) string { return s.prefix + ":ev:" + approval.EventKey(id) }

func ms(d time.Duration) int64 { return d.Milliseconds() }

// timeText is how times are kept in the record's fields.
func timeText(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Create stores a new pending approval, idempotent on ToolCallID.
func (s *Store) Create(ctx context.Context, a *approval.Approval) (*approval.Approval, bool, error) {
	c, err := approval.PrepareCreate(a, s.now())
	if err != nil {
		return nil, false, err
	}
	if old, err := s.byToolCall(ctx, c.ToolCallID); err == nil {
		return old, false, nil
	} else if !errors.Is(err, approval.ErrNotFound) {
		return nil, false, err
	}

	imm := *c
	imm.MessageRef = ""
	// The state lives in field s: r leaves it out.
	r, err := json.Marshal(struct {
		*approval.Approval
		State approval.State `json:"state,omitempty"`
	}{Approval: &imm})
	if err != nil {
		return nil, false, fmt.Errorf("encode approval %s: %w", c.ID, err)
	}
	ttl := c.ExpiresAt.Sub(c.CreatedAt) + s.retention
	keys := s.keys(c.ID)
	member := pendingMember(c.Conversation.Platform, c.Conversation.Channel, c.CreatedAt, c.ID)
	pl, ch := c.Conversation.Platform, c.Conversation.Channel
	ok, err := createScript.Run(ctx, s.c, keys, r, string(approval.Pending), c.ExpiresAt.UnixMilli(), ms(ttl), member,
		idMember(pl, ch, c.ID), channelField(pl, ch)).Int()
	if err != nil {
		return nil, false, fmt.Errorf("create approval %s: %w", c.ID, err)
	}
	if ok == 0 {
		return nil, false, fmt.Errorf("create approval %s: %w: id already in use", c.ID, approval.ErrConflict)
	}
	undo := func() {
		// A fresh context: the caller's may be what failed.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = dropScript.Run(ctx, s.c, keys, member).Err()
		_ = s.c.ZRem(ctx, s.dueKey(), c.ID).Err()
	}
	if err := s.c.ZAdd(ctx, s.dueKey(), redis.Z{Score: float64(c.ExpiresAt.UnixMilli()), Member: c.ID}).Err(); err != nil {
		undo()
		return nil, false, fmt.Errorf("index approval %s: %w", c.ID, err)
	}
	won, err := s.c.SetNX(ctx, s.toolCallKey(c.ToolCallID), c.ID, ttl).Result()
	if err != nil {
		undo()
		return nil, false, fmt.Errorf("claim tool call %s: %w", c.ToolCallID, err)
	}
	if !won {
		undo()
		old, err := s.byToolCall(ctx, c.ToolCallID)
		if errors.Is(err, approval.ErrNotFound) {
			// The tool call id is held but its record is gone (evicted, or
			// its creator died mid-way): refuse rather than guess.
			return nil, false, fmt.Errorf("create approval for tool call %s: %w: the id is taken by a record that is gone", c.ToolCallID, approval.ErrConflict)
		}
		if err != nil {
			return nil, false, err
		}
		return old, false, nil
	}
	out := *c
	return &out, true, nil
}

// byToolCall returns the approval created for tool call tc.
func (s *Store) byToolCall(ctx context.Context, tc string) (*approval.Approval, error) {
	id, err := s.c.Get(ctx, s.toolCallKey(tc)).Result()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("tool call %s: %w", tc, approval.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("look up tool call %s: %w", tc, err)
	}
	return s.Get(ctx, id)
}

// Get returns the record id, or an error wrapping approval.ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (*approval.Approval, error) {
	m, err := s.c.HGetAll(ctx, s.keys(id)[0]).Result()
	if err == nil && len(m) == 0 {
		m, err = s.c.HGetAll(ctx, s.legacyKey(id)).Result()
	}
	if err != nil {
		return nil, fmt.Errorf("get approval %s: %w", id, err)
	}
	return decode(id, m)
}

// lifeOf returns the record's last life (field l, unix ms), or ok=false
// when it holds none (a record still pending, or one written before the
// field existed).
func lifeOf(m map[string]string) (ms int64, ok bool) {
	v, err := strconv.ParseInt(m["l"], 10, 64)
	return v, err == nil
}

// decode builds an approval from its hash fields.
func decode(id string, m map[string]string) (*approval.Approval, error) {
	if len(m) == 0 || m["r"] == "" {
		return nil, fmt.Errorf("get approval %s: %w", id, approval.ErrNotFound)
	}
	var a approval.Approval
	if err := json.Unmarshal([]byte(m["r"]), &a); err != nil {
		return nil, fmt.Errorf("decode approval %s: %w", id, err)
	}
	a.State = approval.State(m["s"])
	a.Reason, a.MessageRef = m["n"], m["m"]
	if v := m["p"]; v != "" {
		a.Preview = new(tools.Preview)
		if err := json.Unmarshal([]byte(v), a.Preview); err != nil {
			return nil, fmt.Errorf("decode approval %s preview: %w", id, err)
		}
	}
	if v := m["b"]; v != "" {
		a.DecidedBy = new(approval.User)
		if err := json.Unmarshal([]byte(v), a.DecidedBy); err != nil {
			return nil, fmt.Errorf("decode approval %s decided_by: %w", id, err)
		}
	}
	if v := m["x"]; v != "" {
		a.Result = new(tools.Result)
		if err := json.Unmarshal([]byte(v), a.Result); err != nil {
			return nil, fmt.Errorf("decode approval %s result: %w", id, err)
		}
	}
	for _, f := range []struct {
		field string
		to    *time.Time
	}{{"d", &a.DecidedAt}, {"sa", &a.StartedAt}, {"ea", &a.EndedAt}} {
		if v := m[f.field]; v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return nil, fmt.Errorf("decode approval %s time %s: %w", id, f.field, err)
			}
			*f.to = t
		}
	}
	return &a, nil
}

// decodeReply reads a script's {flag, HGETALL} reply.
func decodeReply(id string, v any) (*approval.Approval, bool, error) {
	a, _, ok, err := decodeFields(id, v)
	return a, ok, err
}

// decodeFields reads a script's {flag, HGETALL} reply and also returns
// the raw fields.
func decodeFields(id string, v any) (*approval.Approval, map[string]string, bool, error) {
	arr, ok := v.([]any)
	if !ok || len(arr) != 2 {
		return nil, nil, false, fmt.Errorf("approval %s: unexpected script reply %T", id, v)
	}
	flag, _ := arr[0].(int64)
	fields, _ := arr[1].([]any)
	m := make(map[string]string, len(fields)/2)
	for i := 0; i+1 < len(fields); i += 2 {
		k, _ := fields[i].(string)
		val, _ := fields[i+1].(string)
		m[k] = val
	}
	a, err := decode(id, m)
	if err != nil {
		return nil, nil, false, err
	}
	return a, m, flag == 1, nil
}

// run runs a transition script on the record id.
func (s *Store) run(ctx context.Context, what string, sc *redis.Script, id string, args ...any) (*approval.Approval, bool, error) {
	v, err := s.eval(ctx, sc, id, args...)
	if errors.Is(err, redis.Nil) {
		return nil, false, fmt.Errorf("%s approval %s: %w", what, id, approval.ErrNotFound)
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s approval %s: %w", what, id, err)
	}
	return decodeReply(id, v)
}

// Decide moves a pending approval to Approved, Cancelled or Expired, in one
// Lua script; see approval.DecidedState for late approvals. A decided approval
// is returned with Won=false and its decider.
func (s *Store) Decide(ctx context.Context, id string, to approval.State, by approval.User, reason string, at time.Time) (approval.DecideResult, error) {
	if err := approval.CheckDecide(to); err != nil {
		return approval.DecideResult{}, fmt.Errorf("decide approval %s: %w", id, err)
	}
	b, err := json.Marshal(by)
	if err != nil {
		return approval.DecideResult{}, fmt.Errorf("encode decider of %s: %w", id, err)
	}
	a, won, err := s.transition(ctx, "decide", decideScript, id, at, false, string(to), b, timeText(at), reason, at.UnixMilli(), ms(s.retention))
	if err != nil {
		return approval.DecideResult{}, err
	}
	// Out of the deadline index (the script took it out of the pending
	// one), whoever won: the winner may have died before doing it. A
	// failure here leaves an entry Due skips and drops. A record of an
	// earlier version also leaves that version's channel index.
	_, _ = s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRem(ctx, s.dueKey(), id)
		p.ZRem(ctx, s.legacyPendingKey(a.Conversation.Platform, a.Conversation.Channel), id)
		return nil
	})
	return approval.DecideResult{Approval: a, Won: won}, nil
}

// Claim moves Approved to Running for exactly one claimant, in one Lua
// script; the others get ok=false and the record.
func (s *Store) Claim(ctx context.Context, id string, at time.Time) (*approval.Approval, bool, error) {
	return s.transition(ctx, "claim", claimScript, id, at, false, timeText(at), ms(s.retention), at.UnixMilli())
}

// Finish moves Running to Done or Failed with the result; any other state
// is ErrConflict.
func (s *Store) Finish(ctx context.Context, id string, to approval.State, result tools.Result, at time.Time) (*approval.Approval, error) {
	if err := approval.CheckFinish(to); err != nil {
		return nil, fmt.Errorf("finish approval %s: %w", id, err)
	}
	res, err := json.Marshal(&result)
	if err != nil {
		return nil, fmt.Errorf("encode result of %s: %w", id, err)
	}
	a, ok, err := s.transition(ctx, "finish", finishScript, id, at, true, string(to), timeText(at), res, ms(s.retention), at.UnixMilli())
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("finish approval %s in state %s: %w", id, a.State, approval.ErrConflict)
	}
	return a, nil
}

// FinishAbandoned moves Running to Done or Failed only if the run's last
// life (field l) is at or before cutoff, checked and changed in one Lua
// script; anything else is ErrConflict.
func (s *Store) FinishAbandoned(ctx context.Context, id string, to approval.State, result tools.Result, at, cutoff time.Time) (*approval.Approval, error) {
	if err := approval.CheckFinish(to); err != nil {
		return nil, fmt.Errorf("finish abandoned approval %s: %w", id, err)
	}
	res, err := json.Marshal(&result)
	if err != nil {
		return nil, fmt.Errorf("encode result of %s: %w", id, err)
	}
	v, err := s.eval(ctx, finishAbandonedScript, id,
		string(to), timeText(at), res, ms(s.retention), at.UnixMilli(), cutoff.UnixMilli())
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("finish abandoned approval %s: %w", id, approval.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("finish abandoned approval %s: %w", id, err)
	}
	a, m, ok, err := decodeFields(id, v)
	if err != nil {
		return nil, err
	}
	if !ok {
		if a.State != approval.Running {
			return nil, fmt.Errorf("finish abandoned approval %s in state %s: %w", id, a.State, approval.ErrConflict)
		}
		life, _ := lifeOf(m)
		return nil, fmt.Errorf("finish abandoned approval %s: %w: its run was alive at %s, after %s", id, approval.ErrConflict,
			timeText(time.UnixMilli(life)), timeText(cutoff))
	}
	// After the script, unlike Finish: a refusal must not move the entry
	// of a record someone else finished. The entry is there (the run's
	// own), and if this write is lost its older score only makes Unsettled
	// read the record sooner, which then judges it by l.
	_ = s.touch(ctx, id, at, true)
	return a, nil
}

// touch writes id's last life into cs:unsettled, before a transition;
// existing only updates an entry already there.
func (s *Store) touch(ctx context.Context, id string, at time.Time, existing bool) error {
	if err := s.mark(ctx, s.c, id, at, existing).Err(); err != nil {
		return fmt.Errorf("mark approval %s unsettled: %w", id, err)
	}
	return nil
}

// mark queues on c the write of id's last life into cs:unsettled.
func (s *Store) mark(ctx context.Context, c redis.Cmdable, id string, at time.Time, existing bool) *redis.IntCmd {
	z := redis.Z{Score: float64(at.UnixMilli()), Member: id}
	if existing {
		return c.ZAddXX(ctx, s.unsettledKey(), z)
	}
	return c.ZAdd(ctx, s.unsettledKey(), z)
}

// transition marks id unsettled at at (touch) and then runs the transition
// script sc on its record. The mark must reach Redis before the script, so
// that a process dying right after the transition leaves an entry for
// Unsettled to find.
//
// On a client of one server (standalone, or Sentinel's master) the two go
// in one pipeline, one round trip: they are written to one connection in
// that order and Redis runs them in that order, so the script never runs
// without the mark having run first, even if this process dies after
// sending them. A Cluster client splits a pipeline by node and sends the
// parts concurrently, which loses the order, so there the mark is its own
// round trip, as before.
func (s *Store) transition(ctx context.Context, what string, sc *redis.Script, id string, at time.Time, existing bool, args ...any) (*approval.Approval, bool, error) {
	v, markErr, err := s.markAndRun(ctx, what, sc, id, at, existing, args...)
	if err != nil {
		return nil, false, err
	}
	a, ok, err := decodeReply(id, v)
	if err != nil {
		return nil, false, err
	}
	if markErr != nil && ok {
		s.markAgain(ctx, id, at, existing)
	}
	return a, ok, nil
}

// markAgain writes the mark of a transition that ran although Redis
// refused its mark (both commands reached it, so this is no network
// failure: a refused write that the script's own write escaped). If that
// fails too, the transition stands and its live caller carries it through:
// an error here would leave it to a recovery that cannot find it.
func (s *Store) markAgain(ctx context.Context, id string, at time.Time, existing bool) {
	_ = s.touch(ctx, id, at, existing)
}

// markAndRun is transition's round trip: the mark and the script, one
// pipeline on one server, two round trips on a Cluster. It returns the
// script's raw reply and the mark's own error (nil when it was written),
// then the script's.
func (s *Store) markAndRun(ctx context.Context, what string, sc *redis.Script, id string, at time.Time, existing bool, args ...any) (reply any, markErr, err error) {
	if !s.ordered {
		if err := s.touch(ctx, id, at, existing); err != nil {
			return nil, nil, fmt.Errorf("%s approval %s: %w", what, id, err)
		}
		v, err := s.eval(ctx, sc, id, args...)
		return v, nil, named(what, id, err)
	}
	keys := s.keys(id)
	var marked *redis.IntCmd
	var ran *redis.Cmd
	// The commands' own errors are read below.
	_, _ = s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		marked = s.mark(ctx, p, id, at, existing)
		ran = sc.EvalSha(ctx, p, keys, args...)
		return nil
	})
	v, err := ran.Result()
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") && marked.Err() == nil {
		// The server has not seen the script yet (a restart, a failover):
		// the mark is written, so run the script by its text.
		v, err = sc.Run(ctx, s.c, keys, args...).Result()
	}
	if errors.Is(err, redis.Nil) {
		// Not in the shards: a record of an earlier version, or none.
		v, err = sc.Run(ctx, s.c, []string{s.legacyKey(id)}, args...).Result()
	}
	return v, marked.Err(), named(what, id, err)
}

// named names a script's failure; a missing record wraps ErrNotFound.
func named(what, id string, err error) error {
	if errors.Is(err, redis.Nil) {
		return fmt.Errorf("%s approval %s: %w", what, id, approval.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("%s approval %s: %w", what, id, err)
	}
	return nil
}

// Heartbeat records that the run of a running approval is alive at at: in
// the record (field l, by script, only while running) and then in
// cs:unsettled.
func (s *Store) Heartbeat(ctx context.Context, id string, at time.Time) error {
	v, err := s.eval(ctx, heartbeatScript, id, at.UnixMilli())
	running, _ := v.(int64)
	if errors.Is(err, redis.Nil) {
		return fmt.Errorf("heartbeat of approval %s: %w", id, approval.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("heartbeat of approval %s: %w", id, err)
	}
	if running == 0 {
		return nil
	}
	if err := s.touch(ctx, id, at, true); err != nil {
		return fmt.Errorf("heartbeat of approval %s: %w", id, err)
	}
	return nil
}

// unsettledPages bounds how many pages of cs:unsettled one Unsettled call
// reads.
const unsettledPages = 8

// Unsettled lists decided, unsettled approvals whose carrier looks dead,
// in the order of their cs:unsettled entries (oldest last life first); see
// approval.Store. The index only picks the records to read: each is judged
// by its own state and last life (field l), read together in one HGETALL,
// so a record claimed, beaten or finished by another replica after the
// index was read is not listed. Entries of missing records, of settled
// ones (written back by a transition that lost), and of records still
// pending long after their entry was written, are dropped on the way,
// unless rewritten meanwhile.
func (s *Store) Unsettled(ctx context.Context, decidedBefore, runningBefore time.Time, limit int) ([]*approval.Approval, error) {
	if limit <= 0 {
		limit = approval.DefaultLimit
	}
	dMS, rMS := decidedBefore.UnixMilli(), runningBefore.UnixMilli()
	var out []*approval.Approval
	var stale []any // id, score read, id, score read…
	offset := int64(0)
	for range unsettledPages {
		zs, err := s.c.ZRangeByScoreWithScores(ctx, s.unsettledKey(), &redis.ZRangeBy{
			Min: "-inf", Max: fmt.Sprint(max(dMS, rMS)), Offset: offset, Count: int64(limit),
		}).Result()
		if err != nil {
			return nil, fmt.Errorf("list unsettled approvals: %w", err)
		}
		if len(zs) == 0 {
			break
		}
		offset += int64(len(zs))
		ids := make([]string, len(zs))
		for i, z := range zs {
			ids[i], _ = z.Member.(string)
		}
		recs, err := s.getMany(ctx, ids)
		if err != nil {
			return nil, fmt.Errorf("list unsettled approvals: %w", err)
		}
		for i, r := range recs {
			score := int64(zs[i].Score)
			life := r.life
			if !r.hasLife {
				life = score // written before records kept their last life
			}
			switch {
			case r.a == nil, r.settled:
				// Gone, or settled: an entry written back by a
				// transition that lost to the one that settled it.
				stale = append(stale, ids[i], score)
			case r.a.State == approval.Pending:
				if score <= dMS {
					stale = append(stale, ids[i], score)
				}
			case r.a.State == approval.Running:
				if life <= rMS {
					out = append(out, r.a)
				}
			case life <= dMS:
				out = append(out, r.a)
			}
		}
		if len(out) >= limit || len(zs) < limit {
			break
		}
	}
	if len(stale) > 0 {
		// Best effort: the next reader drops them too.
		_ = dropUnsettledScript.Run(ctx, s.c, []string{s.unsettledKey()}, stale...).Err()
	}
	return out[:min(limit, len(out))], nil
}

// Settle records that a final approval's decision reached its turn: in the
// record (field z, by script, only when final) and then out of
// cs:unsettled. The mark in the record is what makes the removal stick: a
// losing transition of another replica may write the entry back after it
// (transition marks before its script), and Unsettled drops the entries of
// settled records.
func (s *Store) Settle(ctx context.Context, id string) error {
	v, err := s.eval(ctx, settleScript, id)
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("settle approval %s: %w", id, err)
	}
	if final, _ := v.(int64); err == nil && final == 0 {
		return nil // not final: its run is not over
	}
	if err := s.c.ZRem(ctx, s.unsettledKey(), id).Err(); err != nil {
		return fmt.Errorf("settle approval %s: %w", id, err)
	}
	return nil
}

// SetMessageRef records the card's message id.
func (s *Store) SetMessageRef(ctx context.Context, id, ref string) error {
	_, err := s.eval(ctx, setRefScript, id, ref)
	if errors.Is(err, redis.Nil) {
		return fmt.Errorf("set message ref of approval %s: %w", id, approval.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("set message ref of approval %s: %w", id, err)
	}
	return nil
}

// SetPreview implements approval.Store.
func (s *Store) SetPreview(ctx context.Context, id string, p *tools.Preview) (*approval.Approval, error) {
	data, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode preview of approval %s: %w", id, err)
	}
	a, ok, err := s.run(ctx, "set preview", setPreviewScript, id, string(data))
	if err != nil {
		return nil, err
	}
	if !ok {
		return a, fmt.Errorf("set preview of approval %s (%s): %w", id, a.State, approval.ErrConflict)
	}
	return a, nil
}

// stored is a record as getMany read it: the approval (nil when missing or
// unreadable) and its last life, from the same HGETALL.
type stored struct {
	a       *approval.Approval
	life    int64 // unix ms
	hasLife bool
	settled bool // field z: its decision reached its turn
}

// getMany reads records in one pipeline.
func (s *Store) getMany(ctx context.Context, ids []string) ([]stored, error) {
	maps, err := s.hgetAll(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]stored, len(ids))
	for i, m := range maps {
		if a, err := decode(ids[i], m); err == nil {
			out[i].a = a
			out[i].life, out[i].hasLife = lifeOf(m)
			out[i].settled = m["z"] == "1"
		}
	}
	return out, nil
}

// duePasses bounds how many reads of the due index one Due call makes.
const duePasses = 8

// Due lists pending approvals whose deadline (unix ms) is at or before now,
// earliest first; limit <= 0 means approval.DefaultLimit. Entries whose
// record is gone or no longer pending are dropped from the index on the
// way. Any number of replicas may sweep at once: expiring goes through the
// atomic Decide.
func (s *Store) Due(ctx context.Context, now time.Time, limit int) ([]string, error) {
	if limit <= 0 {
		limit = approval.DefaultLimit
	}
	var out []string
	// Each pass drops the stale entries it meets, so the next one reads on.
	for range duePasses {
		ids, stale, err := s.duePass(ctx, now, int64(limit-len(out)))
		if err != nil {
			return nil, err
		}
		out = append(out, ids...)
		if stale == 0 || len(out) >= limit {
			break
		}
	}
	return out, nil
}

// duePass reads up to limit due entries and returns those still pending and
// how many stale ones it removed.
func (s *Store) duePass(ctx context.Context, now time.Time, limit int64) ([]string, int, error) {
	ids, err := s.c.ZRangeByScore(ctx, s.dueKey(), &redis.ZRangeBy{
		Min: "-inf", Max: fmt.Sprint(now.UnixMilli()), Count: limit,
	}).Result()
	if err != nil {
		return nil, 0, fmt.Errorf("list due approvals: %w", err)
	}
	if len(ids) == 0 {
		return nil, 0, nil
	}
	maps, err := s.hgetAll(ctx, ids)
	if err != nil {
		return nil, 0, fmt.Errorf("check due approvals: %w", err)
	}
	out := make([]string, 0, len(ids))
	var stale []any
	for i, m := range maps {
		if m["s"] != string(approval.Pending) {
			stale = append(stale, ids[i])
			continue
		}
		out = append(out, ids[i])
	}
	if len(stale) > 0 {
		if err := s.c.ZRem(ctx, s.dueKey(), stale...).Err(); err != nil {
			return nil, 0, fmt.Errorf("drop stale due entries: %w", err)
		}
	}
	return out, len(stale), nil
}

// SaveTurn stores t, replacing a turn of the same id; its pending ids
// become t.Pending and a new suspension starts (Resolve can report last
// once more).
func (s *Store) SaveTurn(ctx context.Context, t *approval.Turn) error {
	r, order, err := approval.EncodeTurn(t)
	if err != nil {
		return err
	}
	args := []any{r, ms(s.turnTTL)}
	for _, id := range order {
		args = append(args, id)
	}
	if err := saveTurnScript.Run(ctx, s.c, s.turnKeys(t.ID), args...).Err(); err != nil {
		return fmt.Errorf("save turn %s: %w", t.ID, err)
	}
	return nil
}

// GetTurn returns the turn id with Pending holding the approvals not yet
// resolved, or an error wrapping approval.ErrNotFound.
func (s *Store) GetTurn(ctx context.Context, id string) (*approval.Turn, error) {
	v, err := getTurnScript.Run(ctx, s.c, s.turnKeys(id)).Slice()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("get turn %s: %w", id, approval.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get turn %s: %w", id, err)
	}
	if len(v) != 2 {
		return nil, fmt.Errorf("get turn %s: unexpected script reply", id)
	}
	fields, _ := v[0].([]any)
	members, _ := v[1].([]any)
	m := make(map[string]string, len(fields)/2)
	for i := 0; i+1 < len(fields); i += 2 {
		k, _ := fields[i].(string)
		val, _ := fields[i+1].(string)
		m[k] = val
	}
	left := make(map[string]bool)
	var order []string
	if o, old := m["o"]; old {
		// Saved by a version that kept a set and the order apart.
		if err := json.Unmarshal([]byte(o), &order); err != nil {
			return nil, fmt.Errorf("decode turn %s: %w", id, err)
		}
		for _, mb := range members {
			if s, ok := mb.(string); ok {
				left[s] = true
			}
		}
	} else {
		place := make(map[string]int)
		for k, val := range m {
			if p, ok := strings.CutPrefix(k, "p:"); ok {
				place[p], _ = strconv.Atoi(val)
				order = append(order, p)
				left[p] = true
			}
		}
		slices.SortFunc(order, func(a, b string) int { return cmp.Compare(place[a], place[b]) })
	}
	return approval.DecodeTurn(id, []byte(m["r"]), order, func(p string) bool { return left[p] })
}

// Resolve removes approvalID from the turn's pending set in one Lua
// script; the call that empties it gets last=true, once per SaveTurn.
func (s *Store) Resolve(ctx context.Context, turnID, approvalID string) (bool, error) {
	n, err := resolveScript.Run(ctx, s.c, s.turnKeys(turnID), approvalID).Int()
	if err != nil {
		return false, fmt.Errorf("resolve turn %s: %w", turnID, err)
	}
	if n < 0 {
		return false, fmt.Errorf("resolve turn %s: %w", turnID, approval.ErrNotFound)
	}
	return n == 1, nil
}

// DeleteTurn removes a turn; removing a missing one is not an error.
func (s *Store) DeleteTurn(ctx context.Context, id string) error {
	if err := s.c.Del(ctx, s.turnKeys(id)...).Err(); err != nil {
		return fmt.Errorf("delete turn %s: %w", id, err)
	}
	return nil
}

// LoadConversation returns the stored conversation, or nil when none.
func (s *Store) LoadConversation(ctx context.Context, key string) ([]byte, error) {
	b, err := s.c.Get(ctx, s.convKey(key)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load conversation %s: %w", key, err)
	}
	return b, nil
}

// SaveConversation stores data under key for ttl.
func (s *Store) SaveConversation(ctx context.Context, key string, data []byte, ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("save conversation %s: %w: ttl must be positive", key, approval.ErrInvalid)
	}
	if err := s.c.Set(ctx, s.convKey(key), data, ttl).Err(); err != nil {
		return fmt.Errorf("save conversation %s: %w", key, err)
	}
	return nil
}

// FirstDelivery records eventID for ttl with one SET NX PX and reports
// whether this call set it: Redis runs the SETs of all replicas one at a
// time, so exactly one of them is first. The TTL is the server's clock.
func (s *Store) FirstDelivery(ctx context.Context, eventID string, ttl time.Duration) (bool, error) {
	if err := approval.CheckDelivery(eventID, ttl); err != nil {
		return false, err
	}
	key := s.eventKey(eventID)
	ttl = max(ttl, time.Millisecond) // PX counts whole milliseconds
	err := s.c.SetArgs(ctx, key, "1", redis.SetArgs{Mode: "NX", TTL: ttl}).Err()
	if errors.Is(err, redis.Nil) {
		return false, nil // NX: it was already there
	}
	if err != nil {
		return false, fmt.Errorf("record event %s: %w", key, err)
	}
	return true, nil
}

// Audit appends e to the capped stream (XADD MAXLEN ~) and logs it. An
// error means the event was not stored; the caller must then not run the
// operation it describes. A zero At is set from the clock.
func (s *Store) Audit(ctx context.Context, e approval.Event) error {
	if e.At.IsZero() {
		e.At = s.now()
	}
	b, err := json.Marshal(&e)
	if err == nil {
		err = s.c.XAdd(ctx, &redis.XAddArgs{
			Stream: s.auditKey(),
			MaxLen: s.auditMax,
			Approx: true,
			Values: []string{"e", string(b)},
		}).Err()
	}
	approval.LogEvent(ctx, s.log, e, err)
	if err != nil {
		return fmt.Errorf("audit %s: %w", e.Kind, err)
	}
	return nil
}

// AuditLog returns up to n of the most recent events, newest last.
func (s *Store) AuditLog(ctx context.Context, n int) ([]approval.Event, error) {
	if n <= 0 {
		return nil, nil
	}
	msgs, err := s.c.XRevRangeN(ctx, s.auditKey(), "+", "-", int64(n)).Result()
	if err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	out := make([]approval.Event, len(msgs))
	for i, m := range msgs {
		v, _ := m.Values["e"].(string)
		if err := json.Unmarshal([]byte(v), &out[len(msgs)-1-i]); err != nil {
			return nil, fmt.Errorf("decode audit event %s: %w", m.ID, err)
		}
	}
	return out, nil
}

// Close closes the Redis client.
func (s *Store) Close() error {
	return s.c.Close()
}
