// Package fifo is a counting semaphore that lets its waiters in first come,
// first served and can say how many wait ahead of each: the global limits
// on model turns and runs, where a person whose message waits is told how
// many are before it.
package fifo

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Gate admits at most its size at once; the others wait in order.
type Gate struct {
	mu    sync.Mutex
	size  int
	in    int
	queue []chan struct{}
}

// New returns a gate of size places (at least one).
func New(size int) *Gate { return &Gate{size: max(size, 1)} }

// Enter waits for a place and returns leave, which gives it up. While it
// waits longer than after, tell is called once with how many wait ahead
// (tell may be nil). It returns ctx's error when ctx ends first.
func (g *Gate) Enter(ctx context.Context, after time.Duration, tell func(ahead int)) (leave func(), err error) {
	g.mu.Lock()
	if g.in < g.size && len(g.queue) == 0 {
		g.in++
		g.mu.Unlock()
		return g.leave, nil
	}
	ch := make(chan struct{})
	g.queue = append(g.queue, ch)
	g.mu.Unlock()
	var told <-chan time.Time
	if tell != nil {
		t := time.NewTimer(after)
		defer t.Stop()
		told = t.C
	}
	for {
		select {
		case <-ch:
			return g.leave, nil
		case <-told:
			told = nil
			if ahead := g.ahead(ch); ahead >= 0 {
				tell(ahead)
			}
		case <-ctx.Done():
			g.mu.Lock()
			if i := slices.Index(g.queue, ch); i >= 0 {
				g.queue = slices.Delete(g.queue, i, i+1)
				g.mu.Unlock()
				return nil, ctx.Err()
			}
			g.mu.Unlock()
			g.leave() // the place was handed over just as ctx ended
			return nil, ctx.Err()
		}
	}
}

// ahead is how many wait before ch; -1 when ch is no longer waiting.
func (g *Gate) ahead(ch chan struct{}) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Index(g.queue, ch)
}

// leave hands the place to the first waiter, or frees it.
func (g *Gate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queue) > 0 {
		close(g.queue[0])
		g.queue = g.queue[1:]
		return
	}
	g.in--
}

// Waiting is how many wait now.
func (g *Gate) Waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}
