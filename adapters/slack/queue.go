package slack

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/countersign/countersign/adapters"
)

// job works out what one envelope means; it may call the Web API (a
// thread lookup, a user group).
type job func(ctx context.Context) []adapters.Event

// ackWithin bounds the wait for the bot's record of an envelope's events
// before the envelope is acknowledged anyway: Slack wants an
// acknowledgement within 3 seconds, and sends the envelope again (to any
// replica) when it gets none.
const ackWithin = 2 * time.Second

// acker acknowledges one envelope to Slack once: when the bot has recorded
// every event made of it (adapters.Event.Recorded), when it makes no
// event, or after ackWithin, whichever comes first. Acknowledging from the
// record closes the window in which a crash would lose an envelope Slack
// was told it need not send again.
type acker struct {
	once  sync.Once
	ack   func()
	timer atomic.Pointer[time.Timer]
}

// newAcker starts the fallback clock (within) of an envelope whose
// acknowledgement is ack; ack runs on a goroutine of its own.
func newAcker(within time.Duration, ack func()) *acker {
	k := &acker{ack: ack}
	k.timer.Store(time.AfterFunc(within, k.done))
	return k
}

// done acknowledges the envelope, the first time only; it returns at once.
func (k *acker) done() {
	if k == nil {
		return
	}
	k.once.Do(func() {
		if t := k.timer.Load(); t != nil {
			t.Stop()
		}
		go k.ack()
	})
}

// after acknowledges the envelope once each of events has been recorded,
// setting their Recorded; with none, at once.
func (k *acker) after(events []adapters.Event) {
	if k == nil {
		return
	}
	if len(events) == 0 {
		k.done()
		return
	}
	var left atomic.Int64
	left.Store(int64(len(events)))
	for i := range events {
		events[i].Recorded = func() {
			if left.Add(-1) == 0 {
				k.done()
			}
		}
	}
}

// item is a queued envelope: its job and its acknowledgement (nil when it
// was acknowledged already).
type item struct {
	job job
	ack *acker
}

// queue holds received envelopes for the worker, in arrival order. It is
// unbounded: an envelope acknowledged to Slack must not be dropped.
type queue struct {
	mu     sync.Mutex
	jobs   []item
	closed bool
	signal chan struct{}
}

func newQueue() *queue { return &queue{signal: make(chan struct{}, 1)} }

// push queues j; ack (may be nil) is told once j's events are recorded.
func (q *queue) push(j job, ack *acker) {
	q.mu.Lock()
	q.jobs = append(q.jobs, item{j, ack})
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// close lets pop return false once the queue is empty.
func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// pop returns the oldest item; false when the queue is closed and empty or
// ctx is done.
func (q *queue) pop(ctx context.Context) (item, bool) {
	for {
		q.mu.Lock()
		if len(q.jobs) > 0 {
			j := q.jobs[0]
			q.jobs[0] = item{}
			q.jobs = q.jobs[1:]
			q.mu.Unlock()
			return j, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return item{}, false
		}
		select {
		case <-ctx.Done():
			return item{}, false
		case <-q.signal:
		}
	}
}
