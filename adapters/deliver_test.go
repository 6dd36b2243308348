package adapters

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testenv"
)

// platform is a chat platform that refuses while down.
type platform struct {
	mu     sync.Mutex
	down   bool
	sent   []string
	calls  int
	callBy map[string]int
}

func (p *platform) send(text string) func(context.Context) error {
	return func(context.Context) error {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.calls++
		if p.callBy == nil {
			p.callBy = map[string]int{}
		}
		p.callBy[text]++
		if p.down {
			return fmt.Errorf("post: %w", ErrUnavailable)
		}
		p.sent = append(p.sent, text)
		return nil
	}
}

func (p *platform) set(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
}

func (p *platform) got() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.sent...)
}

// Sends to one place go in the order they started, even when the first
// waits out an outage.
func TestSendKeepsOrderPerPlace(t *testing.T) {
	p := &platform{down: true}
	s := NewSender(nil)
	s.Base, s.Max = time.Millisecond, 2*time.Millisecond
	deadline := time.Now().Add(time.Minute)
	first := make(chan error, 1)
	go func() { first <- s.Send(context.Background(), "c/t", deadline, Owed{}, p.send("first")) }()
	calls := func() int {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.calls
	}
	testenv.Eventually(t, 10*time.Second, func() bool { return calls() >= 3 }, "three tries of the first send")
	second := make(chan error, 1)
	go func() { second <- s.Send(context.Background(), "c/t", deadline, Owed{}, p.send("second")) }()
	testenv.Eventually(t, 10*time.Second, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.lanes["c/t"] != nil && s.lanes["c/t"].refs == 2
	}, "the second send in the place's lane")
	// Three more tries of the first while the second is in the lane: each
	// a moment the second would have tried, were it not waiting its turn.
	waiting := calls()
	testenv.Eventually(t, 10*time.Second, func() bool { return calls() >= waiting+3 }, "three more tries of the first send")
	p.mu.Lock()
	early := p.callBy["second"]
	p.mu.Unlock()
	if early != 0 {
		t.Errorf("the second send was tried %d times while the first waited out the outage; want it to wait its turn", early)
	}
	p.set(false)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if got := p.got(); len(got) != 2 || got[0] != "first" || got[1] != "second" {
		t.Errorf("sent %v; want [first second]", got)
	}
}

// What was given up is counted, and told once the platform answers again,
// even when nothing else is sent.
func TestGivenUpIsToldWhenThePlatformAnswers(t *testing.T) {
	p := &platform{down: true}
	told := make(chan Owed, 1)
	s := NewSender(func(ctx context.Context, o Owed) error {
		if !TriesOnce(ctx) {
			t.Error("an apology was retried inside Tell")
		}
		if err := p.send("apology")(ctx); err != nil {
			return err
		}
		told <- o
		return nil
	})
	s.Base, s.Max, s.ProbeEvery = time.Millisecond, 2*time.Millisecond, 5*time.Millisecond
	pl := Place{Channel: "c", Thread: "t"}
	err := s.Send(context.Background(), "c/t", time.Now().Add(20*time.Millisecond), Owed{Place: pl, What: []string{Describe(Content{Text: "the answer is 42"})}}, p.send("reply"))
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Send through an outage past its deadline = %v; want ErrUnavailable", err)
	}
	if s.Undelivered() != 1 {
		t.Errorf("Undelivered = %d; want 1", s.Undelivered())
	}
	p.set(false)
	select {
	case o := <-told:
		if o.Place != pl || len(o.What) != 1 {
			t.Errorf("told %+v", o)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the apology was never said")
	}
	if s.Pending() != 0 {
		t.Errorf("%d apologies still owed", s.Pending())
	}
}

// Under TryOnce a refusal comes back at once and is not counted.
func TestTryOnce(t *testing.T) {
	p := &platform{down: true}
	s := NewSender(nil)
	err := s.Send(TryOnce(context.Background()), "c/t", time.Now().Add(time.Minute), Owed{}, p.send("progress"))
	if !errors.Is(err, ErrUnavailable) || p.calls != 1 || s.Undelivered() != 0 {
		t.Errorf("TryOnce: err %v after %d calls, %d undelivered; want ErrUnavailable after 1, none counted", err, p.calls, s.Undelivered())
	}
}

// A card's deadline is its expiry, unless the context says otherwise.
func TestDeadline(t *testing.T) {
	now := time.Now()
	card := &Card{State: "pending", ExpiresAt: now.Add(time.Hour)}
	if d := Deadline(context.Background(), now, card); !d.Equal(card.ExpiresAt) {
		t.Errorf("a pending card's deadline %v; want its expiry", d)
	}
	if d := Deadline(context.Background(), now, nil); !d.Equal(now.Add(DefaultSendDeadline)) {
		t.Errorf("a reply's deadline %v; want the default", d)
	}
	ctx, cancel := context.WithDeadline(context.Background(), now.Add(time.Minute))
	defer cancel()
	if d := Deadline(ctx, now, card); !d.Equal(now.Add(time.Minute)) {
		t.Errorf("with a context deadline: %v; want it", d)
	}
}
