package bot

import (
	"sync"
	"time"
)

// dedupe remembers the ids of recent events so that a platform's
// redelivery of an event is handled once. It is bounded both in time (an id
// is forgotten after window) and in size (the oldest ids go first).
//
// It dedupes within one process. Replicas behind one Slack app each see
// every retry, so several replicas would need a shared set: a Redis
// SET key NX EX window per event id does that in one round trip; it belongs
// in the approval store's Redis client and is left for the Slack adapter's
// issue.
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
