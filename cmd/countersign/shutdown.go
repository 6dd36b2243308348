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

// abandon, once the bot is built, stops the calls running in it before a
// forced quit exits: their process groups are killed and they are recorded
// as stopped, instead of running on as orphans.
var abandon atomic.Pointer[func()]

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
			fmt.Fprintln(stderr, "countersign: quitting now; running commands are killed and recorded as stopped, other work in flight is abandoned")
			if f := abandon.Load(); f != nil {
				(*f)()
			}
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
	list, err := a.store.ListPending(ctx, "terminal", terminal.Channel, 0)
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

// countLimit bounds the pending approvals counted at start.
const countLimit = 100000

// pendingAtStart says how many pending approvals a start with a shared
// store found and re-attached to (their cards' buttons keep working,
// since a click reads the approval from the store), or "" when there are
// none or the store is in memory (a new process starts empty).
func (a *app) pendingAtStart(ctx context.Context) string {
	if a.redis == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	// Every pending approval is due by the end of time: Due lists them all.
	ids, err := a.store.Due(ctx, time.Now().AddDate(100, 0, 0), countLimit)
	if err != nil {
		a.log.Warn("count the pending approvals at start", "err", err)
		return "could not count the pending approvals in Redis (the log says why); their cards' buttons work once it answers"
	}
	a.log.Info("pending approvals at start", "count", len(ids))
	switch n := len(ids); {
	case n == 0:
		return ""
	case n == 1:
		return "found 1 pending approval in Redis; its card's buttons keep working"
	case n >= countLimit:
		return fmt.Sprintf("found at least %d pending approvals in Redis; their cards' buttons keep working", n)
	default:
		return fmt.Sprintf("found %d pending approvals in Redis; their cards' buttons keep working", n)
	}
}
