package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/approval"
)

// This file is the intake's durability: an event a platform delivers
// again is handled once (dedupe, in process, then firstDelivery across
// replicas, at the end of the file), and accepted events are kept in the
// store's inbox (approval.Inbox) until they are answered, so that a crash
// loses none in silence.
//
// An adapter acknowledges an event to its platform once the bot says it
// is recorded (Event.Recorded: Slack's Socket Mode and HTTP mode, and
// Discord's decisions, with a bound of their own below the platform's 3
// seconds), or, without Recorded, once Handle returns; a platform never
// sends an acknowledged event again. Handle does no I/O, so it cannot
// write the event down before it returns; it hands the event to the
// journal writer, which writes every event waiting at that moment in one
// round trip to the store, then calls each event's Recorded; no event's
// answer is cleared before its record is written (or has failed to be).
// An adapter that acknowledges once Handle returns leaves a window in
// which a crash loses an acknowledged event unrecorded: the time from
// Handle's return to that write, one or two round trips to Redis (about 1
// to 3 ms in the crash trial; up to inboxWriteTimeout on a failing store,
// when the event is handled anyway and the failure logged: refusing work
// because the journal failed would turn a store hiccup into lost
// messages). An adapter that acknowledges from Recorded closes the window
// (the crash trial in cmd/countersign kills a replica at the instant of
// its last Slack acknowledgement, and finds every message in the inbox).
//
// When the event is answered, its record is removed. A process beats
// every quarter of Config.InboxLease; a replica whose sweep finds records
// of an owner silent for longer takes them over (exactly one replica gets
// each) and, per kind:
//
//   - a click or a typed decision is carried out: deciding is atomic in
//     the store, so a decision already made says "already decided", an
//     approval past its deadline expires, and an approved call runs at
//     most once (Claim);
//   - a message for the model and a direct command (!run, !sql, …) are
//     not carried out: the dead process may have run part of them (an
//     auto-run command, a model turn that called tools), and doing them
//     again blind could run something twice. Their sender is told, by
//     name, that the message was not acted on (or only in part) and
//     should be sent again if still wanted.

// inboxWriteTimeout bounds one write of the journal.
const inboxWriteTimeout = 5 * time.Second

// journaled is an inbound event as the inbox keeps it. The event's reply
// handle is the adapter's and does not outlive the process: a notice about
// a recovered event goes to its sender by place and name.
type journaled struct {
	Platform string         `json:"platform"`
	Event    adapters.Event `json:"event"`
}

// accepted is an event's place in the journal: written is closed once the
// write that records it has returned.
type accepted struct {
	key      string
	written  chan struct{}
	recorded func() // the adapter's Event.Recorded, or nil
}

// recorded tells the adapter that e needs no more keeping (Event.Recorded).
func recorded(e adapters.Event) {
	if e.Recorded != nil {
		e.Recorded()
	}
}

// journal is the writer of the inbox: Handle queues, one goroutine writes.
type journal struct {
	in    approval.Inbox
	owner string

	mu      sync.Mutex
	accepts []*accepted
	entries []approval.InboxEntry
	answers []string
	wake    chan struct{}
}

func newJournal(in approval.Inbox, owner string) *journal {
	return &journal{in: in, owner: owner, wake: make(chan struct{}, 1)}
}

// accept queues in for the journal and returns its place; nil when the
// store keeps no inbox or the event has no id. No I/O.
func (b *Bot) accept(in *inbound) {
	j := b.journal
	if j == nil || in.ID == "" || in.recovered {
		recorded(in.Event)
		return
	}
	ev := in.Event
	ev.Reply, ev.Recorded = nil, nil
	data, err := json.Marshal(journaled{Platform: in.platform, Event: ev})
	if err != nil {
		b.log.Error("encode an event for the inbox", "err", err, "event", in.ID)
		recorded(in.Event)
		return
	}
	a := &accepted{key: in.platform + ":" + in.ID, written: make(chan struct{}), recorded: in.Recorded}
	j.mu.Lock()
	j.accepts = append(j.accepts, a)
	j.entries = append(j.entries, approval.InboxEntry{ID: a.key, Data: data, AcceptedAt: b.now()})
	j.mu.Unlock()
	j.poke()
	in.rec = a
}

func (j *journal) poke() {
	select {
	case j.wake <- struct{}{}:
	default:
	}
}

// waitRecorded waits until in's record is written (or its write failed), so
// that its answer can never be removed before it is recorded.
func (b *Bot) waitRecorded(in inbound) {
	if in.rec == nil {
		return
	}
	select {
	case <-in.rec.written:
	case <-b.journalDone:
	}
}

// done removes in's record: it has been answered (or its sender told).
func (b *Bot) done(in inbound) {
	if b.journal == nil {
		return
	}
	key := ""
	switch {
	case in.rec != nil:
		b.waitRecorded(in)
		key = in.rec.key
	case in.recovered:
		key = in.platform + ":" + in.ID
	default:
		return
	}
	j := b.journal
	j.mu.Lock()
	j.answers = append(j.answers, key)
	j.mu.Unlock()
	j.poke()
}

// writeJournal writes the queued records and answers until ctx is done
// and nothing is queued, beating every quarter of the lease.
func (b *Bot) writeJournal(ctx context.Context) {
	j := b.journal
	t := time.NewTicker(max(b.cfg.InboxLease/4, time.Millisecond)) // a lease under 4ns would make a ticker panic; config refuses under 1s
	defer t.Stop()
	for {
		select {
		case <-j.wake:
		case <-t.C:
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), inboxWriteTimeout)
			if err := j.in.Beat(wctx, j.owner, b.now()); err != nil {
				b.log.Warn("inbox heartbeat", "err", err, "owner", j.owner)
			}
			cancel()
		case <-ctx.Done():
		}
		j.mu.Lock()
		accepts, entries, answers := j.accepts, j.entries, j.answers
		j.accepts, j.entries, j.answers = nil, nil, nil
		j.mu.Unlock()
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), inboxWriteTimeout)
		if len(entries) > 0 {
			if err := j.in.Accept(wctx, j.owner, b.now(), entries...); err != nil {
				b.log.Error("record accepted events in the inbox: a crash now would lose them", "err", err, "events", len(entries))
			}
			for _, a := range accepts {
				close(a.written)
				if a.recorded != nil {
					a.recorded()
				}
			}
		}
		if len(answers) > 0 {
			if err := j.in.Answered(wctx, answers...); err != nil {
				b.log.Warn("clear answered events from the inbox: a replica may later tell their senders again", "err", err, "events", len(answers))
			}
		}
		cancel()
		if ctx.Err() != nil && len(entries) == 0 && len(answers) == 0 {
			j.mu.Lock()
			idle := len(j.entries) == 0 && len(j.answers) == 0
			j.mu.Unlock()
			if idle {
				return
			}
		}
	}
}

// leaveInbox forgets this process as an owner at a clean end: whatever it
// still holds (nothing, when every event was answered) is anyone's at once.
func (b *Bot) leaveInbox() {
	ctx, cancel := context.WithTimeout(context.Background(), inboxWriteTimeout)
	defer cancel()
	if err := b.journal.in.Leave(ctx, b.journal.owner); err != nil {
		b.log.Warn("leave the inbox", "err", err, "owner", b.journal.owner)
	}
}

// takeOver finds the events accepted by processes that died before
// answering them, and carries out or tells each (see the top of this file).
func (b *Bot) takeOver(ctx context.Context) {
	j := b.journal
	if j == nil {
		return
	}
	now := b.now()
	entries, err := j.in.TakeOver(ctx, j.owner, now.Add(-b.cfg.InboxLease), now, 0)
	if err != nil {
		b.log.Error("look for events a dead process left unanswered", "err", err)
	}
	for _, e := range entries {
		var jr journaled
		if err := json.Unmarshal(e.Data, &jr); err != nil {
			b.log.Error("an inbox entry cannot be read; dropping it", "err", err, "entry", e.ID)
			b.done(inbound{platform: "", recovered: true, Event: adapters.Event{ID: e.ID}})
			continue
		}
		in := inbound{platform: jr.Platform, Event: jr.Event, recovered: true, acceptedAt: e.AcceptedAt}
		if !b.serves(in.platform) {
			b.handBack(ctx, e, "of a platform this process does not serve")
			continue
		}
		entry := e
		in.entry = &entry
		b.log.Warn("an event a dead process accepted but did not answer", "platform", in.platform, "event", in.ID, "accepted", e.AcceptedAt)
		b.inflight.Add(1)
		go b.safely(in, func() {
			defer b.inflight.Done()
			b.recover(in)
		})
	}
}

// recover carries out or tells one event taken over from a dead process.
func (b *Bot) recover(in inbound) {
	if in.Decision != nil {
		// Carried out (or its sender told that it is already decided),
		// then out of the inbox, whichever replica had decided it: left
		// there, every later replica would take it over and tell its
		// sender again.
		b.decision(in)
		b.done(in)
		return
	}
	at := in.acceptedAt.UTC().Format(stamp)
	text := interrupted(at, in.Text)
	if err := b.notifyErr(in, in.User.Display()+": "+text); err != nil {
		// The platform did not take the notice: say it in the
		// conversation, by name, where everyone sees it.
		if serr := b.Reply(b.work, b.conv(in), in.User.Display()+": "+text); serr != nil {
			b.log.Error("tell the sender of a message a dead process did not answer", "err", serr, "event", in.ID)
			b.handBack(b.work, *in.entry, "whose sender could not be told yet")
			return
		}
	}
	b.done(in)
}

// handBack gives an entry taken over back to the inbox under an owner that
// never beats, so that the next sweep of any replica takes it again.
func (b *Bot) handBack(ctx context.Context, e approval.InboxEntry, why string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), inboxWriteTimeout)
	defer cancel()
	if err := b.journal.in.Accept(ctx, "handed-back:"+b.journal.owner, time.Time{}, e); err != nil {
		b.log.Error("hand back an inbox entry "+why+"; it stays with this process until it stops", "err", err, "entry", e.ID)
	}
}

// firstDelivery asks the store whether any replica has had e before
// (approval.Deduper, part of every store); an event without an id is
// always a first. The id the store keeps names the platform,
// "slack:Ev0123", so platforms never collide. An error means the store
// could not tell; the caller chooses what to do.
func (b *Bot) firstDelivery(ctx context.Context, e inbound) (bool, error) {
	if e.ID == "" {
		return true, nil
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	first, err := b.store.FirstDelivery(ctx, e.platform+":"+e.ID, b.cfg.DedupeWindow)
	if err != nil {
		return false, fmt.Errorf("check event %s for redelivery: %w", e.ID, err)
	}
	return first, nil
}

// dedupe remembers the ids of recent events so that a platform's
// redelivery of an event is handled once. It is bounded both in time (an id
// is forgotten after window) and in size (the oldest ids go first).
//
// It dedupes within one process, as a fast first check. Replicas behind
// one Slack app can each receive a retry of the same event, so the bot then
// asks the shared store too (firstDelivery).
type dedupe struct {
	mu     sync.Mutex
	max    int
	window time.Duration
	seen   map[string]time.Time
	order  []seenID // oldest first
}

type seenID struct {
	id string
	at time.Time
}

func newDedupe(max int, window time.Duration) *dedupe {
	return &dedupe{max: max, window: window, seen: map[string]time.Time{}}
}

// first reports whether id is seen for the first time within the window,
// and remembers it.
func (d *dedupe) first(id string, now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for len(d.order) > 0 && (len(d.order) >= d.max || now.Sub(d.order[0].at) >= d.window) {
		old := d.order[0]
		d.order = d.order[1:]
		if at, ok := d.seen[old.id]; ok && at.Equal(old.at) {
			delete(d.seen, old.id)
		}
	}
	if at, ok := d.seen[id]; ok && now.Sub(at) < d.window {
		return false
	}
	d.seen[id] = now
	d.order = append(d.order, seenID{id, now})
	return true
}
