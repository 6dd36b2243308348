package bot

import (
	"context"
	"strings"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/internal/fifo"
)

// This file is an event's way in: the adapter hands it to handle, which
// drops a repeat, sends a decision to the background and queues a message
// in its conversation's lane.

// inbound is an event and the platform whose adapter delivered it.
type inbound struct {
	platform string
	adapters.Event
	// rec is the event's record in the inbox, when it has one.
	rec *accepted
	// recovered: the event was accepted by a process that died before
	// answering it, and taken over from the inbox (entry) by this one;
	// acceptedAt is when that process accepted it.
	recovered  bool
	entry      *approval.InboxEntry
	acceptedAt time.Time
}

// Handler returns the handler for the events of platform's adapter.
func (b *Bot) Handler(platform string) adapters.Handler {
	return adapters.HandlerFunc(func(_ context.Context, e adapters.Event) {
		b.handle(inbound{platform: platform, Event: e})
	})
}

// handle takes one event from an adapter. It returns at once, without
// I/O, so that the adapter can acknowledge the event in time: a message
// queues behind its conversation's, a decision goes to the background. A
// repeated event is dropped here when this process has seen its id, and
// later (firstDelivery) when another replica has.
func (b *Bot) handle(in inbound) {
	if in.ID != "" && !b.seen.first(in.platform+":"+in.ID, b.now()) {
		recorded(in.Event) // a repeat: the first delivery is kept
		b.later(in, func() { b.repeat(in, "this process") })
		return
	}
	if in.StopTurn {
		b.stopTurnLater(in) // stopturn.go
		return
	}
	if in.Decision == nil {
		if d, ok := adapters.ParseDecision(in.Text); ok {
			in.Decision = &d
		}
	}
	if in.Home { // home.go: a person opened their inbox
		recorded(in.Event)
		b.later(in, func() { b.home(in) })
		return
	}
	if in.Decision != nil {
		b.accept(&in)
		b.later(in, func() {
			defer b.done(in)
			b.decision(in)
		})
		return
	}
	text := strings.TrimSpace(in.Text)
	if text == "" {
		recorded(in.Event) // nothing to answer
		return
	}
	if t, ok := typedEdit(text); ok { // edit.go: "edit <id> <operation>" is a command
		in.Text, text = t, t
	}
	b.accept(&in)
	b.enqueue(in, strings.HasPrefix(text, "!"))
}

// Messages wait in two lanes per conversation, each handled in the order
// the messages came:
//
//   - the model lane: one turn at a time, since a turn reads and writes the
//     conversation;
//   - the command lane: direct commands (!run, !pending, !help, …). A
//     command that takes longer than commandHold lets the next one start
//     while it goes on, so nothing waits behind a long run, and quick
//     commands still answer in order.
//
// Decisions wait in neither: they are answered at once.

// commandHold is how long a direct command holds the ones after it.
const commandHold = time.Second

// maxCommands bounds the direct commands running at once; more wait.
const maxCommands = 16

// queue holds the waiting messages of one lane of one conversation.
type queue struct {
	events []inbound
}

// enqueue queues a message in its lane, and starts the lane's drain when
// none runs; a full lane turns the message away.
func (b *Bot) enqueue(e inbound, command bool) {
	key := b.conv(e).Key()
	if command {
		key += "\x00commands"
	}
	b.mu.Lock()
	q, running := b.queues[key]
	if !running {
		q = &queue{}
		b.queues[key] = q
	}
	if len(q.events) >= b.cfg.QueueSize {
		b.mu.Unlock()
		b.later(e, func() {
			defer b.done(e)
			b.notify(e, stillWorking())
		})
		return
	}
	q.events = append(q.events, e)
	if !running {
		b.inflight.Add(1)
		go b.drain(key, q, command)
	}
	b.mu.Unlock()
}

// drain handles the queued messages of a lane one by one until none is
// left; during a shutdown it tells their senders instead.
func (b *Bot) drain(key string, q *queue, command bool) {
	defer b.inflight.Done()
	for {
		b.mu.Lock()
		if len(q.events) == 0 {
			delete(b.queues, key)
			b.mu.Unlock()
			return
		}
		e := q.events[0]
		q.events = q.events[1:]
		b.mu.Unlock()
		if b.stopping.Load() {
			b.log.Info("shutting down: a queued message is not handled", "event", e.ID, "channel", e.Place.Channel)
			b.notify(e, shuttingDown(e.Text))
			b.done(e)
			continue
		}
		if !command {
			if leave, ok := b.enter(b.turnGate, e); ok {
				b.safely(e, func() { b.turn(e) })
				leave()
			}
			b.done(e)
			continue
		}
		done := make(chan struct{})
		b.inflight.Add(1)
		go func() {
			defer b.inflight.Done()
			defer close(done)
			if leave, ok := b.enter(b.commandGate, e); ok {
				b.safely(e, func() { b.message(b.work, e, nil) })
				leave()
			}
			b.done(e)
		}()
		t := time.NewTimer(commandHold)
		select {
		case <-done:
		case <-t.C:
		}
		t.Stop()
	}
}

// waitTell is how long a message may wait for a free place before its
// sender is told how many are ahead.
const waitTell = 3 * time.Second

// enter waits for a place at g for e, telling its sender how many wait
// ahead when it takes more than waitTell. ok is false when the bot
// stopped meanwhile: the sender is then told it was not acted on.
func (b *Bot) enter(g *fifo.Gate, e inbound) (leave func(), ok bool) {
	leave, err := g.Enter(b.work, waitTell, func(ahead int) {
		b.notify(e, waitingAhead(e.Text, ahead))
	})
	if err != nil {
		b.notify(e, stoppedBeforeStart(e.Text))
		return nil, false
	}
	return leave, true
}

// turn handles a message for the model, as a turn !cancel can stop and
// that shows it is working when it takes a while.
func (b *Bot) turn(e inbound) {
	ctx, cancel := context.WithCancelCause(b.work)
	defer cancel(nil)
	w, end := b.turnStarted(b.conv(e), e.User, cancel)
	defer end()
	b.message(ctx, e, w)
}

// message handles one message: a direct command or a turn of the agent;
// w is the turn's working indicator (nil for a command).
func (b *Bot) message(ctx context.Context, in inbound, w *working) {
	first, err := b.firstDelivery(b.work, in)
	if err != nil {
		// Fail closed: running a message twice can start a second turn and
		// a second card for the same operation; not running it is told.
		b.failPrivate(in, deliveryUncheckable(), err)
		return
	}
	if !first {
		b.repeat(in, "another replica")
		return
	}
	text := strings.TrimSpace(in.Text)
	conv := b.conv(in)
	user := approval.User{ID: in.User.ID, Name: in.User.Display()}
	if strings.HasPrefix(text, "!") {
		b.command(ctx, in, conv, user, text)
		return
	}
	out := turnReplies{b: b, w: w}
	if w != nil {
		out.s = w.show
	}
	if err := b.agent.HandleReplying(ctx, conv, user, text, out); err != nil {
		switch {
		case ctx.Err() != nil && b.work.Err() == nil:
			// Stopped by !cancel, which said so; the turn's working line,
			// when it is up, says it too.
			b.answered(conv, w, "Cancelled, as "+agent.CancelledBy(ctx)+" asked.")
		case ctx.Err() != nil:
			b.sayTo(ctx, out, conv, "I am shutting down, so I stopped working on \""+oneLine(text, 60)+"\" before it was done; "+
				"send it again once I am back.")
		default:
			b.failTo(ctx, out, conv, "I could not finish answering that", err)
		}
	}
}

// later does f in the background, counted as work in flight: Handle must
// not wait on I/O, and every answer (a notice included) is I/O.
func (b *Bot) later(in inbound, f func()) {
	b.inflight.Add(1)
	go b.safely(in, func() {
		defer b.inflight.Done()
		f()
	})
}
