// Package adaptertest is the conformance suite every chat adapter must
// pass. An adapter's test provides a Harness (its adapter connected to a
// fake of its platform: a pipe for the terminal, an httptest server speaking
// the platform's wire protocol for Slack and Discord) and calls Run:
//
//	func TestConformance(t *testing.T) {
//		adaptertest.Run(t, func(t *testing.T) adaptertest.Harness { return newHarness(t) })
//	}
package adaptertest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters"
)

// Alice and Bob are the people the suite uses. A harness's fake platform
// must deliver events as them, with these ids.
var (
	Alice = adapters.User{ID: "alice", Name: "alice"}
	Bob   = adapters.User{ID: "bob", Name: "bob"}
)

// Harness connects an adapter to a fake of its platform and plays the
// platform's side.
type Harness interface {
	// Adapter is the adapter under test.
	Adapter() adapters.Adapter
	// Place is a conversation the harness can deliver events into.
	Place() adapters.Place
	// Say delivers a message from u into p, as the platform would. It may
	// block until the adapter's Run has read it.
	Say(t testing.TB, u adapters.User, p adapters.Place, text string)
	// Decide delivers u's decision on the card posted as ref: a click on
	// button b or, where there are no buttons, the words b stands for
	// (followed by reason after a cancel).
	Decide(t testing.TB, u adapters.User, p adapters.Place, ref string, b adapters.Button, reason string)
	// View returns what the message ref shows everyone now, as text: its
	// text, every text field of a card, and each button as its Words.
	View(t testing.TB, p adapters.Place, ref string) string
	// Notices returns the text of the private notices u has received,
	// oldest first.
	Notices(t testing.TB, u adapters.User) []string
	// End ends the input as the platform would (the terminal: end of file;
	// a socket: the server closes it for good). Run must then return.
	End(t testing.TB)
}

// Redeliverer is an optional Harness capability: the platform delivers
// events again when unsure they arrived.
type Redeliverer interface {
	// Redeliver delivers the last event again, marked as a retry.
	Redeliver(t testing.TB)
}

const wait = 5 * time.Second

// Run runs the conformance suite. newHarness is called once per subtest.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Helper()
	t.Run("message reaches the handler", func(t *testing.T) {
		h, s := start(t, newHarness)
		p := h.Place()
		h.Say(t, Alice, p, "hello from alice")
		e := s.next(t)
		if e.ID == "" {
			t.Error("event has no id: the bot cannot dedupe it")
		}
		if e.User.ID != Alice.ID {
			t.Errorf("event user = %q, want %q", e.User.ID, Alice.ID)
		}
		if e.Place.Channel != p.Channel {
			t.Errorf("event channel = %q, want %q", e.Place.Channel, p.Channel)
		}
		if e.Place.Thread == "" {
			t.Error("event has no thread: replies would not find the conversation")
		}
		if e.Text != "hello from alice" {
			t.Errorf("event text = %q, want %q", e.Text, "hello from alice")
		}
		if e.Decision != nil {
			t.Errorf("a plain message arrived as a decision: %+v", e.Decision)
		}
	})

	t.Run("events arrive in order with distinct ids", func(t *testing.T) {
		h, s := start(t, newHarness)
		texts := []string{"first words", "second words", "third words"}
		for _, text := range texts {
			h.Say(t, Alice, h.Place(), text)
		}
		seen := map[string]bool{}
		for _, want := range texts {
			e := s.next(t)
			if e.Text != want {
				t.Errorf("got %q, want %q: events out of order", e.Text, want)
			}
			if seen[e.ID] {
				t.Errorf("event id %q used twice for different events", e.ID)
			}
			seen[e.ID] = true
		}
	})

	t.Run("a posted message lands", func(t *testing.T) {
		h, _ := start(t, newHarness)
		ref, err := h.Adapter().Post(context.Background(), h.Place(), adapters.Content{Text: "the disk is 81% full"})
		if err != nil {
			t.Fatalf("Post: %v", err)
		}
		if ref == "" {
			t.Fatal("Post returned no message reference")
		}
		if v := h.View(t, h.Place(), ref); !strings.Contains(v, "the disk is 81% full") {
			t.Errorf("posted message shows %q; want the text", v)
		}
	})

	t.Run("an update replaces the message in place", func(t *testing.T) {
		h, _ := start(t, newHarness)
		ctx := context.Background()
		ref, err := h.Adapter().Post(ctx, h.Place(), adapters.Content{Text: "version one"})
		if err != nil {
			t.Fatalf("Post: %v", err)
		}
		if err := h.Adapter().Update(ctx, h.Place(), ref, adapters.Content{Text: "version two"}); err != nil {
			t.Fatalf("Update: %v", err)
		}
		v := h.View(t, h.Place(), ref)
		if !strings.Contains(v, "version two") || strings.Contains(v, "version one") {
			t.Errorf("after the update the message shows %q; want only version two", v)
		}
	})

	t.Run("a pending card shows the operation and how to decide", func(t *testing.T) {
		h, _ := start(t, newHarness)
		c := PendingCard("a1b2c3")
		ref, err := h.Adapter().Post(context.Background(), h.Place(), adapters.Content{Card: &c})
		if err != nil {
			t.Fatalf("Post card: %v", err)
		}
		v := h.View(t, h.Place(), ref)
		want := []string{c.Operation, c.Requester, c.Tool, c.Risk, c.Preview.Summary, "tmp_a", "tmp_b", "approve a1b2c3", "cancel a1b2c3"}
		want = append(want, c.Reasons...)
		for _, w := range want {
			if !strings.Contains(v, w) {
				t.Errorf("the card does not show %q:\n%s", w, v)
			}
		}
	})

	t.Run("a card shows hidden characters of the operation escaped, never raw", func(t *testing.T) {
		h, _ := start(t, newHarness)
		c := PendingCard("a1b2c3")
		// What runs deletes ./data; raw, the carriage return, the escape
		// sequence and the bidi override would show something else.
		c.Operation = "rm -rf ./data\r\x1b[2Kecho hello # \u202etxt.exe"
		ref, err := h.Adapter().Post(context.Background(), h.Place(), adapters.Content{Card: &c})
		if err != nil {
			t.Fatalf("Post card: %v", err)
		}
		v := h.View(t, h.Place(), ref)
		for _, raw := range []string{"\r", "\x1b[2K", "\u202e"} {
			if strings.Contains(v, raw) {
				t.Errorf("the card shows %q raw:\n%q", raw, v)
			}
		}
		if want, _ := adapters.Visible(c.Operation); !strings.Contains(v, want) {
			t.Errorf("the card does not show the operation as adapters.Visible writes it, %q:\n%s", want, v)
		}
	})

	t.Run("a decided card loses its buttons and shows the outcome", func(t *testing.T) {
		h, _ := start(t, newHarness)
		ctx := context.Background()
		c := PendingCard("a1b2c3")
		ref, err := h.Adapter().Post(ctx, h.Place(), adapters.Content{Card: &c})
		if err != nil {
			t.Fatalf("Post card: %v", err)
		}
		done := DoneCard("a1b2c3")
		if err := h.Adapter().Update(ctx, h.Place(), ref, adapters.Content{Card: &done}); err != nil {
			t.Fatalf("Update card: %v", err)
		}
		v := h.View(t, h.Place(), ref)
		for _, w := range []string{done.StateLine, "removed tmp_a", done.Operation} {
			if !strings.Contains(v, w) {
				t.Errorf("the finished card does not show %q:\n%s", w, v)
			}
		}
		if strings.Contains(v, "approve a1b2c3") {
			t.Errorf("the finished card still offers a decision:\n%s", v)
		}
	})

	t.Run("a private notice reaches only that user", func(t *testing.T) {
		h, _ := start(t, newHarness)
		n := adapters.Notice{Place: h.Place(), User: Bob, Text: "only bob may read this"}
		if err := h.Adapter().Notify(context.Background(), n); err != nil {
			t.Fatalf("Notify: %v", err)
		}
		if !slices.ContainsFunc(h.Notices(t, Bob), func(s string) bool { return strings.Contains(s, "only bob may read this") }) {
			t.Errorf("bob's notices %q lack the notice", h.Notices(t, Bob))
		}
		if slices.ContainsFunc(h.Notices(t, Alice), func(s string) bool { return strings.Contains(s, "only bob may read this") }) {
			t.Errorf("alice received bob's private notice: %q", h.Notices(t, Alice))
		}
	})

	t.Run("a notice answering an event reaches only its sender", func(t *testing.T) {
		h, s := start(t, newHarness)
		c := PendingCard("a1b2c3")
		ref, err := h.Adapter().Post(context.Background(), h.Place(), adapters.Content{Card: &c})
		if err != nil {
			t.Fatalf("Post card: %v", err)
		}
		h.Decide(t, Bob, h.Place(), ref, c.Buttons[0], "")
		e := s.next(t)
		n := adapters.Notice{Place: e.Place, User: e.User, Text: "you may not approve this", Reply: e.Reply}
		if err := h.Adapter().Notify(context.Background(), n); err != nil {
			t.Fatalf("Notify with the event's reply handle: %v", err)
		}
		if !slices.ContainsFunc(h.Notices(t, Bob), func(s string) bool { return strings.Contains(s, "you may not approve this") }) {
			t.Errorf("bob's notices %q lack the answer to his click", h.Notices(t, Bob))
		}
		if slices.ContainsFunc(h.Notices(t, Alice), func(s string) bool { return strings.Contains(s, "you may not approve this") }) {
			t.Errorf("alice received the answer to bob's click: %q", h.Notices(t, Alice))
		}
	})

	t.Run("event ids never repeat across processes", func(t *testing.T) {
		// Two harnesses stand for two processes, or one before and after
		// a restart: a shared store must never take the second one's
		// events for repeats of the first one's.
		h1, s1 := start(t, newHarness)
		h2, s2 := start(t, newHarness)
		h1.Say(t, Alice, h1.Place(), "first process")
		h2.Say(t, Alice, h2.Place(), "second process")
		if e1, e2 := s1.next(t), s2.next(t); e1.ID == e2.ID {
			t.Errorf("two processes gave different events the same id %q: the second would be dropped as a repeat", e1.ID)
		}
	})

	t.Run("an approval arrives as a decision with the approval id", func(t *testing.T) {
		h, s := start(t, newHarness)
		c := PendingCard("a1b2c3")
		ref, err := h.Adapter().Post(context.Background(), h.Place(), adapters.Content{Card: &c})
		if err != nil {
			t.Fatalf("Post card: %v", err)
		}
		h.Decide(t, Bob, h.Place(), ref, c.Buttons[0], "")
		e := s.next(t)
		want := adapters.Decision{ApprovalID: "a1b2c3", Approve: true}
		if e.Decision == nil {
			t.Fatalf("the decision arrived as a message %q", e.Text)
		}
		got := *e.Decision
		got.Ref = ""
		if got != want {
			t.Errorf("decision = %+v, want %+v", got, want)
		}
		if e.Decision.Ref != "" && e.Decision.Ref != ref {
			t.Errorf("decision names card %q, want %q", e.Decision.Ref, ref)
		}
		if e.User.ID != Bob.ID {
			t.Errorf("decision by %q, want %q", e.User.ID, Bob.ID)
		}
		if e.ID == "" {
			t.Error("decision event has no id")
		}
	})

	t.Run("a cancel arrives with its reason", func(t *testing.T) {
		h, s := start(t, newHarness)
		c := PendingCard("a1b2c3")
		ref, err := h.Adapter().Post(context.Background(), h.Place(), adapters.Content{Card: &c})
		if err != nil {
			t.Fatalf("Post card: %v", err)
		}
		h.Decide(t, Alice, h.Place(), ref, c.Buttons[1], "wrong folder")
		e := s.next(t)
		if e.Decision == nil {
			t.Fatalf("the cancel arrived as a message %q", e.Text)
		}
		if e.Decision.ApprovalID != "a1b2c3" || e.Decision.Approve || e.Decision.Reason != "wrong folder" {
			t.Errorf("decision = %+v; want a cancel of a1b2c3 because of \"wrong folder\"", *e.Decision)
		}
		if e.User.ID != Alice.ID {
			t.Errorf("decision by %q, want %q", e.User.ID, Alice.ID)
		}
	})

	t.Run("a redelivered event keeps its id and is marked", func(t *testing.T) {
		h, s := start(t, newHarness)
		r, ok := h.(Redeliverer)
		if !ok {
			t.Skip("the platform never delivers an event twice")
		}
		h.Say(t, Alice, h.Place(), "say it once")
		first := s.next(t)
		r.Redeliver(t)
		again := s.next(t)
		if again.ID != first.ID {
			t.Errorf("redelivered event id %q, first delivery %q: the bot cannot dedupe", again.ID, first.ID)
		}
		if !again.Redelivered {
			t.Error("redelivered event is not marked Redelivered")
		}
	})

	t.Run("Run returns at the end of input", func(t *testing.T) {
		h, s := start(t, newHarness)
		h.End(t)
		if err := s.stopped(t); err != nil {
			t.Errorf("Run at the end of input = %v, want nil", err)
		}
	})

	t.Run("Run returns when its context is cancelled", func(t *testing.T) {
		_, s := start(t, newHarness)
		s.cancel()
		if err := s.stopped(t); !errors.Is(err, context.Canceled) {
			t.Errorf("Run after cancel = %v, want context.Canceled", err)
		}
	})
}

// session is one running adapter.
type session struct {
	events chan adapters.Event
	done   chan error
	cancel context.CancelFunc
	once   sync.Once
	err    error
}

// start makes a harness and runs its adapter until the test ends.
func start(t *testing.T, newHarness func(t *testing.T) Harness) (Harness, *session) {
	t.Helper()
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	s := &session{events: make(chan adapters.Event, 64), done: make(chan error, 1), cancel: cancel}
	handler := adapters.HandlerFunc(func(_ context.Context, e adapters.Event) {
		select {
		case s.events <- e:
		default:
			t.Errorf("more than %d events unread", cap(s.events))
		}
	})
	go func() { s.done <- h.Adapter().Run(ctx, handler) }()
	t.Cleanup(func() {
		cancel()
		_ = s.stopped(t)
	})
	return h, s
}

func (s *session) next(t *testing.T) adapters.Event {
	t.Helper()
	select {
	case e := <-s.events:
		return e
	case <-time.After(wait):
		t.Fatalf("no event within %s", wait)
		return adapters.Event{}
	}
}

// stopped waits for Run to return and gives its error.
func (s *session) stopped(t testing.TB) error {
	t.Helper()
	s.once.Do(func() {
		select {
		case s.err = <-s.done:
		case <-time.After(wait):
			s.err = errors.New("Run did not return")
			t.Errorf("Run did not return within %s", wait)
		}
	})
	return s.err
}

// PendingCard is a card waiting for a decision, with every field set.
func PendingCard(id string) adapters.Card {
	return adapters.Card{
		ApprovalID:   id,
		Title:        "Run this command?",
		Requester:    "alice",
		Conversation: "#ops",
		Tool:         "execute_command",
		Operation:    "rm -rf ./tmp_*",
		Risk:         "high",
		Reasons:      []string{"rm -r deletes a whole tree", "a wildcard picks what is deleted"},
		LLMLevel:     "medium",
		Preview:      &adapters.Preview{Summary: "2 paths match", Items: []string{"tmp_a", "tmp_b"}},
		ExpiresAt:    time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC),
		State:        "pending",
		StateLine:    "waiting for a decision",
		Buttons: []adapters.Button{
			{Label: "Approve", Approve: true, Value: id},
			{Label: "Cancel", Value: id},
		},
	}
}

// DoneCard is the same card after bob approved it and it ran.
func DoneCard(id string) adapters.Card {
	c := PendingCard(id)
	c.State = "done"
	c.StateLine = "approved by bob at 05:41:02 UTC · done: exit code 0 in 12ms"
	c.Output = "removed tmp_a\nremoved tmp_b"
	c.Buttons = nil
	return c
}
