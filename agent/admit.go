package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
)

// The kinds of a suspended turn.
const (
	kindModel  = "model"  // resumes the model loop
	kindDirect = "direct" // replies with the result
)

// turnState is the agent's encoding of a suspended turn (approval.Turn's
// State): enough to resume it on any replica after a restart.
type turnState struct {
	Kind      string        `json:"kind"`
	Requester approval.User `json:"requester"`
	// Assistant is the model's message whose calls these are (model
	// turns); it goes into the conversation with the results on resume.
	Assistant *Message `json:"assistant,omitempty"`
	// Calls are the message's tool calls, in order.
	Calls []callState `json:"calls"`
	// RoundTrips is how many model calls the turn has made.
	RoundTrips int `json:"round_trips"`
}

// callState is one tool call of a turn: its result when known, else the
// approval that will decide it.
type callState struct {
	ID         string          `json:"id"`
	Tool       string          `json:"tool"`
	Args       json.RawMessage `json:"args,omitempty"`
	ApprovalID string          `json:"approval_id,omitempty"`
	Result     *tools.Result   `json:"result,omitempty"`

	approval *approval.Approval // a new approval whose card is still to post
	rule     risk.Rule          // the rule that decided, for the line that shows the call
}

// systemUser decides what no person decided: expiry, and cancellations
// the agent makes when it cannot keep an approval.
var systemUser = approval.User{ID: "countersign", Name: "Countersign"}

// auditFailed is the result of a call whose audit record could not be
// written: it does not run (SPEC §6).
func auditFailed() tools.Result {
	r := tools.NotRun(tools.StatusError, "Countersign could not write its audit record, so the operation was not run")
	r.Error = "audit log unavailable"
	return r
}

// admit assesses one tool call and acts on the verdict: an auto call runs
// now, a blocked call gets its blocked result, and a call that needs a
// person gets a stored approval (callState.approval) whose card the caller
// posts. Every failure becomes a result that did not run; admit never
// runs a call it could not audit. outside names the public host the turn
// has read from, if any (taint.go).
func (a *Agent) admit(ctx context.Context, conv approval.Conversation, user approval.User, tc ToolCall, turnID, outside string) callState {
	cs := callState{ID: tc.ID, Tool: tc.Name}
	set := func(r tools.Result) callState { cs.Result = &r; return cs }

	t, ok := a.tools.Lookup(tc.Name)
	if !ok {
		names := make([]string, 0, len(a.specs))
		for _, s := range a.specs {
			names = append(names, s.Name)
		}
		return set(tools.NotStarted(fmt.Errorf("there is no tool %q; the tools are %s", tc.Name, strings.Join(names, ", "))))
	}
	args, err := checkArgs(tc.Arguments, a.schemas[tc.Name])
	if err != nil {
		return set(tools.InvalidArgs(err))
	}
	cs.Args = args

	v := a.policy.Assess(risk.Call{Tool: tc.Name, Args: args, Channel: conv.Channel, Outside: outside})
	if v.Decision != risk.Auto && v.Decision != risk.Block {
		v.Decision = risk.Confirm // the zero value, or anything unknown, waits for a person
	}
	cs.rule = v.Rule
	op := a.operation(tc.Name, args)
	ev := approval.Event{
		Kind: approval.KindAssessment, Actor: user.ID, Tool: tc.Name, Operation: op,
		Rule: string(v.Rule), Decision: approval.AuditDecision(v.Decision), Channel: conv.Channel,
		Detail: strings.Join(v.Reasons, "; "),
	}
	id := ""
	if v.Decision == risk.Confirm {
		id = approval.NewID()
		ev.ApprovalID = id
	}
	if err := a.audit(ctx, ev); err != nil {
		return set(auditFailed())
	}

	switch v.Decision {
	case risk.Block:
		return set(tools.Blocked(v.Reasons...))
	case risk.Auto:
		res := a.runAuto(ctx, t, conv, user, tc.Name, args, v)
		a.auditExecution(ctx, user, "", conv.Channel, tc.Name, op, approval.DecisionAuto, res)
		return set(res)
	}

	now := a.now()
	ap := &approval.Approval{
		ID: id, ToolCallID: tc.ID, TurnID: turnID,
		Tool: tc.Name, Args: args, ArgsHash: approval.ArgsHash(args),
		Verdict: v, Preview: a.preview(ctx, t, args),
		Requester: user, Conversation: conv,
		CreatedAt: now, ExpiresAt: now.Add(a.cfg.ApprovalTTL),
	}
	err = a.audit(ctx, approval.Event{
		Kind: approval.KindCard, Actor: user.ID, ApprovalID: id, Tool: tc.Name, Operation: op,
		Rule: string(v.Rule), Decision: approval.AuditDecision(v.Decision), Channel: conv.Channel,
		Detail: "approval card, expires " + ap.ExpiresAt.UTC().Format(time.RFC3339),
	})
	if err != nil {
		return set(auditFailed())
	}
	stored, created, err := a.store.Create(ctx, ap)
	if err == nil && !created {
		// Another call already holds this tool call id (a server that
		// numbers its calls per response): this call is a different one.
		ap.ToolCallID = tc.ID + "/" + id
		stored, created, err = a.store.Create(ctx, ap)
	}
	if err != nil || !created {
		a.log.ErrorContext(ctx, "storing an approval", "tool", tc.Name, "tool_call", tc.ID, "created", created, "error", err)
		return set(tools.NotStarted(errors.New("the approval could not be stored, so nobody could approve the operation")))
	}
	cs.ApprovalID = stored.ID
	cs.approval = stored
	return cs
}

// runAuto runs a call that needs no card. It is registered as running
// here under an id of its own, so that !stop can stop it like an approved
// one (a `tail -f` must not run for ever).
func (a *Agent) runAuto(ctx context.Context, t tools.Tool, conv approval.Conversation, user approval.User, tool string, args json.RawMessage, v risk.Verdict) tools.Result {
	rec := &approval.Approval{
		ID: approval.NewID(), Tool: tool, Args: args, Verdict: v, Requester: user, Conversation: conv,
		State: approval.Running, StartedAt: a.now(),
	}
	runCtx, done := a.runs.start(ctx, rec)
	defer done()
	// An operator's pre-authorisation stands for a person's approval
	// (rule 2 exists for writes such as a routine restart); every other
	// auto-run call gets the tools' read-only fences.
	res := a.run(runCtx, t, args, tools.RunOptions{AutoRun: v.Rule != risk.RulePreauthorized})
	if by, stopped := stoppedBy(runCtx); stopped {
		res = stoppedRun(by, res)
	}
	return res
}

// run runs a tool call. A tool that panics gets a failed result (it may
// have done something before it did); a result without a status is an
// error.
func (a *Agent) run(ctx context.Context, t tools.Tool, args json.RawMessage, opts tools.RunOptions) (res tools.Result) {
	start := time.Now()
	defer func() {
		if p := recover(); p != nil {
			a.log.ErrorContext(ctx, "a tool panicked", "tool", t.Name(), "panic", fmt.Sprint(p))
			res = tools.Failed(errors.New("the tool crashed while running the operation"))
			res.DurationMS = time.Since(start).Milliseconds()
		}
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
