package slack

import (
	"context"
	"sync"

	"github.com/countersign/countersign/adapters"
)

// job works out what one acknowledged envelope means; it may call the Web
// API (a thread lookup, a user group), so it runs after the ack.
type job func(ctx context.Context) []adapters.Event

// queue holds acknowledged envelopes for the worker, in arrival order. It
// is unbounded: an envelope acknowledged to Slack must not be dropped.
type queue struct {
	mu     sync.Mutex
	jobs   []job
	closed bool
	signal chan struct{}
}

func newQueue() *queue { return &queue{signal: make(chan struct{}, 1)} }

func (q *queue) push(j job) {
	q.mu.Lock()
	q.jobs = append(q.jobs, j)
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

// pop returns the oldest job; false when the queue is closed and empty or
// ctx is done.
func (q *queue) pop(ctx context.Context) (job, bool) {
	for {
		q.mu.Lock()
		if len(q.jobs) > 0 {
			j := q.jobs[0]
			q.jobs[0] = nil
			q.jobs = q.jobs[1:]
			q.mu.Unlock()
			return j, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return nil, false
		}
		select {
		case <-ctx.Done():
			return nil, false
		case <-q.signal:
		}
	}
}
