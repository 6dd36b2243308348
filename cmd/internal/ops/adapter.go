package ops

import (
	"context"
	"time"

	"github.com/countersign/countersign/adapters"
)

// meteredAdapter counts one platform's chat API calls, their errors and
// rate limits, and times the bot's handler on each event it delivers. It
// forwards the adapter's extras (adapters.Extras), every one: those that
// call the platform (the status, the stream, the home) counted like Post,
// the others as they are.
type meteredAdapter struct {
	inner    adapters.Adapter
	m        *Metrics
	platform string
	extras   adapters.Extras
}

var _ adapters.Adapter = (*meteredAdapter)(nil)

// MeterAdapter wraps ad. The result declares the same extras as ad.
func (m *Metrics) MeterAdapter(ad adapters.Adapter) adapters.Adapter {
	ma := &meteredAdapter{inner: ad, m: m, platform: ad.Name()}
	m.platform(ma.platform)
	x := ad.Extras()
	m.undelivered.add(ma.platform, x.Undelivered)
	if x.Status != nil {
		x.Status = meteredStatus{ma, x.Status}
		m.chatOp(ma.platform, "set_status")
	}
	if x.Stream != nil {
		x.Stream = meteredStreams{ma, x.Stream}
		m.chatOp(ma.platform, "start_stream", "stream_text", "stream_task", "stream_stop")
	}
	if x.Home != nil {
		x.Home = meteredHome{ma, x.Home}
		m.chatOp(ma.platform, "publish_home")
		m.chatOp(ma.platform, "member")
	}
	if x.Permalink != nil {
		x.Permalink = meteredPermalink{ma, x.Permalink}
		m.chatOp(ma.platform, "permalink")
	}
	if x.ByEmail != nil {
		x.ByEmail = meteredByEmail{ma, x.ByEmail}
		m.chatOp(ma.platform, "user_by_email")
	}
	ma.extras = x
	return ma
}

// meteredByEmail counts the look-ups of a person by e-mail.
type meteredByEmail struct {
	a *meteredAdapter
	f adapters.EmailFinder
}

func (f meteredByEmail) UserByEmail(ctx context.Context, email string) (string, error) {
	id, err := f.f.UserByEmail(ctx, email)
	f.a.called("user_by_email", err)
	return id, err
}

// meteredPermalink counts the look-ups of a card's address.
type meteredPermalink struct {
	a *meteredAdapter
	p adapters.Permalinker
}

func (p meteredPermalink) Permalink(ctx context.Context, to adapters.Place, ref string) (string, error) {
	link, err := p.p.Permalink(ctx, to, ref)
	p.a.called("permalink", err)
	return link, err
}

// Extras are the wrapped adapter's, those that call the platform metered.
func (a *meteredAdapter) Extras() adapters.Extras { return a.extras }

// meteredStatus counts a turn's status calls.
type meteredStatus struct {
	*meteredAdapter
	s adapters.TurnStatus
}

func (s meteredStatus) SetStatus(ctx context.Context, to adapters.Place, text string) error {
	err := s.s.SetStatus(ctx, to, text)
	s.called("set_status", err)
	return err
}

// meteredStreams counts the start of a turn's stream and each of its calls.
type meteredStreams struct {
	*meteredAdapter
	s adapters.TaskStream
}

func (s meteredStreams) StartStream(ctx context.Context, to adapters.Place, asker adapters.User) (adapters.Stream, error) {
	st, err := s.s.StartStream(ctx, to, asker)
	s.called("start_stream", err)
	if err != nil {
		return nil, err
	}
	return meteredStream{s.meteredAdapter, st}, nil
}

type meteredStream struct {
	a *meteredAdapter
	s adapters.Stream
}

func (s meteredStream) Text(ctx context.Context, markdown string) error {
	err := s.s.Text(ctx, markdown)
	s.a.called("stream_text", err)
	return err
}

func (s meteredStream) Task(ctx context.Context, t adapters.Task) error {
	err := s.s.Task(ctx, t)
	s.a.called("stream_task", err)
	return err
}

func (s meteredStream) Stop(ctx context.Context, final string) error {
	err := s.s.Stop(ctx, final)
	s.a.called("stream_stop", err)
	return err
}

// meteredHome counts the publications of a person's inbox.
type meteredHome struct {
	a *meteredAdapter
	h adapters.Home
}

func (h meteredHome) PublishHome(ctx context.Context, user adapters.User, items []adapters.HomeItem) error {
	err := h.h.PublishHome(ctx, user, items)
	h.a.called("publish_home", err)
	return err
}

func (h meteredHome) Member(ctx context.Context, channel string, user adapters.User) (bool, error) {
	ok, err := h.h.Member(ctx, channel, user)
	h.a.called("member", err)
	return ok, err
}

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
