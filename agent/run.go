package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
)

// This file runs a tool call: one that needs no card (runAuto, from admit)
// and, for every call, the tool itself (run); and its dry run, the blast
// radius its card shows (preview, at the end). An approved call's way to
// run is part of its life, in decide.go (execute, runApproved).

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
// before an approval is decided (bind.go, rebind).

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
