package fifo

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestOrderAndAhead: with one place taken, waiters get in in the order
// they came, each told how many were ahead of it; a waiter that gives up
// leaves the queue.
func TestOrderAndAhead(t *testing.T) {
	g := New(1)
	leave, err := g.Enter(context.Background(), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []int
	told := map[int]int{}
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			l, err := g.Enter(context.Background(), time.Millisecond, func(ahead int) {
				mu.Lock()
				told[i] = ahead
				mu.Unlock()
			})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			l()
		})
		for g.Waiting() != i+1 {
			time.Sleep(time.Millisecond)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error)
	go func() {
		_, err := g.Enter(ctx, time.Hour, nil)
		gaveUp <- err
	}()
	for g.Waiting() != 4 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-gaveUp; err == nil {
		t.Error("a waiter whose context ended got in")
	}
	for {
		mu.Lock()
		n := len(told)
		mu.Unlock()
		if n == 3 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	leave()
	wg.Wait()
	if len(order) != 3 || order[0] != 0 || order[1] != 1 || order[2] != 2 {
		t.Errorf("order = %v, want [0 1 2]", order)
	}
	for i := range 3 {
		if told[i] != i {
			t.Errorf("waiter %d was told %d ahead, want %d", i, told[i], i)
		}
	}
	if g.Waiting() != 0 || g.in != 0 {
		t.Errorf("after all left: %d waiting, %d in", g.Waiting(), g.in)
	}
}
