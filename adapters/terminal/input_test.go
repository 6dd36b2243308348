package terminal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/internal/testenv"
)

// TestLongLines: a line over MaxLine is refused with a message naming the
// limit, and the lines around it still arrive; lines far over the kernel's
// 4 KiB canonical limit, and exactly MaxLine, are handed over whole.
func TestLongLines(t *testing.T) {
	long := strings.Repeat("x", 100<<10)
	exact := strings.Repeat("y", MaxLine)
	tooLong := strings.Repeat("z", MaxLine+1)
	huge := strings.Repeat("w", 3*MaxLine)
	input := "!run echo before\n" + long + "\n" + tooLong + "\n" + exact + "\r\n" + huge + "\n!run echo after\n"
	var out syncBuffer
	term := New(strings.NewReader(input), &out, Options{User: "carol", Color: "never"})
	var got []string
	err := term.Run(context.Background(), adapters.HandlerFunc(func(_ context.Context, e adapters.Event) {
		got = append(got, e.Text)
	}))
	if err != nil {
		t.Fatalf("Run = %v, want nil: no line may stop the session", err)
	}
	want := []string{"!run echo before", long, exact, "!run echo after"}
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d is %d bytes starting %.20q, want %d bytes starting %.20q", i, len(got[i]), got[i], len(want[i]), want[i])
		}
	}
	refusals := strings.Count(out.String(), "longer than the 1 MiB a line may be; it was not sent")
	if refusals != 2 {
		t.Errorf("%d refusals, want 2:\n%.2000s", refusals, out.String())
	}
	for _, size := range []string{"That line was 1 MiB", "That line was 3 MiB"} {
		if !strings.Contains(out.String(), size) {
			t.Errorf("output lacks %q", size)
		}
	}
}

// queueBot is a stand-in for the bot's per-conversation queue: Handle
// queues a message and returns; a worker answers each with one Post, after
// a pause; a message past the queue's capacity is turned away, as
// bot.queue_size does.
type queueBot struct {
	term  *Terminal
	queue chan adapters.Event
	pause time.Duration

	mu      sync.Mutex
	refused []string
}

func (b *queueBot) Handle(_ context.Context, e adapters.Event) {
	select {
	case b.queue <- e:
	default:
		b.mu.Lock()
		b.refused = append(b.refused, e.Text)
		b.mu.Unlock()
		_ = b.term.Notify(context.Background(), adapters.Notice{User: e.User, Text: "I am still working on your earlier messages here", Reply: e.Reply})
	}
}

func (b *queueBot) work() {
	for e := range b.queue {
		time.Sleep(b.pause)
		_, _ = b.term.Post(context.Background(), adapters.Place{}, adapters.Content{Text: "answer to " + e.Text})
	}
}

// TestPacedInputIsNeverTurnedAway: 100 lines piped at once into a bot
// that queues at most 2 and answers slowly are all handled, in order, and
// none is turned away.
func TestPacedInputIsNeverTurnedAway(t *testing.T) {
	var input strings.Builder
	for i := range 100 {
		fmt.Fprintf(&input, "!run echo %d\n", i)
		if i == 50 {
			input.WriteString("/as bob\n")
		}
	}
	var out syncBuffer
	term := New(strings.NewReader(input.String()), &out, Options{User: "carol", Color: "never", Pace: time.Hour})
	b := &queueBot{term: term, queue: make(chan adapters.Event, 2), pause: time.Millisecond}
	go b.work()
	if err := term.Run(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	testenv.Within(10*time.Second, func() bool { return strings.Contains(out.String(), "answer to !run echo 99\n") })
	close(b.queue)
	if len(b.refused) > 0 {
		t.Fatalf("%d lines were turned away: %v", len(b.refused), b.refused)
	}
	var answers []string
	for _, l := range strings.Split(out.String(), "\n") {
		if rest, ok := strings.CutPrefix(l, "countersign: answer to !run echo "); ok {
			answers = append(answers, rest)
		}
	}
	if len(answers) != 100 {
		t.Fatalf("%d answers, want 100:\n%s", len(answers), out.String())
	}
	for i, a := range answers {
		if a != strconv.Itoa(i) {
			t.Fatalf("answer %d is to line %s: out of order", i, a)
		}
	}
}

// TestPaceIsBounded: a bot that never answers still gets every line, one
// Pace apart, so a message nobody answers cannot stop the input.
func TestPaceIsBounded(t *testing.T) {
	term := New(strings.NewReader("one\ntwo\nthree\n"), io.Discard, Options{Color: "never", Pace: 20 * time.Millisecond})
	var got []string
	start := time.Now()
	err := term.Run(context.Background(), adapters.HandlerFunc(func(_ context.Context, e adapters.Event) {
		got = append(got, e.Text)
	}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, " ") != "one two three" {
		t.Fatalf("got %q", got)
	}
	if d := time.Since(start); d < 40*time.Millisecond {
		t.Errorf("three unanswered lines took %s, want at least two paces (40ms): they were not held back", d)
	}
}

// TestPaceWaitsForTheAnswer: the second message is not handed over until
// the first is answered, and terminal commands between them wait their
// turn too, so /as applies to the right line.
func TestPaceWaitsForTheAnswer(t *testing.T) {
	r, w := io.Pipe()
	var out syncBuffer
	term := New(r, &out, Options{User: "carol", Color: "never", Pace: time.Hour})
	events := make(chan adapters.Event, 10)
	done := make(chan error, 1)
	go func() {
		done <- term.Run(context.Background(), adapters.HandlerFunc(func(_ context.Context, e adapters.Event) { events <- e }))
	}()
	if _, err := io.WriteString(w, "first\n/as bob\nsecond\n"); err != nil {
		t.Fatal(err)
	}
	e := <-events
	if e.Text != "first" || e.User.ID != "carol" {
		t.Fatalf("first event = %+v", e)
	}
	// The terminal has read "/as bob" and "second" (the pipe write
	// returned); neither may act before the answer.
	select {
	case e := <-events:
		t.Fatalf("%q was handed over before %q was answered", e.Text, "first")
	default:
	}
	if strings.Contains(out.String(), "you are now bob") {
		t.Fatalf("/as ran before the line ahead of it was answered:\n%s", out.String())
	}
	if _, err := term.Post(context.Background(), adapters.Place{}, adapters.Content{Text: "the first answer"}); err != nil {
		t.Fatal(err)
	}
	e = <-events
	if e.Text != "second" || e.User.ID != "bob" {
		t.Fatalf("second event = %+v, want second from bob", e)
	}
	_ = w.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestForgetsOldMessages: the terminal keeps at most maxKept messages; an
// update of a forgotten one is ErrGone, so the bot posts it again.
func TestForgetsOldMessages(t *testing.T) {
	term := New(strings.NewReader(""), io.Discard, Options{Color: "never"})
	ctx := context.Background()
	pending, err := term.Post(ctx, adapters.Place{}, adapters.Content{Card: &adapters.Card{ApprovalID: "keep", State: "pending"}})
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	for i := range 3 * maxKept {
		ref, err := term.Post(ctx, adapters.Place{}, adapters.Content{Card: &adapters.Card{ApprovalID: strconv.Itoa(i), State: "done"}})
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, ref)
	}
	term.mu.Lock()
	n, ns := len(term.rendered), len(term.states)
	term.mu.Unlock()
	if n > maxKept || ns > maxKept {
		t.Fatalf("the terminal remembers %d messages (%d states), want at most %d", n, ns, maxKept)
	}
	err = term.Update(ctx, adapters.Place{}, refs[0], adapters.Content{Text: "x"})
	if !errors.Is(err, adapters.ErrGone) {
		t.Errorf("update of a forgotten message = %v, want ErrGone", err)
	}
	if err := term.Update(ctx, adapters.Place{}, pending, adapters.Content{Card: &adapters.Card{ApprovalID: "keep", State: "approved"}}); err != nil {
		t.Errorf("a pending card was forgotten before finished ones: %v", err)
	}
	if err := term.Update(ctx, adapters.Place{}, refs[len(refs)-1], adapters.Content{Text: "y"}); err != nil {
		t.Errorf("the newest message was forgotten: %v", err)
	}
}
