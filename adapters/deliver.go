package adapters

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// This file is how an adapter keeps chat trouble from deleting anything: a
// post, an update or a notice that the platform refuses for now (a 429, a
// 5xx, a dropped connection) is tried again until its own deadline, in
// order per conversation, and what still could not be delivered is counted
// and said to the conversation once the platform answers again.

// ErrUnavailable is wrapped by an adapter's error when the platform failed
// for now (an HTTP 5xx, a connection that broke): the same call may work a
// moment later.
var ErrUnavailable = errors.New("the chat platform is unavailable for now")

// DefaultSendDeadline is how long Post, Update and Notify keep trying a
// message through rate limits and outages when their context has no
// deadline and the message is no card (a card's deadline is its
// ExpiresAt).
const DefaultSendDeadline = 5 * time.Minute

// Undeliverable is an extra (Extras.Undelivered): an adapter that counts the
// messages, cards and notices it gave up on after trying until their
// deadline (for a metric). Each is also said to its conversation once the
// platform answers again.
type Undeliverable interface {
	// Undelivered is how many sends were given up since the adapter was
	// made; it only grows.
	Undelivered() uint64
}

type onceKey struct{}

// TryOnce marks ctx so that Post, Update and Notify under it try once and
// return a *RateLimitError or ErrUnavailable at once, for a send the next
// one replaces (a progress update of a card): it is not counted as
// undelivered.
func TryOnce(ctx context.Context) context.Context {
	return context.WithValue(ctx, onceKey{}, true)
}

// TriesOnce reports whether ctx was marked by TryOnce.
func TriesOnce(ctx context.Context) bool {
	v, _ := ctx.Value(onceKey{}).(bool)
	return v
}

// Transient reports whether err is chat trouble worth waiting out: a rate
// limit or ErrUnavailable.
func Transient(err error) bool {
	_, limited := RetryAfter(err)
	return limited || errors.Is(err, ErrUnavailable)
}

// Deadline is the moment a send stops trying: ctx's deadline when it has
// one, else the card's expiry for a card that has one, else
// DefaultSendDeadline from now.
func Deadline(ctx context.Context, now time.Time, c *Card) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	if c != nil && !c.ExpiresAt.IsZero() && c.ExpiresAt.After(now) && (c.State == "" || c.State == "pending") {
		return c.ExpiresAt
	}
	return now.Add(DefaultSendDeadline)
}

// Sender retries an adapter's sends. Its zero value is not usable: make
// one with NewSender.
type Sender struct {
	// Base is the first pause after ErrUnavailable (doubling up to Max);
	// a rate limit waits what the platform asked, at least Base/4.
	Base, Max time.Duration
	// Now is the clock.
	Now func() time.Time
	// Tell says an owed apology in its place; it is called in the
	// background, under TryOnce, once a send succeeds again.
	Tell func(ctx context.Context, o Owed) error

	undelivered atomic.Uint64

	mu    sync.Mutex
	lanes map[string]*lane
	owed  []Owed
	// telling is set while owed apologies are on their way; probing
	// while a probe runs.
	telling, probing bool
	// ProbeEvery is how often owed apologies are tried when nothing else
	// is sent.
	ProbeEvery time.Duration
}

// Owed is what could not be delivered to one place, said there later.
type Owed struct {
	Place Place
	// User is set when what was lost was a private notice to them: the
	// apology goes to them privately.
	User User
	// What names each lost message in words ("the approval card for
	// abc123", "a reply"), at most maxWhat; More counts the rest.
	What []string
	More int
}

const maxWhat = 5

// Text is the sentence that tells o.
func (o Owed) Text(platform string) string {
	what := o.What
	if o.More > 0 {
		what = append(what[:len(what):len(what)], fmt.Sprintf("%d more", o.More))
	}
	return fmt.Sprintf("While %s was refusing messages I could not deliver %s; nothing was lost on my side, but please look again (or ask again) if you still need it.",
		platform, strings.Join(what, ", "))
}

// maxOwed bounds the apologies kept while the platform is down; beyond it
// the oldest are dropped (and were counted).
const maxOwed = 1000

type lane struct {
	sem  chan struct{}
	refs int
}

// NewSender makes a Sender with its pauses and clock.
func NewSender(tell func(ctx context.Context, o Owed) error) *Sender {
	return &Sender{Base: 250 * time.Millisecond, Max: 15 * time.Second, ProbeEvery: 30 * time.Second, Now: time.Now, Tell: tell, lanes: map[string]*lane{}}
}

// Undelivered is how many sends were given up.
func (s *Sender) Undelivered() uint64 { return s.undelivered.Load() }

// Send calls op until it succeeds, fails for good (an error that is not
// Transient), or the next try would fall after deadline; sends with the
// same key go one at a time, in the order they started. When it gives up
// on chat trouble (or ctx ends during it), the send is counted as
// undelivered and owed is said later. Under TryOnce, op is called once
// and nothing is counted.
func (s *Sender) Send(ctx context.Context, key string, deadline time.Time, owed Owed, op func(ctx context.Context) error) error {
	if TriesOnce(ctx) {
		err := op(ctx)
		if err == nil {
			s.answered()
		}
		return err
	}
	release, err := s.enter(ctx, key, deadline)
	if err != nil {
		s.giveUp(owed)
		return fmt.Errorf("wait for earlier messages to the same place: %w", err)
	}
	defer release()
	err = s.Retry(ctx, deadline, op)
	if err != nil && (Transient(err) || ctx.Err() != nil) && !TriesOnce(ctx) {
		s.giveUp(owed)
	}
	return err
}

// Retry calls op until it succeeds, fails for good (an error that is not
// Transient), or the next try would fall after deadline, pausing as Send
// does; it counts nothing and owes nothing.
func (s *Sender) Retry(ctx context.Context, deadline time.Time, op func(ctx context.Context) error) error {
	pause := s.Base
	for {
		err := op(ctx)
		if err == nil {
			s.answered()
			return nil
		}
		if !Transient(err) || TriesOnce(ctx) {
			return err
		}
		wait := pause
		if d, ok := RetryAfter(err); ok {
			wait = max(d, s.Base/4)
		} else {
			wait += time.Duration(rand.Int64N(int64(wait)/4 + 1))
			pause = min(2*pause, s.Max)
		}
		if s.Now().Add(wait).After(deadline) {
			return fmt.Errorf("gave up at its deadline %s: %w", deadline.Format(time.RFC3339), err)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (while waiting out: %w)", ctx.Err(), err)
		}
	}
}

// enter waits for the key's lane, until ctx ends or deadline passes.
func (s *Sender) enter(ctx context.Context, key string, deadline time.Time) (release func(), err error) {
	s.mu.Lock()
	l := s.lanes[key]
	if l == nil {
		l = &lane{sem: make(chan struct{}, 1)}
		s.lanes[key] = l
	}
	l.refs++
	s.mu.Unlock()
	leave := func() {
		s.mu.Lock()
		l.refs--
		if l.refs == 0 {
			delete(s.lanes, key)
		}
		s.mu.Unlock()
	}
	t := time.NewTimer(max(deadline.Sub(s.Now()), 0))
	defer t.Stop()
	select {
	case l.sem <- struct{}{}:
		return func() { <-l.sem; leave() }, nil
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	case <-t.C:
		leave()
		return nil, context.DeadlineExceeded
	}
}

func (s *Sender) giveUp(o Owed) {
	s.undelivered.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.owed {
		if s.owed[i].Place == o.Place && s.owed[i].User.ID == o.User.ID {
			for _, w := range o.What {
				if len(s.owed[i].What) < maxWhat {
					s.owed[i].What = append(s.owed[i].What, w)
				} else {
					s.owed[i].More++
				}
			}
			return
		}
	}
	if len(s.owed) >= maxOwed {
		s.owed = s.owed[1:]
	}
	s.owed = append(s.owed, o)
	if !s.probing && s.Tell != nil {
		s.probing = true
		go s.probe()
	}
}

// answered is called after a send went through: the platform answers
// again, so what is owed is said, in the background.
func (s *Sender) answered() {
	s.mu.Lock()
	start := len(s.owed) > 0 && !s.telling && s.Tell != nil
	if start {
		s.telling = true
	}
	s.mu.Unlock()
	if start {
		go s.tell()
	}
}

// tell says every owed apology once (s.telling is set by the caller);
// those the platform still refuses for now stay owed.
func (s *Sender) tell() {
	s.mu.Lock()
	owed := s.owed
	s.owed = nil
	s.mu.Unlock()
	var again []Owed
	for _, o := range owed {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := s.Tell(TryOnce(ctx), o); err != nil && Transient(err) {
			again = append(again, o)
		}
		cancel()
	}
	s.mu.Lock()
	s.owed = append(again, s.owed...)
	s.telling = false
	s.mu.Unlock()
}

// probe tries the owed apologies every ProbeEvery while any are owed, so
// that they are said once the platform answers again even when nothing
// else is sent; it ends when none are owed.
func (s *Sender) probe() {
	for {
		time.Sleep(s.ProbeEvery)
		s.mu.Lock()
		if len(s.owed) == 0 || s.Tell == nil {
			s.probing = false
			s.mu.Unlock()
			return
		}
		start := !s.telling
		if start {
			s.telling = true
		}
		s.mu.Unlock()
		if start {
			s.tell()
		}
	}
}

// Pending is how many apologies wait for the platform to answer.
func (s *Sender) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.owed)
}

// Describe names c in words, for the apology of a message that was lost:
// "the approval card for <id>", or "a reply (“<its start>”)".
func Describe(c Content) string {
	if c.Card != nil {
		return "the approval card for " + c.Card.ApprovalID
	}
	return "a reply (" + Excerpt(c.Text) + ")"
}

// Excerpt is the start of text, on one line, quoted.
func Excerpt(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	if r := []rune(text); len(r) > 60 {
		text = string(r[:60]) + "…"
	}
	return "\u201c" + text + "\u201d"
}
