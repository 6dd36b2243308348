package agent

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
)

// traceSteps runs every tracing helper once, the way a turn with a card,
// its judgement, a run and a decision do.
func traceSteps(a *Agent, ctx context.Context, conv approval.Conversation, e entry, rec *approval.Approval) {
	ctx, turn := a.traceTurn(ctx, conv)
	endJudge(a.traceJudge(ctx, e), risk.Verdict{Decision: risk.Confirm, Rule: risk.RuleDanger})
	rec.TraceParent = a.traceParent(ctx)
	turn.End()
	ctx, decision := a.traceDecision(context.Background(), rec)
	_, run := a.traceRun(ctx, e.tool, tools.RunOptions{})
	endRun(run, tools.Result{Status: tools.StatusOK})
	decision.End()
}

func traceFixture() (approval.Conversation, entry, *approval.Approval) {
	conv := approval.Conversation{Platform: "slack", Channel: "C1"}
	now := time.Now()
	rec := &approval.Approval{ID: "a1", Tool: "execute_command", State: approval.Approved, CreatedAt: now.Add(-time.Second), DecidedAt: now,
		DecidedBy: &approval.User{ID: "U1"}}
	return conv, entry{tool: "execute_command", from: fromModel}, rec
}

// TestTraceOffAllocs: with tracing off (no Deps.Tracer), the spans of a
// turn, a judgement, a run and a decision cost no allocation at all.
func TestTraceOffAllocs(t *testing.T) {
	a := &Agent{}
	conv, e, rec := traceFixture()
	ctx := context.Background()
	if n := testing.AllocsPerRun(200, func() { traceSteps(a, ctx, conv, e, rec) }); n != 0 {
		t.Errorf("tracing off: %v allocations per turn's spans, want 0", n)
	}
	if rec.TraceParent != "" {
		t.Errorf("tracing off kept a trace context %q with the card", rec.TraceParent)
	}
}

// BenchmarkTraceSteps measures the spans of a turn with a card, off and
// on (an SDK provider with no exporter: what the spans themselves cost).
func BenchmarkTraceSteps(b *testing.B) {
	conv, e, rec := traceFixture()
	ctx := context.Background()
	b.Run("off", func(b *testing.B) {
		a := &Agent{}
		b.ReportAllocs()
		for b.Loop() {
			traceSteps(a, ctx, conv, e, rec)
		}
	})
	b.Run("on", func(b *testing.B) {
		a := &Agent{tracer: sdktrace.NewTracerProvider().Tracer("bench"), now: time.Now}
		b.ReportAllocs()
		for b.Loop() {
			traceSteps(a, ctx, conv, e, rec)
		}
	})
}
