// Package ops measures the bot for its operators: one Prometheus registry
// per process, filled by decorators around the approval store (store.go),
// the model (model.go) and the chat adapters (adapter.go), so that the core
// packages never see the client library; Server (server.go) serves it with
// /healthz and /readyz. cmd/countersign wires it when ops.listen is set.
package ops

import (
	"context"
	"github.com/countersign/countersign/approval"
	"log/slog"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Config is the ops section: where metrics and health checks are
// served. Off when Listen is empty.
type Config struct {
	// Listen is the address of /metrics, /healthz and /readyz, e.g.
	// "127.0.0.1:9464". Empty: nothing is served and nothing is measured.
	Listen string `yaml:"listen"`
}

// Buckets of the histograms, in seconds, each for what it times.
var (
	storeBuckets    = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}
	modelBuckets    = []float64{.1, .25, .5, 1, 2, 4, 8, 15, 30, 60, 120}
	runBuckets      = []float64{.005, .01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}
	decisionBuckets = []float64{1, 5, 10, 30, 60, 120, 300, 600, 900, 1800, 3600}
	ackBuckets      = []float64{.00001, .00005, .0001, .0005, .001, .005, .01, .05, .1, .5, 1, 3}
)

// The label values that are known in advance; each series starts at zero,
// so that a family shows before its first event.
var (
	chatOps        = []string{"post", "update", "notify"}
	modelErrKinds  = []string{"permanent", "transient", "cancelled"}
	tokenKinds     = []string{"prompt", "completion"}
	approvalStates = []string{"approved", "cancelled", "expired"}
	// storeOps are the store's operations (store.go names each).
	storeOps = []string{"create", "get", "decide", "claim", "finish", "set_message_ref", "set_preview",
		"list_pending", "due", "heartbeat", "unsettled", "finish_abandoned", "settle", "save_turn",
		"get_turn", "resolve", "delete_turn", "load_conversation", "save_conversation", "audit",
		"audit_log", "first_delivery", "count_pending", "approve", "progress", "reset_votes",
		"inbox_accept", "inbox_answered", "inbox_beat", "inbox_leave", "inbox_take_over",
		"pin_mcp", "accept_mcp", "mcp_pins", "add_spend", "spend",
		"find_pending", "pending_channels"}
)

// Metrics is the process's registry and every countersign_ collector.
type Metrics struct {
	reg   *prometheus.Registry
	names []string // the countersign_ families, in registration order
	log   *slog.Logger
	now   func() time.Time

	assessments *prometheus.CounterVec   // tool, decision, rule
	agentCalls  *prometheus.CounterVec   // agent, decision: the gateway's callers
	approvals   *prometheus.CounterVec   // outcome
	clicks      *prometheus.CounterVec   // outcome
	decision    *prometheus.HistogramVec // outcome
	toolRun     *prometheus.HistogramVec // tool, status

	modelLatency prometheus.Histogram
	modelErrors  *prometheus.CounterVec // kind
	modelTokens  *prometheus.CounterVec // kind
	spend        *prometheus.CounterVec // channel (spend.go)

	chatCalls    *prometheus.CounterVec   // platform, op
	chatErrors   *prometheus.CounterVec   // platform, op
	rateLimits   *prometheus.CounterVec   // platform, op
	rateLimitSec *prometheus.CounterVec   // platform
	ack          *prometheus.HistogramVec // platform

	storeLatency *prometheus.HistogramVec // op
	storeErrors  *prometheus.CounterVec   // op

	pending     *pendingCollector
	undelivered *undeliveredCollector

	cards cardTimes // approval id → when its card was audited
	tools []string  // the tool names a label may hold; others are "other"
	// spendNames are the channels whose spend is counted apart (spend.go).
	spendNames []string
}

// NewMetrics registers every collector on a fresh registry, with the Go
// runtime's and the process's own.
func NewMetrics(toolNames []string, log *slog.Logger) *Metrics {
	if log == nil {
		log = slog.Default()
	}
	m := &Metrics{reg: prometheus.NewRegistry(), log: log, now: time.Now, tools: toolNames}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.cards.init(cardMemory)

	m.assessments = m.counterVec("countersign_assessments_total",
		"Tool calls assessed by the risk policy, by tool, decision (auto, confirm, block) and the rule that decided.",
		"tool", "decision", "rule")
	m.agentCalls = m.counterVec("countersign_agent_calls_total",
		"Calls other agents made through the gateway, by agent (gateway.agents) and decision (auto, confirm, block).",
		"agent", "decision")
	m.approvals = m.counterVec("countersign_approvals_total",
		"Approvals decided, by outcome (approved, cancelled, expired).", "outcome")
	m.clicks = m.counterVec("countersign_approval_clicks_total",
		"Decisions people sent on approval cards, by outcome (approved, cancelled, expired, lost, refused, reasked).", "outcome")
	m.decision = m.histogramVec("countersign_approval_decision_seconds",
		"Time from an approval card to its decision, by outcome (approved, cancelled, expired).", decisionBuckets, "outcome")
	m.toolRun = m.histogramVec("countersign_tool_run_duration_seconds",
		"How long tool runs took, by tool and result status.", runBuckets, "tool", "status")

	m.modelLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "countersign_model_request_duration_seconds", Help: "Model calls, from request to answer or error, retries included.",
		Buckets: modelBuckets,
	})
	m.register("countersign_model_request_duration_seconds", m.modelLatency)
	m.modelErrors = m.counterVec("countersign_model_errors_total",
		"Model calls that returned no message, by kind (permanent: fix the configuration; transient: retries exhausted; cancelled).", "kind")
	m.modelTokens = m.counterVec("countersign_model_tokens_total",
		"Tokens the model reported using, by kind (prompt, completion).", "kind")
	m.spend = m.counterVec("countersign_channel_tokens_total",
		"Tokens the model spent on turns, by channel: platform:channel for the channels bot.channels names, \"other\" for the rest (llm.budget counts the same).", "channel")
	m.spend.WithLabelValues(otherChannel)
	for _, k := range modelErrKinds {
		m.modelErrors.WithLabelValues(k)
	}
	for _, k := range tokenKinds {
		m.modelTokens.WithLabelValues(k)
	}

	m.chatCalls = m.counterVec("countersign_chat_api_calls_total",
		"Calls to a chat platform's API, by platform and operation (post, update, notify; and, where the adapter has the extra, set_status, start_stream, stream_text, stream_task, stream_stop, publish_home).", "platform", "op")
	m.chatErrors = m.counterVec("countersign_chat_api_errors_total",
		"Chat API calls that failed, rate limits included, by platform and operation.", "platform", "op")
	m.rateLimits = m.counterVec("countersign_chat_rate_limits_total",
		"Chat API calls refused by a rate limit, by platform and operation.", "platform", "op")
	m.rateLimitSec = m.counterVec("countersign_chat_rate_limit_wait_seconds_total",
		"Seconds the chat platforms asked the bot to wait after a rate limit, by platform.", "platform")
	m.ack = m.histogramVec("countersign_event_ack_seconds",
		"The bot's share of acknowledging a chat event: how long its handler took to take it, by platform.", ackBuckets, "platform")

	m.storeLatency = m.histogramVec("countersign_store_operation_seconds",
		"Approval store operations, by operation.", storeBuckets, "op")
	m.storeErrors = m.counterVec("countersign_store_errors_total",
		"Approval store operations that failed (not found and conflicts are answers, not failures), by operation.", "op")
	for _, op := range storeOps {
		m.storeErrors.WithLabelValues(op)
	}
	for _, o := range approvalStates {
		m.approvals.WithLabelValues(o)
	}

	m.pending = &pendingCollector{log: log, desc: prometheus.NewDesc("countersign_pending_approvals",
		"Approvals waiting for a decision, across every platform and channel (when the store can count them).", nil, nil)}
	m.register("countersign_pending_approvals", m.pending)
	m.undelivered = newUndeliveredCollector()
	m.register("countersign_chat_undelivered_total", m.undelivered)
	return m
}

// Names are the countersign_ metric families, in registration order.
func (m *Metrics) Names() []string { return slices.Clone(m.names) }

func (m *Metrics) register(name string, c prometheus.Collector) {
	m.reg.MustRegister(c)
	m.names = append(m.names, name)
}

func (m *Metrics) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	m.register(name, v)
	return v
}

func (m *Metrics) histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	v := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	m.register(name, v)
	return v
}

// platform starts the series of one chat platform at zero.
func (m *Metrics) platform(name string) {
	m.chatOp(name, chatOps...)
	m.rateLimitSec.WithLabelValues(name)
}

// chatOp starts the counts of a platform's operations at zero.
func (m *Metrics) chatOp(platform string, ops ...string) {
	for _, op := range ops {
		m.chatCalls.WithLabelValues(platform, op)
		m.chatErrors.WithLabelValues(platform, op)
		m.rateLimits.WithLabelValues(platform, op)
	}
}

// Agents starts the series of the gateway's agents (gateway.agents) at
// zero, so that each shows from the start; without a gateway the metric
// has no series.
func (m *Metrics) Agents(names []string) {
	for _, n := range names {
		for _, d := range []approval.AuditDecision{approval.DecisionAuto, approval.DecisionConfirm, approval.DecisionBlock} {
			m.agentCalls.WithLabelValues(n, string(d))
		}
	}
}

// tool is a tool's label value: its name when it is one of the bot's
// tools, else "other", so that a label never holds what a model invented.
func (m *Metrics) tool(name string) string {
	if slices.Contains(m.tools, name) {
		return name
	}
	return "other"
}

// pendingTimeout bounds the count a scrape waits for.
const pendingTimeout = 2 * time.Second

// pendingCollector reports countersign_pending_approvals, counted by the
// store at scrape time, and nothing when the count failed (a missing
// value, not a wrong one).
type pendingCollector struct {
	desc    *prometheus.Desc
	log     *slog.Logger
	counter approval.Store // nil until the store is metered: not reported
}

func (c *pendingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *pendingCollector) Collect(ch chan<- prometheus.Metric) {
	if c.counter == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), pendingTimeout)
	defer cancel()
	n, err := c.counter.CountPending(ctx, "", "")
	if err != nil {
		c.log.Warn("count pending approvals for the metrics", "err", err)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n))
}
