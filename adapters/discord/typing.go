package discord

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/countersign/countersign/adapters"
)

// A turn's status in Discord is the typing indicator ("countersign is
// typing…"): Discord has no status text, so every status but
// adapters.StatusWaiting (a person decides, the bot does nothing) shows
// it. POST /channels/{id}/typing shows it for about 10 seconds, or until
// the bot posts; the adapter renews it every typingEvery until the status
// is cleared, and for at most maxTyping in case it never is.

var _ adapters.TurnStatus = (*Adapter)(nil)

const (
	typingEvery = 8 * time.Second
	maxTyping   = 10 * time.Minute
)

// typers are the typing indicators kept up, by channel.
type typers struct {
	mu    sync.Mutex
	loops map[string]*typer
	every time.Duration // typingEvery; tests set it shorter
}

type typer struct {
	stop context.CancelFunc
	done chan struct{}
}

// SetStatus shows the typing indicator in the thread while text is a
// working status, and stops it when text is empty or StatusWaiting. The
// first indicator is sent before SetStatus returns (its error is the
// caller's); renewals are the adapter's, logged when they fail.
func (a *Adapter) SetStatus(ctx context.Context, to adapters.Place, text string) error {
	ch := where(to)
	if ch == "" {
		return errors.New("discord: typing: the place has no channel")
	}
	if text == "" || text == adapters.StatusWaiting {
		a.typing.end(ch)
		return nil
	}
	a.typing.mu.Lock()
	if a.typing.loops == nil {
		a.typing.loops = map[string]*typer{}
	}
	if _, on := a.typing.loops[ch]; on {
		a.typing.mu.Unlock()
		return nil
	}
	loopCtx, stop := context.WithTimeout(context.Background(), maxTyping)
	t := &typer{stop: stop, done: make(chan struct{})}
	a.typing.loops[ch] = t
	every := a.typing.every
	a.typing.mu.Unlock()
	if every <= 0 {
		every = typingEvery
	}

	if err := a.api.do(ctx, http.MethodPost, "/channels/"+ch+"/typing", nil, nil, nil); err != nil {
		close(t.done)
		a.typing.end(ch)
		return fmt.Errorf("show typing in channel %s: %w", ch, err)
	}
	go func() {
		defer close(t.done)
		defer a.typing.forget(ch, t)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-loopCtx.Done():
				return
			case <-tick.C:
				if err := a.api.do(loopCtx, http.MethodPost, "/channels/"+ch+"/typing", nil, nil, nil); err != nil && loopCtx.Err() == nil {
					a.log.Debug("could not renew the typing indicator", "channel", ch, "err", err)
				}
			}
		}
	}()
	return nil
}

// end stops the channel's typing indicator and waits until its loop has
// stopped, so that no renewal follows.
func (ts *typers) end(ch string) {
	ts.mu.Lock()
	t := ts.loops[ch]
	delete(ts.loops, ch)
	ts.mu.Unlock()
	if t != nil {
		t.stop()
		<-t.done
	}
}

// forget drops t from the loops when it ended by itself (maxTyping).
func (ts *typers) forget(ch string, t *typer) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.loops[ch] == t {
		delete(ts.loops, ch)
	}
}

// endAll stops every typing indicator (the adapter stops).
func (ts *typers) endAll() {
	ts.mu.Lock()
	var chs []string
	for ch := range ts.loops {
		chs = append(chs, ch)
	}
	ts.mu.Unlock()
	for _, ch := range chs {
		ts.end(ch)
	}
}
