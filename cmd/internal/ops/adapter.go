package ops

import (
	"context"
	"time"

	"github.com/countersign/countersign/adapters"
)

// meteredAdapter counts one platform's chat API calls, their errors and
// rate limits, and times the bot's handler on each event it delivers.
type meteredAdapter struct {
	inner    adapters.Adapter
	m        *Metrics
	platform string
}

// meteredInteractive is meteredAdapter for an adapter with buttons
// (adapters.Interactive), which the bot checks at run time.
type meteredInteractive struct {
	*meteredAdapter
	i adapters.Interactive
}

var (
	_ adapters.Adapter     = (*meteredAdapter)(nil)
	_ adapters.Interactive = meteredInteractive{}
)

// MeterAdapter wraps ad; the result is adapters.Interactive exactly when
// ad is. The bot uses no other optional capability of an adapter.
func (m *Metrics) MeterAdapter(ad adapters.Adapter) adapters.Adapter {
	ma := &meteredAdapter{inner: ad, m: m, platform: ad.Name()}
	m.platform(ma.platform)
	m.undelivered.add(ma.platform, ad)
	if i, ok := ad.(adapters.Interactive); ok {
		return meteredInteractive{ma, i}
	}
	return ma
}

func (i meteredInteractive) Buttons() bool { return i.i.Buttons() }

func (a *meteredAdapter) Name() string { return a.inner.Name() }

// Run times h.Handle, which returns at once by contract: its time is the
// bot's share of the acknowledgement the platform waits for.
func (a *meteredAdapter) Run(ctx context.Context, h adapters.Handler) error {
	ack := a.m.ack.WithLabelValues(a.platform)
	return a.inner.Run(ctx, adapters.HandlerFunc(func(ctx context.Context, e adapters.Event) {
		start := time.Now()
		h.Handle(ctx, e)
		ack.Observe(time.Since(start).Seconds())
	}))
}

func (a *meteredAdapter) Post(ctx context.Context, to adapters.Place, c adapters.Content) (string, error) {
	ref, err := a.inner.Post(ctx, to, c)
	a.called("post", err)
	return ref, err
}

func (a *meteredAdapter) Update(ctx context.Context, to adapters.Place, ref string, c adapters.Content) error {
	err := a.inner.Update(ctx, to, ref, c)
	a.called("update", err)
	return err
}

func (a *meteredAdapter) Notify(ctx context.Context, n adapters.Notice) error {
	err := a.inner.Notify(ctx, n)
	a.called("notify", err)
	return err
}

// called counts one API call and how it failed.
func (a *meteredAdapter) called(op string, err error) {
	a.m.chatCalls.WithLabelValues(a.platform, op).Inc()
	if err == nil {
		return
	}
	a.m.chatErrors.WithLabelValues(a.platform, op).Inc()
	if wait, ok := adapters.RetryAfter(err); ok {
		a.m.rateLimits.WithLabelValues(a.platform, op).Inc()
		a.m.rateLimitSec.WithLabelValues(a.platform).Add(max(wait, 0).Seconds())
	}
}
