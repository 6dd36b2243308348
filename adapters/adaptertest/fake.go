package adaptertest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/countersign/countersign/adapters"
)

// Fake is an in-memory chat platform and its adapter in one: it has
// buttons, redelivers events on request, and keeps every message and
// private notice for inspection. Bot tests use it where the terminal's lack
// of buttons would hide a path; the suite runs against it too, so the
// optional parts of the suite (buttons, redelivery) are exercised.
type Fake struct {
	name   string
	events chan adapters.Event

	ids *adapters.EventIDs

	mu         sync.Mutex
	closed     bool
	seq        int // message refs
	last       adapters.Event
	messages   map[string]adapters.Content // ref → what it shows now
	posted     []string                    // refs in the order posted
	notices    map[string][]string         // user id → notices
	replies    []any                       // Notice.Reply of every notice that had one
	updates    map[string]int              // ref → Update calls
	failUpdate func(ref string, n int) error
	extras     *adapters.Extras // nil: buttons alone
}

var _ adapters.Adapter = (*Fake)(nil)

// NewFake returns a fake platform called name.
func NewFake(name string) *Fake {
	return &Fake{
		name:     name,
		events:   make(chan adapters.Event, 256),
		ids:      adapters.NewEventIDs(),
		messages: map[string]adapters.Content{},
		updates:  map[string]int{},
		notices:  map[string][]string{},
	}
}

// Name returns the platform's name.
func (f *Fake) Name() string { return f.name }

// Extras are buttons, unless SetExtras said otherwise.
func (f *Fake) Extras() adapters.Extras {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.extras == nil {
		return adapters.Extras{Buttons: true}
	}
	return *f.extras
}

// SetExtras makes the fake declare x instead of buttons alone, for a test
// of what the bot does without (or with) an extra. Call it before the bot
// starts: the bot reads the extras once.
func (f *Fake) SetExtras(x adapters.Extras) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.extras = &x
}

// Run delivers the events queued by Say, Click and Redeliver, in order.
func (f *Fake) Run(ctx context.Context, h adapters.Handler) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-f.events:
			if !ok {
				return nil
			}
			h.Handle(ctx, e)
		}
	}
}

// Post stores a message and returns its reference.
func (f *Fake) Post(_ context.Context, to adapters.Place, c adapters.Content) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	ref := to.Channel + "/" + strconv.Itoa(f.seq)
	f.messages[ref] = c
	f.posted = append(f.posted, ref)
	return ref, nil
}

// Update replaces a stored message. A message that was never posted, or
// was deleted, is gone (adapters.ErrGone); FailUpdates makes it fail in
// other ways.
func (f *Fake) Update(_ context.Context, _ adapters.Place, ref string, c adapters.Content) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.updates[ref]++
	if f.failUpdate != nil {
		if err := f.failUpdate(ref, f.updates[ref]); err != nil {
			return err
		}
	}
	if _, ok := f.messages[ref]; !ok {
		return fmt.Errorf("update message %s: %w", ref, adapters.ErrGone)
	}
	f.messages[ref] = c
	return nil
}

// FailUpdates makes Update return fail(ref, n) when that is not nil, where
// n counts the updates of ref so far, this one included: a test plays a
// platform that rate-limits (adapters.RateLimitError) or errs.
func (f *Fake) FailUpdates(fail func(ref string, n int) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failUpdate = fail
}

// Delete removes a message, as a person deleting it would.
func (f *Fake) Delete(ref string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.messages, ref)
}

// Updates returns how many times Update was called for ref, failed
// calls included.
func (f *Fake) Updates(ref string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.updates[ref]
}

// Notify stores a private notice for its user, and the reply handle it
// answered (see Replies).
func (f *Fake) Notify(_ context.Context, n adapters.Notice) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notices[n.User.ID] = append(f.notices[n.User.ID], n.Text)
	if n.Reply != nil {
		f.replies = append(f.replies, n.Reply)
	}
	return nil
}

// Replies returns the Event.Reply handles that notices answered, oldest
// first: the fake sets each event's Reply to its id.
func (f *Fake) Replies() []any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]any(nil), f.replies...)
}

// Deliver queues e as it is, as the platform sends an event: a test
// delivers one event to two replicas, or one the fake would not make.
func (f *Fake) Deliver(t testing.TB, e adapters.Event) {
	t.Helper()
	f.deliver(t, e)
}

// deliver queues an event, as the platform sends one.
func (f *Fake) deliver(t testing.TB, e adapters.Event) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		t.Fatalf("event after End: %+v", e)
	}
	f.last = e
	select {
	case f.events <- e:
	default:
		t.Fatalf("more than %d events waiting", cap(f.events))
	}
}

func (f *Fake) nextID() string { return f.ids.Next() }

// Say delivers a message from u and returns its event id.
func (f *Fake) Say(t testing.TB, u adapters.User, p adapters.Place, text string) string {
	t.Helper()
	id := f.nextID()
	e := adapters.Event{ID: id, User: u, Place: p, Text: text, Reply: id}
	f.deliver(t, e)
	return e.ID
}

// Click delivers u's click on button b of the card ref, with the reason a
// cancel dialog would collect.
func (f *Fake) Click(t testing.TB, u adapters.User, p adapters.Place, ref string, b adapters.Button, reason string) {
	t.Helper()
	d := adapters.Decision{ApprovalID: b.Value, Approve: b.Approve, Stop: b.Stop, Ref: ref}
	if !b.Approve {
		d.Reason = reason
	}
	id := f.nextID()
	f.deliver(t, adapters.Event{ID: id, User: u, Place: p, Decision: &d, Reply: id})
}

// Redeliver delivers the last event again, marked as a retry.
func (f *Fake) Redeliver(t testing.TB) {
	t.Helper()
	f.mu.Lock()
	e := f.last
	f.mu.Unlock()
	e.Redelivered = true
	f.deliver(t, e)
}

// End ends the input: Run returns once the queued events are handled.
func (f *Fake) End(testing.TB) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.closed = true
		close(f.events)
	}
}

// Message returns what message ref shows now.
func (f *Fake) Message(ref string) (adapters.Content, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.messages[ref]
	return c, ok
}

// Messages returns every message as it shows now, in the order posted,
// with its reference.
func (f *Fake) Messages() (refs []string, contents []adapters.Content) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ref := range f.posted {
		refs = append(refs, ref)
		contents = append(contents, f.messages[ref])
	}
	return refs, contents
}

// Notices returns the private notices u received, oldest first.
func (f *Fake) Notices(u adapters.User) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.notices[u.ID]...)
}

// Flatten writes a message as the text a person reads: the text, every
// field of a card, and each button as its Words.
func Flatten(c adapters.Content) string {
	var b strings.Builder
	add := func(s string) {
		if s != "" {
			b.WriteString(s)
			b.WriteByte('\n')
		}
	}
	add(c.Text)
	if k := c.Card; k != nil {
		add(k.Title)
		add("approval " + k.ApprovalID + " · " + k.Tool + " · risk " + k.Risk)
		add("asked by " + k.Requester + " in " + k.Conversation)
		op, _ := adapters.Visible(k.Operation)
		add(op)
		for _, r := range k.Reasons {
			add(r)
		}
		if k.LLMLevel != "" {
			add("the model said " + k.LLMLevel)
		}
		if p := k.Preview; p != nil {
			add(p.Summary)
			for _, it := range p.Items {
				add(it)
			}
			add(p.Err)
		}
		add(k.StateLine)
		add(k.Output)
		add(k.Note)
		for _, bt := range k.Buttons {
			add(bt.Words())
		}
	}
	return b.String()
}

// FakeHarness is the suite's harness for Fake.
type FakeHarness struct{ F *Fake }

var _ Redeliverer = FakeHarness{}

// Adapter returns the fake.
func (h FakeHarness) Adapter() adapters.Adapter { return h.F }

// Place returns a channel and thread of the fake platform.
func (h FakeHarness) Place() adapters.Place { return adapters.Place{Channel: "C1", Thread: "T1"} }

// Say delivers a message.
func (h FakeHarness) Say(t testing.TB, u adapters.User, p adapters.Place, text string) {
	h.F.Say(t, u, p, text)
}

// Decide clicks a button.
func (h FakeHarness) Decide(t testing.TB, u adapters.User, p adapters.Place, ref string, b adapters.Button, reason string) {
	h.F.Click(t, u, p, ref, b, reason)
}

// View flattens a stored message.
func (h FakeHarness) View(t testing.TB, _ adapters.Place, ref string) string {
	c, ok := h.F.Message(ref)
	if !ok {
		t.Fatalf("no message %s was posted", ref)
	}
	return Flatten(c)
}

// Notices returns u's notices.
func (h FakeHarness) Notices(_ testing.TB, u adapters.User) []string { return h.F.Notices(u) }

// Redeliver redelivers the last event.
func (h FakeHarness) Redeliver(t testing.TB) { h.F.Redeliver(t) }

// End ends the input.
func (h FakeHarness) End(t testing.TB) { h.F.End(t) }
