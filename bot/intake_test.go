package bot_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/memstore"
	"github.com/countersign/countersign/bot"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
	"github.com/countersign/countersign/tools/shelltool"
)

// stalledPlatform is a platform whose every send (Post, Update, Notify)
// hangs until the test releases it, whatever its context says: a chat API
// that stopped answering. Its Run counts the events whose Handle returned,
// as an adapter that acknowledges each event after Handle does.
type stalledPlatform struct {
	*adaptertest.Fake
	release chan struct{}
	sends   atomic.Int64 // sends begun
	events  chan adapters.Event
	handled atomic.Int64
	once    sync.Once
	// ackOnRecord: the platform acknowledges an event when the bot says
	// it is recorded (Event.Recorded), as an adapter that closes the
	// window between acknowledgement and record does; acked counts them.
	ackOnRecord bool
	acked       atomic.Int64
}

func newStalledPlatform() *stalledPlatform {
	return &stalledPlatform{Fake: adaptertest.NewFake("slack"), release: make(chan struct{}), events: make(chan adapters.Event, 64)}
}

func (s *stalledPlatform) Run(ctx context.Context, h adapters.Handler) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-s.events:
			if !ok {
				return nil
			}
			if s.ackOnRecord {
				var once sync.Once
				e.Recorded = func() { once.Do(func() { s.acked.Add(1) }) }
			}
			h.Handle(ctx, e)
			s.handled.Add(1)
		}
	}
}

func (s *stalledPlatform) stall() {
	s.sends.Add(1)
	<-s.release
}

func (s *stalledPlatform) Post(ctx context.Context, to adapters.Place, c adapters.Content) (string, error) {
	s.stall()
	return s.Fake.Post(ctx, to, c)
}

func (s *stalledPlatform) Update(ctx context.Context, to adapters.Place, ref string, c adapters.Content) error {
	s.stall()
	return s.Fake.Update(ctx, to, ref, c)
}

func (s *stalledPlatform) Notify(ctx context.Context, n adapters.Notice) error {
	s.stall()
	return s.Fake.Notify(ctx, n)
}

func (s *stalledPlatform) unstall() { s.once.Do(func() { close(s.release) }) }

// TestHandleDoesNoIO: with every send to the platform hanging, each path
// an event can take through Handle returns at once, so the adapter goes
// on to the next event: a message, a direct command, a click, a typed
// decision, a full lane turned away, a repeated id from this process.
func TestHandleDoesNoIO(t *testing.T) {
	place := adapters.Place{Channel: "C1", Thread: "T1"}
	msg := func(id, text string) adapters.Event {
		return adapters.Event{ID: id, User: adaptertest.Alice, Place: place, Text: text}
	}
	tests := []struct {
		name   string
		events []adapters.Event
	}{
		{"message for the model", []adapters.Event{msg("e1", "how full is the disk?")}},
		{"direct command", []adapters.Event{msg("e1", "!run ls")}},
		{"click", []adapters.Event{{ID: "e1", User: adaptertest.Bob, Place: place, Decision: &adapters.Decision{ApprovalID: "abcd1234", Approve: true}}}},
		{"typed decision", []adapters.Event{msg("e1", "approve abcd")}},
		{"refused stop", []adapters.Event{msg("e1", "!stop abcd")}},
		// Queue size 1: the first message is taken (and hangs on its
		// answer), the second waits, the third finds the lane full.
		{"full lane", []adapters.Event{msg("e1", "!help"), msg("e2", "!help"), msg("e3", "!help"), msg("e4", "!help")}},
		{"repeated id", []adapters.Event{msg("e1", "!help"), msg("e1", "!help")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sh, err := shelltool.New(shelltool.Config{Root: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			reg, err := tools.NewRegistry(sh)
			if err != nil {
				t.Fatal(err)
			}
			pol, err := risk.New(risk.Config{})
			if err != nil {
				t.Fatal(err)
			}
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			store := memstore.New(memstore.Options{Logger: log})
			p := newStalledPlatform()
			b, err := bot.New(bot.Config{QueueSize: 1}, []adapters.Adapter{p}, agent.Config{}, bot.Deps{Tools: reg, Policy: pol, Store: store, Log: log})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- b.Run(context.Background()) }()
			for _, e := range tc.events {
				p.events <- e
			}
			n := int64(len(tc.events))
			waitFor(t, "every event handed back to the adapter while the platform hangs", func() bool { return p.handled.Load() == n })
			waitFor(t, "a send that hangs", func() bool { return p.sends.Load() > 0 })
			p.unstall()
			close(p.events)
			if err := <-done; err != nil {
				t.Fatalf("Run: %v", err)
			}
		})
	}
}

// TestRefusedStop: someone who may neither approve nor asked for the call
// types !stop <id>: they are told privately, the refusal is audited, and
// the call goes on (the handler used to panic: "Something went wrong").
func TestRefusedStop(t *testing.T) {
	_, fake, store, done := startOnFakeCfg(t, bot.Config{Channels: map[string]bot.Policy{"C1": {Approvers: []string{"carol"}}}}, nil, nil)
	carol := adapters.User{ID: "carol", Name: "carol"}
	place := adapters.Place{Channel: "C1", Thread: "T1"}
	fake.Say(t, adaptertest.Alice, place, "!run sleep 5; rm -f ./x")
	ref, c := waitCard(t, fake, "pending")
	fake.Click(t, carol, place, ref, c.Buttons[0], "")
	_, c = waitCard(t, fake, "running")
	fake.Say(t, adaptertest.Bob, place, "!stop "+c.ApprovalID)
	waitFor(t, "a notice to bob", func() bool { return len(fake.Notices(adaptertest.Bob)) > 0 })
	if n := fake.Notices(adaptertest.Bob)[0]; !strings.Contains(n, "You cannot stop "+c.ApprovalID) {
		t.Errorf("bob was told %q, want that he cannot stop it", n)
	}
	if strings.Contains(flattenAll(fake), "Something went wrong") {
		t.Error("the conversation was told \"Something went wrong\": the handler panicked")
	}
	log, err := store.AuditLog(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range log {
		if e.Kind == approval.KindRefusedClick && e.Decision == approval.DecisionStop && e.Actor == adaptertest.Bob.ID && e.ApprovalID == c.ApprovalID {
			found = true
		}
	}
	if !found {
		t.Errorf("no audit record of bob's refused stop in %+v", log)
	}
	fake.Click(t, carol, place, ref, adapters.Button{Stop: true, Value: c.ApprovalID}, "")
	waitCard(t, fake, "failed")
	fake.End(t)
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}
