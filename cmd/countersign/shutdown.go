package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/countersign/countersign/adapters/terminal"
)

// leaving is set once the person at the terminal has asked to quit (Ctrl-C
// twice): the bot is then finishing the work in flight, and one more
// Ctrl-C quits at once.
var leaving atomic.Bool

// interruptible returns a context cancelled at the first SIGINT or
// SIGTERM, after saying what the shutdown waits for; the next one (or the
// first, once the terminal is leaving) ends the process at once. stop
// releases the signals.
func interruptible(stderr io.Writer) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for first := true; ; first = false {
			select {
			case <-sigs:
			case <-done:
				return
			}
			if first && !leaving.Load() {
				fmt.Fprintln(stderr, "countersign: shutting down: waiting for the command runs and model turns in flight "+
					"(at most bot.shutdown_grace); Ctrl-C again quits at once")
				cancel()
				continue
			}
			fmt.Fprintln(stderr, "countersign: quitting now; work in flight is abandoned")
			os.Exit(130)
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}

// sayPending tells the person leaving the terminal what becomes of the
// approvals still waiting there: kept in Redis, or lost with the memory
// store.
func (a *app) sayPending(out io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	list, err := a.store.ListPending(ctx, "terminal", terminal.Channel)
	if err != nil {
		a.log.Warn("list the pending approvals at quit", "err", err)
		return
	}
	n := len(list)
	if n == 0 {
		return
	}
	what := fmt.Sprintf("%d approvals", n)
	verb := "stay"
	if n == 1 {
		what, verb = "1 approval", "stays"
	}
	if a.redis != nil {
		fmt.Fprintf(out, "%s %s pending in Redis (%s); they expire unless decided, and !pending lists them after the next start.\n", what, verb, a.where)
		return
	}
	verb = "are"
	if n == 1 {
		verb = "is"
	}
	fmt.Fprintf(out, "%s %s lost: the store is in memory (set COUNTERSIGN_REDIS_URL or store.redis_url to keep approvals across restarts).\n", what, verb)
}
