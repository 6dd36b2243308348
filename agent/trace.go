package agent

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
)

// The agent's part of a turn's trace (issue 28; docs/telemetry.md):
//
//	countersign.turn            a person's message, the model loop
//	(countersign.call           a call outside a turn: a direct command,
//	                            an edit, another agent's call; the same
//	                            children as a turn's)
//	  countersign.judge         one call at the gate: tool, rule, decision
//	  countersign.run           a call that ran: exit code, fenced or not
//	  countersign.card.wait     a card, from its creation to its decision
//	  countersign.decision      the click that decided it, on any replica
//	    countersign.run
//	    (the resumed turn's model requests and chat calls)
//
// The model requests and the chat platforms' API calls are spans too,
// made by the tracer cmd wires around the model and the adapters' HTTP
// clients; they nest under whichever of these is in the context.
//
// No attribute holds a call's arguments, its operation text or its
// output: only the tool's name, the rule and decision, and numbers. With
// Deps.Tracer nil every helper here returns at once, allocating nothing
// (TestTraceOffAllocs).

// Span names and attribute keys of the agent's spans.
const (
	spanTurn     = "countersign.turn"
	spanCall     = "countersign.call"
	spanJudge    = "countersign.judge"
	spanRun      = "countersign.run"
	spanCardWait = "countersign.card.wait"
	spanDecision = "countersign.decision"

	attrPlatform  = attribute.Key("countersign.platform")
	attrChannel   = attribute.Key("countersign.channel")
	attrTool      = attribute.Key("countersign.tool")
	attrSource    = attribute.Key("countersign.source")
	attrRule      = attribute.Key("countersign.rule")
	attrDecision  = attribute.Key("countersign.decision")
	attrRisk      = attribute.Key("countersign.risk")
	attrApproval  = attribute.Key("countersign.approval")
	attrState     = attribute.Key("countersign.state")
	attrDecidedBy = attribute.Key("countersign.decided_by")
	attrWaitMS    = attribute.Key("countersign.wait_ms")
	attrStatus    = attribute.Key("countersign.run.status")
	attrExitCode  = attribute.Key("countersign.run.exit_code")
	attrDuration  = attribute.Key("countersign.run.duration_ms")
	attrFenced    = attribute.Key("countersign.run.fenced")
	attrApproved  = attribute.Key("countersign.run.approved")
)

// off is the span every helper returns when tracing is off: a value of
// size zero, so it costs no allocation as a trace.Span.
var off trace.Span = noop.Span{}

// traceTurn starts the span of a turn.
func (a *Agent) traceTurn(ctx context.Context, conv approval.Conversation) (context.Context, trace.Span) {
	if a.tracer == nil {
		return ctx, off
	}
	return a.tracer.Start(ctx, spanTurn, trace.WithAttributes(
		attrPlatform.String(conv.Platform), attrChannel.String(conv.Channel)))
}

// traceEntry starts the span of a call that entered the gate outside a
// turn (a direct command, an edit, another agent's call), so that its
// judgement and run have a trace of their own; inside a turn it starts
// nothing (the turn's span is theirs).
func (a *Agent) traceEntry(ctx context.Context, e entry) (context.Context, trace.Span) {
	if a.tracer == nil || trace.SpanFromContext(ctx).SpanContext().IsValid() {
		return ctx, off
	}
	return a.tracer.Start(ctx, spanCall, trace.WithAttributes(
		attrPlatform.String(e.conv.Platform), attrChannel.String(e.conv.Channel), attrSource.String(string(e.from))))
}

// traceJudge starts the span of one call's judgement at the gate; endJudge
// ends it with the verdict.
func (a *Agent) traceJudge(ctx context.Context, e entry) trace.Span {
	if a.tracer == nil {
		return off
	}
	_, sp := a.tracer.Start(ctx, spanJudge, trace.WithAttributes(
		attrTool.String(e.tool), attrSource.String(string(e.from))))
	return sp
}

func endJudge(sp trace.Span, v risk.Verdict) {
	if !sp.IsRecording() {
		return
	}
	sp.SetAttributes(attrRule.String(string(v.Rule)), attrDecision.String(string(v.Decision)), attrRisk.String(string(v.Risk)))
	sp.End()
}

// traceRun starts the span of a tool's run; endRun ends it with the result.
func (a *Agent) traceRun(ctx context.Context, tool string, opts tools.RunOptions) (context.Context, trace.Span) {
	if a.tracer == nil {
		return ctx, off
	}
	return a.tracer.Start(ctx, spanRun, trace.WithAttributes(
		attrTool.String(tool), attrApproved.Bool(!opts.AutoRun && opts.AutoBy == "")))
}

func endRun(sp trace.Span, res tools.Result) {
	if !sp.IsRecording() {
		return
	}
	sp.SetAttributes(attrStatus.String(string(res.Status)), attrDuration.Int64(res.DurationMS), attrFenced.Bool(res.Fenced))
	if res.ExitCode != nil {
		sp.SetAttributes(attrExitCode.Int(*res.ExitCode))
	}
	if res.Status != tools.StatusOK {
		sp.SetStatus(codes.Error, string(res.Status))
	}
	sp.End()
}

// traceParent is the W3C trace context of ctx's span, kept with a card
// (approval.Approval.TraceParent), or "" when tracing is off.
func (a *Agent) traceParent(ctx context.Context) string {
	if a.tracer == nil {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c["traceparent"]
}

// traceDecision joins the trace of the turn that made rec's card, now
// that rec is decided: it records the card's wait (from its creation to
// the decision, who decided) and starts the span of the decision's
// consequences (the run, the resumed turn), returned with its context.
func (a *Agent) traceDecision(ctx context.Context, rec *approval.Approval) (context.Context, trace.Span) {
	if a.tracer == nil {
		return ctx, off
	}
	parent := ctx
	if rec.TraceParent != "" {
		parent = propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": rec.TraceParent})
	}
	decided := rec.DecidedAt
	if decided.IsZero() {
		decided = a.now()
	}
	by := ""
	if rec.DecidedBy != nil {
		by = rec.DecidedBy.ID
	}
	attrs := []attribute.KeyValue{
		attrApproval.String(rec.ID), attrTool.String(rec.Tool), attrState.String(string(rec.State)), attrDecidedBy.String(by),
	}
	_, wait := a.tracer.Start(parent, spanCardWait, trace.WithTimestamp(rec.CreatedAt),
		trace.WithAttributes(append(attrs, attrWaitMS.Int64(decided.Sub(rec.CreatedAt).Milliseconds()))...))
	wait.End(trace.WithTimestamp(decided))
	return a.tracer.Start(parent, spanDecision, trace.WithAttributes(attrs...))
}
