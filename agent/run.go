package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
)

// This file is a call's run, in the order a reader meets it: one that
// needs no card (runAuto, from admit) and, for every call, the tool itself
// (run); its dry run, the blast radius its card shows (preview), and the
// same again at the approval, so that the card binds what it showed
// (rebind); a run's stop (runs, Stop); and the audit log every step
// writes (audit), at the end. An approved call's way to run is
// part of its life, in decide.go (execute, runApproved).

// runAuto runs a call that needs no card. It is registered as running
// here under an id of its own, so that !stop can stop it like an approved
// one (a `tail -f` must not run for ever).
func (a *Agent) runAuto(ctx context.Context, t tools.Tool, conv approval.Conversation, user approval.User, tool string, args json.RawMessage, v risk.Verdict, show *shownHere) tools.Result {
	rec := &approval.Approval{
		ID: approval.NewID(), Tool: tool, Args: args, Verdict: v, Requester: user, Conversation: conv,
		State: approval.Running, StartedAt: a.now(),
	}
	runCtx, done := a.runs.start(ctx, rec)
	defer done()
	show.running(ctx, a, tool, args, v.Rule)
	// An operator's pre-authorisation stands for a person's approval
	// (rule 2 exists for writes such as a routine restart); every other
	// auto-run call gets the tools' read-only fences.
	// The kernel's fence around the run depends on why it needs no card.
	res := a.run(runCtx, t, args, tools.RunOptions{AutoRun: v.Rule != risk.RulePreauthorized, AutoBy: autoBy(v.Rule)})
	if by, stopped := stoppedBy(runCtx); stopped {
		res = stoppedRun(by, res)
	}
	show.ran(ctx, a, tool, args, v.Rule, res)
	return res
}

// autoBy is why a call that needs no card needs none, for the tools'
// fences (tools.RunOptions.AutoBy). A rule not named here gets no reason,
// which the fencing tools read as the tightest fence.
func autoBy(r risk.Rule) tools.AutoReason {
	switch r {
	case risk.RuleWhitelist:
		return tools.AutoReadOnly
	case risk.RulePreauthorized:
		return tools.AutoOperator
	case risk.RuleLLM:
		return tools.AutoModel
	}
	return ""
}

// run runs a tool call. A tool that panics gets a failed result (it may
// have done something before it did); a result without a status is an
// error.
func (a *Agent) run(ctx context.Context, t tools.Tool, args json.RawMessage, opts tools.RunOptions) (res tools.Result) {
	start := time.Now()
	ctx, span := a.traceRun(ctx, t.Name(), opts) // trace.go
	defer func() {
		if p := recover(); p != nil {
			a.log.ErrorContext(ctx, "a tool panicked", "tool", t.Name(), "panic", fmt.Sprint(p))
			res = tools.Failed(errors.New("the tool crashed while running the operation"))
			res.DurationMS = time.Since(start).Milliseconds()
		}
		endRun(span, res)
	}()
	res = t.Run(ctx, args, opts)
	if res.Status == "" {
		res.Status = tools.StatusError
	}
	if res.DurationMS == 0 {
		res.DurationMS = time.Since(start).Milliseconds()
	}
	return res
}

// A call's blast radius is computed for its card (admit) and again
// before an approval is decided (rebind, below).

// preview computes the blast radius of a call for its card, within the
// preview time limit. A preview that fails or takes too long says so; it
// never holds the card back.
func (a *Agent) preview(ctx context.Context, t tools.Tool, args json.RawMessage) *tools.Preview {
	pv, ok := t.(tools.Previewer)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, a.cfg.PreviewTimeout)
	defer cancel()
	ch := make(chan tools.Preview, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				a.log.ErrorContext(ctx, "a tool's preview panicked", "tool", t.Name(), "panic", fmt.Sprint(p))
				ch <- tools.Preview{Err: "the preview failed"}
			}
		}()
		ch <- pv.Preview(ctx, args)
	}()
	select {
	case p := <-ch:
		return &p
	case <-ctx.Done():
		return &tools.Preview{Err: "the preview took too long"}
	}
}

// The card binds what it showed (SPEC §5): at the moment of approval the
// blast radius is computed again, and when it changed the call does not
// run; the card shows the new preview and asks again.

// estimateMargin is how much a SQL statement's estimated rows may grow
// between the card and the approval before the card asks again: 10 %, and
// at least estimateSlack rows, since EXPLAIN's estimates wander a little.
const (
	estimateMargin = 10 // per cent
	estimateSlack  = 10 // rows
)

// rebind computes rec's preview again for an approval. It returns the
// updated record and how the blast radius changed, or "" when it did not
// (or cannot be compared: the card showed no preview).
func (a *Agent) rebind(ctx context.Context, rec *approval.Approval) (*approval.Approval, string, error) {
	t, ok := a.tools.Lookup(rec.Tool)
	if !ok || rec.Preview == nil || rec.Preview.Err != "" {
		return rec, "", nil
	}
	fresh := a.preview(ctx, t, rec.Args)
	if fresh == nil {
		return rec, "", nil
	}
	why := changed(rec.Preview, fresh)
	if why == "" {
		return rec, "", nil
	}
	updated, err := a.store.SetPreview(ctx, rec.ID, fresh)
	if err != nil {
		return rec, "", fmt.Errorf("record the new preview of approval %s: %w", rec.ID, err)
	}
	return updated, why, nil
}

// changed says how the blast radius of now differs from was, the preview
// the card showed, or "" when it is the same.
func changed(was, now *tools.Preview) string {
	switch {
	case now.Err != "":
		return "the blast radius can no longer be computed (" + now.Err + ")"
	case was.Estimate > 0 || now.Estimate > 0:
		limit := was.Estimate + max(was.Estimate*estimateMargin/100, estimateSlack)
		if now.Estimate > limit {
			return fmt.Sprintf("the estimated rows grew from about %d to about %d", was.Estimate, now.Estimate)
		}
		return ""
	}
	wasItems, nowItems := slices.Clone(was.Items), slices.Clone(now.Items)
	slices.Sort(wasItems)
	slices.Sort(nowItems)
	if !slices.Equal(wasItems, nowItems) || was.Total != now.Total {
		added := 0
		for _, it := range nowItems {
			if _, found := slices.BinarySearch(wasItems, it); !found {
				added++
			}
		}
		return fmt.Sprintf("it now covers %d items (%d not on the card) where the card showed %d",
			max(now.Total, len(now.Items)), added, max(was.Total, len(was.Items)))
	}
	return ""
}

// A running call stops on request (!stop, a Stop button): its run's
// context is cancelled, the tool kills the whole process group, and the
// model is told the call stopped part-way.

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

// The audit log: every event goes through audit; a run is recorded by
// auditExecution; a call whose record could not be written gets
// auditFailed and does not run. A call is named in it by operation
// (shown.go), as people see it.

// systemUser decides what no person decided: expiry, and cancellations
// the agent makes when it cannot keep an approval.
var systemUser = approval.User{ID: "countersign", Name: "Countersign"}

// audit appends an event. An error means the record was not written and
// the operation it describes must not run.
func (a *Agent) audit(ctx context.Context, e approval.Event) error {
	if e.At.IsZero() {
		e.At = a.now()
	}
	if err := a.store.Audit(ctx, e); err != nil {
		a.log.ErrorContext(ctx, "writing an audit event", "kind", e.Kind, "approval", e.ApprovalID, "tool", e.Tool, "error", err)
		return fmt.Errorf("write audit event %s: %w", e.Kind, err)
	}
	return nil
}

// auditExecution records a run. The run has happened, so a failure here is
// only logged.
func (a *Agent) auditExecution(ctx context.Context, actor approval.User, approvalID, channel, tool, op string, decision approval.AuditDecision, res tools.Result) {
	detail := res.Error
	if res.ExitCode != nil {
		detail = strings.TrimSpace(fmt.Sprintf("exit %d %s", *res.ExitCode, detail))
	}
	if why := interruption(ctx); why != "" {
		// The run was cut short with its turn (!cancel, a shutdown): the
		// record is written all the same, and says so.
		detail = strings.TrimSpace(why + "; " + detail)
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
		defer cancel()
	}
	_ = a.audit(ctx, approval.Event{
		Kind: approval.KindExecution, Actor: actor.ID, ApprovalID: approvalID, Tool: tool, Operation: op,
		Decision: decision, Outcome: approval.Outcome(res.Status), Channel: channel, DurationMS: res.DurationMS,
		Detail: strings.TrimSpace(fmt.Sprintf("%s (%d ms)", detail, res.DurationMS)),
	})
}

// auditFailed is the result of a call whose audit record could not be
// written: it does not run (SPEC §6).
func auditFailed() tools.Result {
	r := tools.NotRun(tools.StatusError, "Countersign could not write its audit record, so the operation was not run")
	r.Error = "audit log unavailable"
	return r
}

// interruption says, for the audit log, why work whose context is ctx was
// cut short (a person's !cancel carries cancel.go's cancelCause); "" while
// ctx is live.
func interruption(ctx context.Context) string {
	if ctx.Err() == nil {
		return ""
	}
	var c cancelCause
	if errors.As(context.Cause(ctx), &c) {
		return "interrupted: " + c.Error()
	}
	return "interrupted: the bot was stopping"
}
