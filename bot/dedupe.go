package bot

import (
	"context"
	"fmt"
	"sync"
	"time"
)

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
