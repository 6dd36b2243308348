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

// admit assesses one tool call and acts on the verdict: an auto call runs
// now, a blocked call gets its blocked result, and a call that needs a
// person gets a stored approval (callState.approval) whose card the caller
// posts. Every failure becomes a result that did not run; admit never
// runs a call it could not audit. outside names the public host the turn
// has read from, if any (taint.go).
// fenced are the calls the kernel's fence stopped earlier in the turn
// (fenced.go): they are not auto-run again.
func (a *Agent) admit(ctx context.Context, conv approval.Conversation, user approval.User, tc ToolCall, turnID, outside string, fenced fencedCalls, show *shownHere) callState {
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
	v = a.refenced(fenced, tc.Name, args, v)
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
		res := a.runAuto(ctx, t, conv, user, tc.Name, args, v, show)
		a.auditExecution(ctx, user, "", conv.Channel, tc.Name, op, approval.DecisionAuto, res)
		return set(res)
	}

	now := a.now()
	req := a.requirement(conv, tc.Name, args, v)
	ttl := a.cfg.ApprovalTTL
	if req.Expiry > 0 {
		ttl = req.Expiry
	}
	ap := &approval.Approval{
		ID: id, ToolCallID: tc.ID, TurnID: turnID,
		Tool: tc.Name, Args: args, ArgsHash: approval.ArgsHash(args),
		Verdict: v, Preview: a.preview(ctx, t, args),
		Requester: user, Conversation: conv,
		CreatedAt: now, ExpiresAt: now.Add(ttl),
		Requirement: req.Record(now),
	}
	err = a.audit(ctx, approval.Event{
		Kind: approval.KindCard, Actor: user.ID, ApprovalID: id, Tool: tc.Name, Operation: op,
		Rule: string(v.Rule), Decision: approval.AuditDecision(v.Decision), Channel: conv.Channel,
		Detail: "approval card, expires " + ap.ExpiresAt.UTC().Format(time.RFC3339) + needs(req),
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
