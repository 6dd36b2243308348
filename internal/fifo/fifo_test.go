package fifo

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testenv"
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
		testenv.Eventually(t, 10*time.Second, func() bool { return g.Waiting() == i+1 }, fmt.Sprintf("%d waiting", i+1))
	}
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error)
	go func() {
		_, err := g.Enter(ctx, time.Hour, nil)
		gaveUp <- err
	}()
	testenv.Eventually(t, 10*time.Second, func() bool { return g.Waiting() == 4 }, "4 waiting")
	cancel()
	if err := <-gaveUp; err == nil {
		t.Error("a waiter whose context ended got in")
	}
	testenv.Eventually(t, 10*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(told) == 3
	}, "three waiters told their place")
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
