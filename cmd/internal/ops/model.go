package ops

import (
	"context"
	"errors"
	"time"

	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/agent/llm"
)

// meteredModel times each model call and counts its errors and tokens.
type meteredModel struct {
	inner agent.Model
	m     *Metrics
}

var _ agent.Model = meteredModel{}

// MeterModel wraps model; no model stays no model (the bot then offers
// direct commands only).
func (m *Metrics) MeterModel(model agent.Model) agent.Model {
	if model == nil {
		return nil
	}
	return meteredModel{inner: model, m: m}
}

func (mm meteredModel) Complete(ctx context.Context, req agent.Request) (agent.Response, error) {
	start := time.Now()
	resp, err := mm.inner.Complete(ctx, req)
	mm.m.modelLatency.Observe(time.Since(start).Seconds())
	if err != nil {
		mm.m.modelErrors.WithLabelValues(modelErrorKind(ctx, err)).Inc()
		return resp, err
	}
	mm.m.modelTokens.WithLabelValues("prompt").Add(float64(max(resp.Usage.PromptTokens, 0)))
	mm.m.modelTokens.WithLabelValues("completion").Add(float64(max(resp.Usage.CompletionTokens, 0)))
	return resp, nil
}

// modelErrorKind classes a model error: permanent (the configuration must
// change), cancelled (the caller gave up), or transient (retries ran out).
func modelErrorKind(ctx context.Context, err error) string {
	switch {
	case llm.Permanent(err):
		return "permanent"
	case errors.Is(ctx.Err(), context.Canceled):
		return "cancelled"
	}
	return "transient"
}
