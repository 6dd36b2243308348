// Package memstore is the in-memory approval store: the embedded default for
// a single process. Everything sits behind one mutex; records are copied in
// and out through JSON so callers never share memory with the store and see
// exactly what the Redis store would give them. The audit log is a capped
// ring (the in-memory twin of the Redis stream), and every event also goes
// out as a structured slog line.
package memstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/tools"
)

var (
	_ approval.Store   = (*Store)(nil)
	_ approval.Deduper = (*Store)(nil)
)

// ErrClosed is returned by every method after Close.
var ErrClosed = errors.New("approval store is closed")

// Options configures a Store. The zero value is ready to use.
type Options struct {
	// Logger receives one structured line per audit event. Default: JSON on
	// standard error (approval.NewAuditLogger).
	Logger *slog.Logger
	// Now is the clock for conversation expiry, default times of Create and
	// Audit, and pruning. Default time.Now.
	Now func() time.Time
	// AuditCap is how many audit events the ring keeps. Default 10000.
	AuditCap int
	// Retention is how long a decided record is kept after its deadline.
	// Default 24h.
	Retention time.Duration
	// TurnTTL is how long a suspended turn is kept. Default 25h.
	TurnTTL time.Duration
	// ListLimit caps how many approvals ListPending returns. Default 1000.
	ListLimit int
	// MaxConversations bounds the conversations kept (default 10000):
	// beyond it, the ones closest to expiring go first.
	MaxConversations int
}

// Store is the in-memory approval store.
type Store struct {
	log       *slog.Logger
	now       func() time.Time
	retention time.Duration
	turnTTL   time.Duration
	listLimit int
	maxConvs  int

	mu         sync.Mutex
	closed     bool
	approvals  map[string]entry
	byToolCall map[string]string // tool call id → approval id
	turns      map[string]*turn
	convs      map[string]conv
	pending    pendingIndex
	creates    int                  // since the last prune
	events     map[string]time.Time // chat event key → when it is forgotten
	deliveries int                  // since the last prune of events

	inbox  map[string]inboxEntry // accepted chat events (inbox.go)
	owners map[string]time.Time  // inbox owner → its last beat

	audit     []approval.Event // ring of up to auditCap, grown as events come
	auditCap  int
	auditNext int // where the next event goes

	pins  mcpPins     // see mcppin.go
	spend spendTotals // see spend.go
}

// entry is one record as JSON, with the fields the scans filter on.
type entry struct {
	data              []byte
	state             approval.State
	created, expires  time.Time
	platform, channel string
	toolCall          string
	// unsettled: decided, and not yet Settle'd; life is its last sign of
	// life (decision, claim, heartbeat, finish).
	unsettled bool
	life      time.Time
	// guessed: the outcome is recovery's guess (FinishAbandoned), which
	// the run's own Finish replaces.
	guessed bool
}

type turn struct {
	data    []byte // JSON of the turn, Pending ignored
	pending map[string]bool
	order   []string // Pending as saved, for GetTurn
	resumed bool
	expires time.Time
}

type conv struct {
	data    []byte
	expires time.Time
}

// pruneEvery is how many creates pass between sweeps of old records.
const pruneEvery = 1024

// New returns an empty store.
func New(opts Options) *Store {
	s := &Store{
		log:        opts.Logger,
		now:        opts.Now,
		retention:  opts.Retention,
		turnTTL:    opts.TurnTTL,
		listLimit:  opts.ListLimit,
		pending:    pendingIndex{byChannel: make(map[string][]pendingRef), byID: make(map[string][]string)},
		approvals:  make(map[string]entry),
		byToolCall: make(map[string]string),
		turns:      make(map[string]*turn),
		convs:      make(map[string]conv),
		events:     make(map[string]time.Time),
	}
	if s.log == nil {
		s.log = approval.NewAuditLogger()
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.retention <= 0 {
		s.retention = 24 * time.Hour
	}
	if s.turnTTL <= 0 {
		s.turnTTL = 25 * time.Hour
	}
	if s.listLimit <= 0 {
		s.listLimit = 1000
	}
	s.maxConvs = opts.MaxConversations
	if s.maxConvs <= 0 {
		s.maxConvs = 10000
	}
	n := opts.AuditCap
	if n <= 0 {
		n = 10000
	}
	s.auditCap = n // the ring grows to it: 10000 events held from the start were 2 MB of an idle bot
	return s
}

// lock takes the mutex and reports ErrClosed after Close.
func (s *Store) lock() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	return nil
}

// get decodes the record id; s.mu must be held.
func (s *Store) get(id string) (*approval.Approval, error) {
	e, ok := s.approvals[id]
	if !ok {
		return nil, fmt.Errorf("get approval %s: %w", id, approval.ErrNotFound)
	}
	var a approval.Approval
	if err := json.Unmarshal(e.data, &a); err != nil {
		return nil, fmt.Errorf("decode approval %s: %w", id, err)
	}
	return &a, nil
}

// put encodes and stores a and returns the copy a caller gets; s.mu must be
// held.
func (s *Store) put(a *approval.Approval) (*approval.Approval, error) {
	b, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("encode approval %s: %w", a.ID, err)
	}
	var out approval.Approval
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("decode approval %s: %w", a.ID, err)
	}
	old, had := s.approvals[a.ID]
	e := entry{
		data: b, state: a.State, created: a.CreatedAt, expires: a.ExpiresAt,
		platform: a.Conversation.Platform, channel: a.Conversation.Channel, toolCall: a.ToolCallID,
		unsettled: old.unsettled, life: old.life, guessed: old.guessed,
	}
	s.approvals[a.ID] = e
	switch was := had && old.state == approval.Pending; {
	case was && e.state != approval.Pending:
		s.pending.remove(a.ID, old)
	case !was && e.state == approval.Pending:
		s.pending.add(a.ID, e)
	}
	return &out, nil
}

// alive marks the record id unsettled with its last life at at; s.mu must
// be held and the record present.
func (s *Store) alive(id string, at time.Time) {
	e := s.approvals[id]
	e.unsettled, e.life = true, at
	s.approvals[id] = e
}

// Create stores a new pending approval, idempotent on ToolCallID.
func (s *Store) Create(ctx context.Context, a *approval.Approval) (*approval.Approval, bool, error) {
	c, err := approval.PrepareCreate(a, s.now())
	if err != nil {
		return nil, false, err
	}
	if err := s.lock(); err != nil {
		return nil, false, err
	}
	defer s.mu.Unlock()
	if id, ok := s.byToolCall[c.ToolCallID]; ok {
		if old, err := s.get(id); err == nil {
			return old, false, nil
		}
	}
	if _, ok := s.approvals[c.ID]; ok {
		return nil, false, fmt.Errorf("create approval %s: %w: id already in use", c.ID, approval.ErrConflict)
	}
	out, err := s.put(c)
	if err != nil {
		return nil, false, err
	}
	s.byToolCall[c.ToolCallID] = c.ID
	if s.creates++; s.creates >= pruneEvery {
		s.creates = 0
		s.prune(c.CreatedAt)
	}
	return out, true, nil
}

// prune drops final records past their retention, and expired turns and
// conversations; s.mu must be held.
func (s *Store) prune(now time.Time) {
	for id, e := range s.approvals {
		if e.state.Final() && now.After(e.expires.Add(s.retention)) {
			delete(s.approvals, id)
			if s.byToolCall[e.toolCall] == id {
				delete(s.byToolCall, e.toolCall)
			}
		}
	}
	wall := s.now()
	for id, t := range s.turns {
		if wall.After(t.expires) {
			delete(s.turns, id)
		}
	}
	for k, c := range s.convs {
		if wall.After(c.expires) {
			delete(s.convs, k)
		}
	}
}

// Get returns the record id, or an error wrapping approval.ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (*approval.Approval, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	return s.get(id)
}

// Decide moves a pending approval to Approved, Cancelled or Expired; see
// approval.Outcome for late approvals. A decided approval is returned with
// Won=false.
func (s *Store) Decide(ctx context.Context, id string, to approval.State, by approval.User, reason string, at time.Time) (approval.DecideResult, error) {
	if err := approval.CheckDecide(to); err != nil {
		return approval.DecideResult{}, fmt.Errorf("decide approval %s: %w", id, err)
	}
	if err := s.lock(); err != nil {
		return approval.DecideResult{}, err
	}
	defer s.mu.Unlock()
	a, err := s.get(id)
	if err != nil {
		return approval.DecideResult{}, err
	}
	if a.State != approval.Pending {
		return approval.DecideResult{Approval: a}, nil
	}
	a.State = approval.DecidedState(a, to, at)
	a.DecidedBy, a.DecidedAt, a.Reason = &by, at, reason
	out, err := s.put(a)
	if err != nil {
		return approval.DecideResult{}, err
	}
	s.alive(id, at)
	return approval.DecideResult{Approval: out, Won: true}, nil
}

// Claim moves Approved to Running; only the first claimant gets ok=true.
func (s *Store) Claim(ctx context.Context, id string, at time.Time) (*approval.Approval, bool, error) {
	if err := s.lock(); err != nil {
		return nil, false, err
	}
	defer s.mu.Unlock()
	a, err := s.get(id)
	if err != nil {
		return nil, false, err
	}
	if a.State != approval.Approved {
		return a, false, nil
	}
	a.State, a.StartedAt = approval.Running, at
	out, err := s.put(a)
	if err != nil {
		return nil, false, err
	}
	s.alive(id, at)
	return out, true, nil
}

// Finish moves Running to Done or Failed; any other state is ErrConflict.
func (s *Store) Finish(ctx context.Context, id string, to approval.State, result tools.Result, at time.Time) (*approval.Approval, error) {
	return s.finish("finish approval", id, to, result, at, nil)
}

// FinishAbandoned moves Running to Done or Failed only if the run's last
// life is at or before cutoff, in whole milliseconds as in Redis; anything
// else is ErrConflict. The check and the move happen under one lock.
func (s *Store) FinishAbandoned(ctx context.Context, id string, to approval.State, result tools.Result, at, cutoff time.Time) (*approval.Approval, error) {
	return s.finish("finish abandoned approval", id, to, result, at, &cutoff)
}

// finish is Finish, and with a cutoff FinishAbandoned; what names the
// operation in its errors.
func (s *Store) finish(what, id string, to approval.State, result tools.Result, at time.Time, cutoff *time.Time) (*approval.Approval, error) {
	if err := approval.CheckFinish(to); err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, id, err)
	}
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	a, err := s.get(id)
	if err != nil {
		return nil, err
	}
	// The run's own outcome (no cutoff) replaces recovery's guess.
	late := cutoff == nil && a.State == approval.Failed && s.approvals[id].guessed
	if a.State != approval.Running && !late {
		return nil, fmt.Errorf("%s %s in state %s: %w", what, id, a.State, approval.ErrConflict)
	}
	if life := s.approvals[id].life; cutoff != nil && life.UnixMilli() > cutoff.UnixMilli() {
		return nil, fmt.Errorf("%s %s: %w: its run was alive at %s, after %s",
			what, id, approval.ErrConflict, life.UTC().Format(time.RFC3339Nano), cutoff.UTC().Format(time.RFC3339Nano))
	}
	a.State, a.EndedAt, a.Result = to, at, &result
	out, err := s.put(a)
	if err != nil {
		return nil, err
	}
	e := s.approvals[id]
	e.guessed = cutoff != nil
	s.approvals[id] = e
	if !late || e.unsettled {
		s.alive(id, at) // a settled record stays settled, as in Redis
	}
	return out, nil
}

// Heartbeat records that the run of a running approval is alive at at.
func (s *Store) Heartbeat(ctx context.Context, id string, at time.Time) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	e, ok := s.approvals[id]
	if !ok {
		return fmt.Errorf("heartbeat of approval %s: %w", id, approval.ErrNotFound)
	}
	if e.state == approval.Running && e.unsettled && at.After(e.life) {
		s.alive(id, at)
	}
	return nil
}

// Unsettled lists decided, unsettled approvals whose carrier looks dead,
// oldest last life first; see approval.Store.
func (s *Store) Unsettled(ctx context.Context, decidedBefore, runningBefore time.Time, limit int) ([]*approval.Approval, error) {
	if limit <= 0 {
		limit = approval.DefaultLimit
	}
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	type stale struct {
		id   string
		life time.Time
	}
	var all []stale
	for id, e := range s.approvals {
		if !e.unsettled || e.state == approval.Pending {
			continue
		}
		cutoff := decidedBefore
		if e.state == approval.Running {
			cutoff = runningBefore
		}
		if e.life.UnixMilli() <= cutoff.UnixMilli() {
			all = append(all, stale{id, e.life})
		}
	}
	slices.SortFunc(all, func(a, b stale) int {
		return cmp.Or(a.life.Compare(b.life), cmp.Compare(a.id, b.id))
	})
	out := make([]*approval.Approval, 0, min(limit, len(all)))
	for _, st := range all[:min(limit, len(all))] {
		a, err := s.get(st.id)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// Settle records that a final approval's decision reached its turn.
func (s *Store) Settle(ctx context.Context, id string) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if e, ok := s.approvals[id]; ok && e.state.Final() {
		e.unsettled = false
		s.approvals[id] = e
	}
	return nil
}

// SetMessageRef records the card's message id.
func (s *Store) SetMessageRef(ctx context.Context, id, ref string) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	a, err := s.get(id)
	if err != nil {
		return err
	}
	a.MessageRef = ref
	_, err = s.put(a)
	return err
}

// SetPreview implements approval.Store.
func (s *Store) SetPreview(ctx context.Context, id string, p *tools.Preview) (*approval.Approval, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	a, err := s.get(id)
	if err != nil {
		return nil, err
	}
	if a.State != approval.Pending {
		return a, fmt.Errorf("set preview of approval %s (%s): %w", id, a.State, approval.ErrConflict)
	}
	if p != nil {
		c := *p
		p = &c
	}
	a.Preview = p
	return s.put(a)
}

// Due lists pending approvals whose deadline is at or before now (in whole
// milliseconds, as in Redis), earliest deadline first; limit <= 0 means
// approval.DefaultLimit.
func (s *Store) Due(ctx context.Context, now time.Time, limit int) ([]string, error) {
	if limit <= 0 {
		limit = approval.DefaultLimit
	}
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	type due struct {
		id      string
		expires time.Time
	}
	var all []due
	for id, e := range s.approvals {
		if e.state == approval.Pending && e.expires.UnixMilli() <= now.UnixMilli() {
			all = append(all, due{id, e.expires})
		}
	}
	slices.SortFunc(all, func(a, b due) int {
		return cmp.Or(a.expires.Compare(b.expires), cmp.Compare(a.id, b.id))
	})
	ids := make([]string, 0, min(limit, len(all)))
	for _, d := range all[:min(limit, len(all))] {
		ids = append(ids, d.id)
	}
	return ids, nil
}

// SaveTurn stores t, replacing a turn of the same id; its pending set
// becomes t.Pending.
func (s *Store) SaveTurn(ctx context.Context, t *approval.Turn) error {
	b, order, err := approval.EncodeTurn(t)
	if err != nil {
		return err
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	e := &turn{data: b, order: order, pending: make(map[string]bool, len(order)), expires: s.now().Add(s.turnTTL)}
	for _, id := range order {
		e.pending[id] = true
	}
	s.turns[t.ID] = e
	return nil
}

// GetTurn returns the turn id with Pending holding the approvals not yet
// resolved, or an error wrapping approval.ErrNotFound.
func (s *Store) GetTurn(ctx context.Context, id string) (*approval.Turn, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	e, ok := s.turns[id]
	if !ok || s.now().After(e.expires) {
		return nil, fmt.Errorf("get turn %s: %w", id, approval.ErrNotFound)
	}
	return approval.DecodeTurn(id, e.data, e.order, func(p string) bool { return e.pending[p] })
}

// Resolve removes approvalID from the turn's pending set; the call that
// empties it gets last=true, once. An id not in the set gives last=false.
func (s *Store) Resolve(ctx context.Context, turnID, approvalID string) (bool, error) {
	if err := s.lock(); err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	e, ok := s.turns[turnID]
	if !ok || s.now().After(e.expires) {
		return false, fmt.Errorf("resolve turn %s: %w", turnID, approval.ErrNotFound)
	}
	if !e.pending[approvalID] {
		return false, nil
	}
	delete(e.pending, approvalID)
	if len(e.pending) == 0 && !e.resumed {
		e.resumed = true
		return true, nil
	}
	return false, nil
}

// DeleteTurn removes a turn; removing a missing one is not an error.
func (s *Store) DeleteTurn(ctx context.Context, id string) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	delete(s.turns, id)
	return nil
}

// LoadConversation returns the stored conversation, or nil when there is
// none or it has expired.
func (s *Store) LoadConversation(ctx context.Context, key string) ([]byte, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	c, ok := s.convs[key]
	if !ok {
		return nil, nil
	}
	if !s.now().Before(c.expires) {
		delete(s.convs, key)
		return nil, nil
	}
	return slices.Clone(c.data), nil
}

// SaveConversation stores data under key for ttl.
func (s *Store) SaveConversation(ctx context.Context, key string, data []byte, ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("save conversation %s: %w: ttl must be positive", key, approval.ErrInvalid)
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	now := s.now()
	s.convs[key] = conv{data: slices.Clone(data), expires: now.Add(ttl)}
	if len(s.convs) > s.maxConvs {
		s.boundConversations(now)
	}
	return nil
}

// boundConversations drops the expired conversations and, while more than
// maxConvs remain, the tenth of them closest to expiring, so that the
// store's memory stays bounded however many threads talk to the bot.
func (s *Store) boundConversations(now time.Time) {
	for k, c := range s.convs {
		if !now.Before(c.expires) {
			delete(s.convs, k)
		}
	}
	if len(s.convs) <= s.maxConvs {
		return
	}
	keys := make([]string, 0, len(s.convs))
	for k := range s.convs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return s.convs[a].expires.Compare(s.convs[b].expires) })
	for _, k := range keys[:len(keys)-s.maxConvs*9/10] {
		delete(s.convs, k)
	}
}

// FirstDelivery records eventID until ttl from now (the store's clock) and
// reports whether it was not already recorded. Expired ids are swept every
// pruneEvery calls, so the map holds about the ids of one ttl.
func (s *Store) FirstDelivery(ctx context.Context, eventID string, ttl time.Duration) (bool, error) {
	if err := approval.CheckDelivery(eventID, ttl); err != nil {
		return false, err
	}
	if err := s.lock(); err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	now := s.now()
	if s.deliveries++; s.deliveries >= pruneEvery {
		s.deliveries = 0
		for k, until := range s.events {
			if !now.Before(until) {
				delete(s.events, k)
			}
		}
	}
	key := approval.EventKey(eventID)
	if until, ok := s.events[key]; ok && now.Before(until) {
		return false, nil
	}
	s.events[key] = now.Add(ttl)
	return true, nil
}

// Audit appends e to the ring, overwriting the oldest event when full, and
// logs it. A zero At is set from the clock.
func (s *Store) Audit(ctx context.Context, e approval.Event) error {
	if e.At.IsZero() {
		e.At = s.now()
	}
	if err := s.lock(); err != nil {
		approval.LogEvent(ctx, s.log, e, err)
		return fmt.Errorf("audit %s: %w", e.Kind, err)
	}
	if len(s.audit) < s.auditCap {
		s.audit = append(s.audit, e)
	} else {
		s.audit[s.auditNext] = e
	}
	s.auditNext = (s.auditNext + 1) % s.auditCap
	s.mu.Unlock()
	approval.LogEvent(ctx, s.log, e, nil)
	return nil
}

// AuditLog returns up to n of the most recent events, newest last.
func (s *Store) AuditLog(ctx context.Context, n int) ([]approval.Event, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	n = max(0, min(n, len(s.audit)))
	out := make([]approval.Event, n)
	start := s.auditNext - n
	if start < 0 {
		start += len(s.audit)
	}
	for i := range out {
		out[i] = s.audit[(start+i)%len(s.audit)]
	}
	return out, nil
}

// Close makes every later call fail with ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}
