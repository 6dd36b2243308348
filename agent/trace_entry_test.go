package agent_test

import (
	"context"
	"encoding/json"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestDirectCommandHasItsOwnTrace: a direct command enters the gate
// outside any turn; its judgement and run are children of one
// countersign.call span, not roots of traces of their own.
func TestDirectCommandHasItsOwnTrace(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	e := newEnv(t, memoryBackend)
	e.tracer = tp.Tracer("test")
	a := e.agent(e.open())
	args, _ := json.Marshal(map[string]string{"command": "ls"})
	if err := a.Direct(context.Background(), conv, alice, "execute_command", args); err != nil {
		t.Fatal(err)
	}
	spans := rec.Ended()
	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byName[s.Name()] = s
	}
	root, ok := byName["countersign.call"]
	if !ok {
		t.Fatalf("no countersign.call span among %d spans", len(spans))
	}
	if root.Parent().IsValid() {
		t.Errorf("countersign.call has a parent")
	}
	for _, name := range []string{"countersign.judge", "countersign.run"} {
		s, ok := byName[name]
		if !ok {
			t.Errorf("no %s span", name)
			continue
		}
		if s.Parent().SpanID() != root.SpanContext().SpanID() {
			t.Errorf("%s's parent is not the call's span", name)
		}
	}
}
