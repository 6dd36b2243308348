package ops

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/tools"
)

// meteredStore times every operation of an approval store, and reads the
// audit events that pass through it for the approval metrics: what the
// audit log records is what the metrics count, and an event whose record
// failed counts nowhere.
type meteredStore struct {
	inner approval.Store
	m     *Metrics
}

var _ approval.Store = (*meteredStore)(nil)

// MeterStore wraps s. Every method of approval.Store, the guarantees the
// bot relies on among them (the count of approvals, the inbox journal, the
// MCP pins), is written out below and timed under its own operation name:
// a method added to the contract fails this build until it is, and
// TestMeteredStoreTimesEveryMethod checks that each is timed once, under a
// name storeOps lists, and TestMeteredStoreForwardsEveryMethod that each
// reaches the wrapped store.
func (m *Metrics) MeterStore(s approval.Store) approval.Store {
	ms := &meteredStore{inner: s, m: m}
	m.pending.counter = ms // timed as the store operation count_pending
	return ms
}

// done records how long op took and whether it failed.
func (s *meteredStore) done(op string, start time.Time, err error) {
	s.m.storeLatency.WithLabelValues(op).Observe(time.Since(start).Seconds())
	if err != nil && !errors.Is(err, approval.ErrNotFound) && !errors.Is(err, approval.ErrConflict) {
		s.m.storeErrors.WithLabelValues(op).Inc()
	}
}

func (s *meteredStore) FirstDelivery(ctx context.Context, eventID string, ttl time.Duration) (bool, error) {
	start := time.Now()
	first, err := s.inner.FirstDelivery(ctx, eventID, ttl)
	s.done("first_delivery", start, err)
	return first, err
}

func (s *meteredStore) Create(ctx context.Context, a *approval.Approval) (*approval.Approval, bool, error) {
	start := time.Now()
	stored, created, err := s.inner.Create(ctx, a)
	s.done("create", start, err)
	return stored, created, err
}

func (s *meteredStore) Get(ctx context.Context, id string) (*approval.Approval, error) {
	start := time.Now()
	a, err := s.inner.Get(ctx, id)
	s.done("get", start, err)
	return a, err
}

func (s *meteredStore) Decide(ctx context.Context, id string, to approval.State, by approval.User, reason string, at time.Time) (approval.DecideResult, error) {
	start := time.Now()
	r, err := s.inner.Decide(ctx, id, to, by, reason, at)
	s.done("decide", start, err)
	return r, err
}

func (s *meteredStore) Claim(ctx context.Context, id string, at time.Time) (*approval.Approval, bool, error) {
	start := time.Now()
	a, ok, err := s.inner.Claim(ctx, id, at)
	s.done("claim", start, err)
	return a, ok, err
}

func (s *meteredStore) Finish(ctx context.Context, id string, to approval.State, result tools.Result, at time.Time) (*approval.Approval, error) {
	start := time.Now()
	a, err := s.inner.Finish(ctx, id, to, result, at)
	s.done("finish", start, err)
	return a, err
}

func (s *meteredStore) SetMessageRef(ctx context.Context, id, ref string) error {
	start := time.Now()
	err := s.inner.SetMessageRef(ctx, id, ref)
	s.done("set_message_ref", start, err)
	return err
}

func (s *meteredStore) SetPreview(ctx context.Context, id string, p *tools.Preview) (*approval.Approval, error) {
	start := time.Now()
	a, err := s.inner.SetPreview(ctx, id, p)
	s.done("set_preview", start, err)
	return a, err
}

func (s *meteredStore) ListPending(ctx context.Context, platform, channel string, limit int) ([]*approval.Approval, error) {
	start := time.Now()
	l, err := s.inner.ListPending(ctx, platform, channel, limit)
	s.done("list_pending", start, err)
	return l, err
}

func (s *meteredStore) FindPending(ctx context.Context, platform, channel, prefix string, limit int) ([]*approval.Approval, error) {
	start := time.Now()
	l, err := s.inner.FindPending(ctx, platform, channel, prefix, limit)
	s.done("find_pending", start, err)
	return l, err
}

func (s *meteredStore) PendingChannels(ctx context.Context, platform string) ([]string, error) {
	start := time.Now()
	l, err := s.inner.PendingChannels(ctx, platform)
	s.done("pending_channels", start, err)
	return l, err
}

func (s *meteredStore) CountPending(ctx context.Context, platform, channel string) (int, error) {
	start := time.Now()
	n, err := s.inner.CountPending(ctx, platform, channel)
	s.done("count_pending", start, err)
	return n, err
}

func (s *meteredStore) Due(ctx context.Context, now time.Time, limit int) ([]string, error) {
	start := time.Now()
	ids, err := s.inner.Due(ctx, now, limit)
	s.done("due", start, err)
	return ids, err
}

func (s *meteredStore) Heartbeat(ctx context.Context, id string, at time.Time) error {
	start := time.Now()
	err := s.inner.Heartbeat(ctx, id, at)
	s.done("heartbeat", start, err)
	return err
}

func (s *meteredStore) Unsettled(ctx context.Context, decidedBefore, runningBefore time.Time, limit int) ([]*approval.Approval, error) {
	start := time.Now()
	l, err := s.inner.Unsettled(ctx, decidedBefore, runningBefore, limit)
	s.done("unsettled", start, err)
	return l, err
}

func (s *meteredStore) FinishAbandoned(ctx context.Context, id string, to approval.State, result tools.Result, at, cutoff time.Time) (*approval.Approval, error) {
	start := time.Now()
	a, err := s.inner.FinishAbandoned(ctx, id, to, result, at, cutoff)
	s.done("finish_abandoned", start, err)
	return a, err
}

func (s *meteredStore) Settle(ctx context.Context, id string) error {
	start := time.Now()
	err := s.inner.Settle(ctx, id)
	s.done("settle", start, err)
	return err
}

func (s *meteredStore) SaveTurn(ctx context.Context, t *approval.Turn) error {
	start := time.Now()
	err := s.inner.SaveTurn(ctx, t)
	s.done("save_turn", start, err)
	return err
}

func (s *meteredStore) GetTurn(ctx context.Context, id string) (*approval.Turn, error) {
	start := time.Now()
	t, err := s.inner.GetTurn(ctx, id)
	s.done("get_turn", start, err)
	return t, err
}

func (s *meteredStore) Resolve(ctx context.Context, turnID, approvalID string) (bool, error) {
	start := time.Now()
	last, err := s.inner.Resolve(ctx, turnID, approvalID)
	s.done("resolve", start, err)
	return last, err
}

func (s *meteredStore) DeleteTurn(ctx context.Context, id string) error {
	start := time.Now()
	err := s.inner.DeleteTurn(ctx, id)
	s.done("delete_turn", start, err)
	return err
}

func (s *meteredStore) LoadConversation(ctx context.Context, key string) ([]byte, error) {
	start := time.Now()
	b, err := s.inner.LoadConversation(ctx, key)
	s.done("load_conversation", start, err)
	return b, err
}

func (s *meteredStore) SaveConversation(ctx context.Context, key string, data []byte, ttl time.Duration) error {
	start := time.Now()
	err := s.inner.SaveConversation(ctx, key, data, ttl)
	s.done("save_conversation", start, err)
	return err
}

func (s *meteredStore) Audit(ctx context.Context, e approval.Event) error {
	start := time.Now()
	err := s.inner.Audit(ctx, e)
	s.done("audit", start, err)
	if err == nil {
		s.m.audited(e)
	}
	return err
}

func (s *meteredStore) AuditLog(ctx context.Context, n int) ([]approval.Event, error) {
	start := time.Now()
	l, err := s.inner.AuditLog(ctx, n)
	s.done("audit_log", start, err)
	return l, err
}

func (s *meteredStore) Close() error { return s.inner.Close() }

// audited counts one audit event that was written.
func (m *Metrics) audited(e approval.Event) {
	at := e.At
	if at.IsZero() {
		at = m.now()
	}
	switch e.Kind {
	case approval.KindAssessment:
		rule := e.Rule
		if rule == "" {
			rule = "none"
		}
		m.assessments.WithLabelValues(m.tool(e.Tool), string(e.Decision), rule).Inc()
		if name, ok := strings.CutPrefix(e.Actor, agent.AgentPrefix); ok {
			m.agentCalls.WithLabelValues(name, string(e.Decision)).Inc()
		}
	case approval.KindCard:
		m.cards.put(e.ApprovalID, at)
	case approval.KindClick, approval.KindRefusedClick:
		m.clicks.WithLabelValues(string(e.Outcome)).Inc()
		// A click that decided; one that found the approval past its
		// deadline is followed by the expiry event, which counts it.
		if e.Kind == approval.KindClick && (e.Outcome == approval.Outcome(approval.Approved) || e.Outcome == approval.Outcome(approval.Cancelled)) {
			m.decided(e.ApprovalID, string(e.Outcome), at)
		}
	case approval.KindExpiry:
		m.decided(e.ApprovalID, string(approval.Expired), at)
	case approval.KindExecution:
		if e.Decision == approval.DecisionRecovered {
			return // recovery ended a run that another process started: nothing ran here
		}
		status := string(e.Outcome)
		if status == "" {
			status = "unknown"
		}
		m.toolRun.WithLabelValues(m.tool(e.Tool), status).Observe(float64(e.DurationMS) / 1000)
	}
}

// decided counts an approval's decision and, when this process saw its
// card, the time the decision took.
func (m *Metrics) decided(id, outcome string, at time.Time) {
	m.approvals.WithLabelValues(outcome).Inc()
	if card, ok := m.cards.take(id); ok {
		m.decision.WithLabelValues(outcome).Observe(max(at.Sub(card), 0).Seconds())
	}
}

// cardMemory is how many cards' times are kept for the decision time; the
// oldest is forgotten first (a card decided on another replica, or never).
const cardMemory = 10000

// cardTimes remembers when cards were posted, up to a bound.
type cardTimes struct {
	mu    sync.Mutex
	max   int
	at    map[string]time.Time
	order []string // ids in the order they came; may hold taken ones
}

func (c *cardTimes) init(n int) {
	c.max = n
	c.at = map[string]time.Time{}
}

func (c *cardTimes) put(id string, at time.Time) {
	if id == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.at[id]; ok {
		return // a card posted again keeps its first time
	}
	c.at[id] = at
	c.order = append(c.order, id)
	for len(c.at) > c.max || len(c.order) > 2*c.max {
		old := c.order[0]
		c.order = c.order[1:]
		delete(c.at, old)
	}
}

func (c *cardTimes) take(id string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.at[id]
	delete(c.at, id)
	return at, ok
}

func (s *meteredStore) Approve(ctx context.Context, id string, v approval.Vote) (approval.ApproveResult, error) {
	start := time.Now()
	r, err := s.inner.Approve(ctx, id, v)
	s.done("approve", start, err)
	return r, err
}

func (s *meteredStore) Progress(ctx context.Context, id string) (approval.Progress, error) {
	start := time.Now()
	p, err := s.inner.Progress(ctx, id)
	s.done("progress", start, err)
	return p, err
}

func (s *meteredStore) ResetVotes(ctx context.Context, id string) (int, error) {
	start := time.Now()
	n, err := s.inner.ResetVotes(ctx, id)
	s.done("reset_votes", start, err)
	return n, err
}

func (s *meteredStore) Accept(ctx context.Context, owner string, at time.Time, entries ...approval.InboxEntry) error {
	start := time.Now()
	err := s.inner.Accept(ctx, owner, at, entries...)
	s.done("inbox_accept", start, err)
	return err
}

func (s *meteredStore) Answered(ctx context.Context, ids ...string) error {
	start := time.Now()
	err := s.inner.Answered(ctx, ids...)
	s.done("inbox_answered", start, err)
	return err
}

func (s *meteredStore) Beat(ctx context.Context, owner string, at time.Time) error {
	start := time.Now()
	err := s.inner.Beat(ctx, owner, at)
	s.done("inbox_beat", start, err)
	return err
}

func (s *meteredStore) Leave(ctx context.Context, owner string) error {
	start := time.Now()
	err := s.inner.Leave(ctx, owner)
	s.done("inbox_leave", start, err)
	return err
}

func (s *meteredStore) TakeOver(ctx context.Context, taker string, cutoff, at time.Time, limit int) ([]approval.InboxEntry, error) {
	start := time.Now()
	l, err := s.inner.TakeOver(ctx, taker, cutoff, at, limit)
	s.done("inbox_take_over", start, err)
	return l, err
}

func (s *meteredStore) PinMCP(ctx context.Context, server, tool, hash string) (string, error) {
	start := time.Now()
	pinned, err := s.inner.PinMCP(ctx, server, tool, hash)
	s.done("pin_mcp", start, err)
	return pinned, err
}

func (s *meteredStore) AcceptMCP(ctx context.Context, server string, hashes map[string]string) error {
	start := time.Now()
	err := s.inner.AcceptMCP(ctx, server, hashes)
	s.done("accept_mcp", start, err)
	return err
}

func (s *meteredStore) MCPPins(ctx context.Context, server string) (map[string]string, error) {
	start := time.Now()
	m, err := s.inner.MCPPins(ctx, server)
	s.done("mcp_pins", start, err)
	return m, err
}

func (s *meteredStore) AddSpend(ctx context.Context, key string, tokens int64, expiry time.Time) (int64, error) {
	start := time.Now()
	total, err := s.inner.AddSpend(ctx, key, tokens, expiry)
	s.done("add_spend", start, err)
	if err == nil {
		s.m.spent(key, tokens) // spend.go
	}
	return total, err
}

func (s *meteredStore) Spend(ctx context.Context, keys ...string) ([]approval.Spent, error) {
	start := time.Now()
	l, err := s.inner.Spend(ctx, keys...)
	s.done("spend", start, err)
	return l, err
}
