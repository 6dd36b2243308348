package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/tools"
)

// This file stops a running approved call on request (!stop, a Stop
// button): its run's context is cancelled, the tool kills the whole
// process group, and the model is told the call stopped part-way.

// runs are the approved calls running in this process.
type runs struct {
	mu sync.Mutex
	m  map[string]*run // approval id → its run
	// recording counts the approved calls claimed here whose outcome is
	// not yet recorded (Abandon waits for them).
	recording inflight
}

// run is one approved call in flight.
type run struct {
	rec    *approval.Approval
	cancel context.CancelCauseFunc
}

// stopCause is the cause a stopped run's context carries.
type stopCause struct{ by approval.User }

func (s stopCause) Error() string { return "stopped by " + s.by.Display() }

// start registers the run of rec and returns the context it runs in, and
// done, which forgets it.
func (r *runs) start(ctx context.Context, rec *approval.Approval) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	r.mu.Lock()
	if r.m == nil {
		r.m = map[string]*run{}
	}
	r.m[rec.ID] = &run{rec: rec, cancel: cancel}
	r.mu.Unlock()
	return ctx, func() {
		r.mu.Lock()
		delete(r.m, rec.ID)
		r.mu.Unlock()
		cancel(nil)
	}
}

// stoppedBy reports who stopped the run whose context is ctx.
func stoppedBy(ctx context.Context) (approval.User, bool) {
	var sc stopCause
	if errors.As(context.Cause(ctx), &sc) {
		return sc.by, true
	}
	return approval.User{}, false
}

// stoppedRun is the result of a call stopped while it ran: whatever the
// tool reported, the model learns it stopped part-way.
func stoppedRun(by approval.User, res tools.Result) tools.Result {
	out := tools.Failed(fmt.Errorf("stopped by %s while it ran", by.Display()))
	out.Message = "The operation was stopped by " + by.Display() + " while it ran, so it may have taken effect in part. " +
		"Do not run it again unless the user asks; check its effect first."
	out.Stdout, out.Stderr, out.ExitCode, out.Truncated, out.Note = res.Stdout, res.Stderr, res.ExitCode, res.Truncated, res.Note
	out.DurationMS = res.DurationMS
	return out
}

// ErrNotRunning is wrapped by Stop's error when the call is not running
// in this process.
var ErrNotRunning = errors.New("the call is not running here")

// Running returns the calls running in this process, for the ids a stop
// request may name: approved calls, and calls that needed no card (their
// Verdict.Decision is risk.Auto, and their id is this process's own).
func (a *Agent) Running() []*approval.Approval {
	a.runs.mu.Lock()
	defer a.runs.mu.Unlock()
	out := make([]*approval.Approval, 0, len(a.runs.m))
	for _, r := range a.runs.m {
		out = append(out, r.rec)
	}
	slices.SortFunc(out, func(x, y *approval.Approval) int { return strings.Compare(x.ID, y.ID) })
	return out
}

// Stop stops the running call of approval id on behalf of by (the caller
// has checked that by may stop it). The run ends as failed, and its turn
// is told it stopped part-way. A call that does not run in this process
// is an error wrapping ErrNotRunning.
func (a *Agent) Stop(ctx context.Context, id string, by approval.User) error {
	a.runs.mu.Lock()
	r, ok := a.runs.m[id]
	a.runs.mu.Unlock()
	if !ok {
		return fmt.Errorf("stop approval %s: %w", id, ErrNotRunning)
	}
	_ = a.audit(ctx, approval.Event{
		Kind: approval.KindStop, Actor: by.ID, ApprovalID: id, Tool: r.rec.Tool, Operation: a.operation(r.rec.Tool, r.rec.Args),
		Decision: approval.DecisionStop, Outcome: approval.OutcomeStopped, Channel: r.rec.Conversation.Channel,
	})
	r.cancel(stopCause{by: by})
	return nil
}

// forcedQuit is who stops the runs of a forced quit.
var forcedQuit = approval.User{ID: "countersign", Name: "a forced quit of Countersign"}

// Abandon is for a forced quit (a third Ctrl-C, a second SIGTERM), just
// before the process exits: every call running here is stopped at once,
// its whole process group killed, and each approved one recorded as
// stopped, waiting at most d for the records. It returns how many calls
// it stopped. Whatever is not recorded within d, a sweep on another
// replica (or the next start) ends as interrupted.
func (a *Agent) Abandon(d time.Duration) int {
	a.runs.mu.Lock()
	list := make([]*run, 0, len(a.runs.m))
	for _, r := range a.runs.m {
		list = append(list, r)
	}
	a.runs.mu.Unlock()
	for _, r := range list {
		a.log.Warn("a forced quit stops a running call", logAttrs(r.rec)...)
		r.cancel(stopCause{by: forcedQuit})
	}
	recorded := make(chan struct{})
	go func() {
		a.runs.recording.wait()
		close(recorded)
	}()
	select {
	case <-recorded:
	case <-time.After(d):
		a.log.Error("a forced quit left calls whose outcome is not recorded; a sweep will end them as interrupted", "waited", d)
	}
	return len(list)
}
