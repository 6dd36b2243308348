package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/countersign/countersign/agent"
)

// tracedModel makes a span of each model request, named and described
// with OpenTelemetry's gen_ai semantic conventions: the operation (chat),
// the model, the tokens in and out, why it stopped. Never the messages.
// It forwards everything: agent.Model is its one method, and the request
// (with its Text callback) passes on untouched.
type tracedModel struct {
	next   agent.Model
	tracer trace.Tracer
	model  string
}

var _ agent.Model = tracedModel{}

// Complete calls the model under a span.
func (m tracedModel) Complete(ctx context.Context, req agent.Request) (agent.Response, error) {
	ctx, sp := m.tracer.Start(ctx, "chat "+m.model, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(semconv.GenAIOperationNameChat, semconv.GenAIProviderNameOpenAI, semconv.GenAIRequestModel(m.model)))
	defer sp.End()
	resp, err := m.next.Complete(ctx, req)
	if err != nil {
		sp.SetStatus(codes.Error, "the model request failed")
		return resp, err
	}
	sp.SetAttributes(semconv.GenAIUsageInputTokens(resp.Usage.PromptTokens), semconv.GenAIUsageOutputTokens(resp.Usage.CompletionTokens))
	if resp.FinishReason != "" {
		sp.SetAttributes(semconv.GenAIResponseFinishReasons(resp.FinishReason))
	}
	return resp, nil
}
