package agent

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
)

// This file is the gate's entry for another agent (issue 26): Claude
// Code, a CI job, any MCP client that calls through the gateway. Its call
// is one more entry into admit (fromAgent), never a path of its own:
//
//	Call     admit it; auto → the result now, block → blocked, confirm →
//	         a card in the agent's channel and a suspended turn of kind
//	         "call", so that its decision is carried through by whoever
//	         decides it, on any replica
//	Outcome  where the call is: its result once its card (or the card
//	         that replaced it by an edit) has ended, read from the store,
//	         so that a waiting caller survives a restart
//	Await    Outcome until there is a result or ctx ends
//
// The agent is the requester ("agent ci-bot"), so require_second_person
// and the rules apply unchanged; an agent has no way to approve.

// AgentCall is one call another agent makes through the gateway.
type AgentCall struct {
	// Agent is the agent's configured name (gateway.agents.<name>).
	Agent string
	// Conv is where its card goes: the agent's channel.
	Conv approval.Conversation
	// Mode is the mode its operator gave it: strict, guarded (the
	// default: its risk_level may raise the risk, never lower it) or
	// smart. It makes the policy stricter, never looser.
	Mode risk.Mode
	Tool string
	Args json.RawMessage
	// Reason is the agent's own reason, kept in the audit record.
	Reason string
	// Key is an idempotency key: a repeat of the call with the same key
	// attaches to its card instead of posting another. "" is a new call.
	Key string
	// DecideOnly: judge and decide, never run; the agent runs the tool
	// itself (a hook). An allowed call's result has executed false.
	DecideOnly bool
}

// Requester is who an agent's call is requested by.
func (c AgentCall) Requester() approval.User { return AgentUser(c.Agent) }

// AgentUser is the requester of an agent's calls: "agent:<name>", shown
// as "agent <name>".
func AgentUser(name string) approval.User {
	return approval.User{ID: AgentPrefix + name, Name: "agent " + name}
}

// AgentPrefix begins the requester id of every agent's call; no chat
// user id has it.
const AgentPrefix = "agent:"

// kindCall is a suspended turn of another agent's call: nothing replies
// when it resumes, the caller reads the outcome from the store (Outcome).
const kindCall = "call"

// CallOutcome is where an agent's call is.
type CallOutcome struct {
	// ID is the call's approval id: "" when it was decided at once.
	ID string
	// Verdict is the policy's, when the call was judged by this request.
	Verdict *risk.Verdict
	// Result is the call's one result; nil while it waits.
	Result *tools.Result
	// Record is the approval as it stands: the last of its edits, nil
	// when the call was decided at once.
	Record *approval.Approval
	// Votes and Need are the card's count so far, while it waits.
	Votes, Need int
	// Attached: the call repeated an earlier one's key, and this is that
	// call's card.
	Attached bool
}

// Done reports whether the call has its result.
func (o CallOutcome) Done() bool { return o.Result != nil }

// ErrNoCall: no call of this agent has that id.
var ErrNoCall = errors.New("no call of this agent has that id")

// Call admits another agent's call at the gate. An auto call has run (or,
// DecideOnly, is allowed unrun) and a blocked or refused one has its
// result; a confirm call has a posted card and waits (Await). An error
// means the call's card could not be kept; nothing ran.
func (a *Agent) Call(ctx context.Context, c AgentCall) (CallOutcome, error) {
	a.busy.add()
	defer a.busy.done()
	user := c.Requester()
	e := entry{
		from: fromAgent, requester: user, conv: c.Conv, tool: c.Tool, args: string(c.Args),
		mode: c.Mode, reason: c.Reason, decideOnly: c.DecideOnly, turnID: approval.NewID(),
	}
	prefix := AgentPrefix
	if c.DecideOnly {
		prefix = decidePrefix
	}
	if c.Key != "" {
		e.id, e.keyed = keyedID(c), true
		e.callID = prefix + c.Agent + ":" + e.id
		if o, err := a.Outcome(ctx, c.Agent, e.id); err == nil {
			o.Attached = true
			return o, nil
		} else if !errors.Is(err, ErrNoCall) {
			return CallOutcome{}, err
		}
	} else {
		e.callID = prefix + c.Agent + ":" + randomHex(12)
	}
	cs := a.admit(ctx, e)
	if cs.approval == nil {
		return CallOutcome{Result: cs.Result}, nil
	}
	if cs.approval.TurnID != e.turnID {
		// Two repeats at once: the other one made the card.
		o, err := a.Outcome(ctx, c.Agent, cs.approval.ID)
		o.Attached = true
		return o, err
	}
	st := turnState{Kind: kindCall, Requester: user, Calls: []callState{cs}}
	if err := a.suspend(ctx, nil, c.Conv, e.turnID, st, []*approval.Approval{cs.approval}); err != nil {
		return CallOutcome{}, err
	}
	v := cs.approval.Verdict
	o, err := a.Outcome(ctx, c.Agent, cs.approval.ID)
	o.Verdict = &v
	return o, err
}

// keyedID is the approval id of an agent's call with an idempotency key:
// derived, so that a repeat on any replica, after any restart, finds it.
// The tool and arguments are part of it: a key reused for another call
// (a client that sends one key for a whole session) is another card,
// never the first call's outcome.
func keyedID(c AgentCall) string {
	kind := "run"
	if c.DecideOnly {
		kind = "decide"
	}
	sum := sha256.Sum256([]byte("countersign: agent " + c.Agent + " " + kind + " call " + c.Key + "\x00" + c.Tool + "\x00" + approval.ArgsHash(c.Args)))
	return idEncoding.EncodeToString(sum[:16])
}

// decidePrefix begins the tool call id of a call that is decided, never
// run (AgentCall.DecideOnly); it is kept with the record, so every replica
// knows an approval of it runs nothing.
const decidePrefix = "agent-decide:"

// decideOnly reports whether rec is the card of a call to decide, never
// run.
func decideOnly(rec *approval.Approval) bool {
	return strings.HasPrefix(rec.ToolCallID, decidePrefix)
}

// Outcome reads where agent's call id is, following the edits that
// replaced its card. Another agent's call, or none, is ErrNoCall.
func (a *Agent) Outcome(ctx context.Context, agent, id string) (CallOutcome, error) {
	rec, err := a.store.Get(ctx, id)
	if errors.Is(err, approval.ErrNotFound) {
		return CallOutcome{}, fmt.Errorf("call %s: %w", id, ErrNoCall)
	}
	if err != nil {
		return CallOutcome{}, fmt.Errorf("read call %s: %w", id, err)
	}
	if rec.Requester.ID != AgentUser(agent).ID {
		return CallOutcome{}, fmt.Errorf("call %s: %w", id, ErrNoCall)
	}
	cur := rec
	for range maxEdits {
		n, err := a.replacement(ctx, cur)
		if err != nil {
			return CallOutcome{}, err
		}
		if n == nil {
			break
		}
		cur = n
	}
	o := CallOutcome{ID: id, Record: cur, Need: max(cur.Requirement.Need, 1)}
	if !cur.State.Final() {
		if cur.State == approval.Pending {
			if p, err := a.store.Progress(ctx, cur.ID); err == nil {
				o.Votes = len(p.Votes)
			}
		}
		return o, nil
	}
	res, _ := a.callResult(ctx, id, cur)
	if decideOnly(rec) && cur.ID != rec.ID {
		// The agent runs what it asked for, not what a person edited it
		// into: an edit of such a call is a refusal of it.
		res = tools.NotRun(tools.StatusDenied, res.Message+" The agent runs its own call, not the edit, so the call as asked is refused; ask again with the edited call if it is still needed")
		res.DecidedBy = cur.Requester.Display()
	}
	o.Result = &res
	return o, nil
}

// Await waits until agent's call id has its result, or ctx ends (then the
// outcome so far, still waiting, and ctx's error). each, when not nil,
// sees every outcome read that differs from the one before (a vote
// counted), for progress.
func (a *Agent) Await(ctx context.Context, agent, id string, each func(CallOutcome)) (CallOutcome, error) {
	last := ""
	t := time.NewTicker(awaitEvery)
	defer t.Stop()
	for {
		o, err := a.Outcome(context.WithoutCancel(ctx), agent, id)
		if err != nil || o.Done() {
			return o, err
		}
		if each != nil {
			if now := fmt.Sprint(o.Record.State, o.Votes, o.Need); now != last {
				last = now
				each(o)
			}
		}
		select {
		case <-ctx.Done():
			return o, ctx.Err()
		case <-t.C:
		}
	}
}

// awaitEvery is how often Await reads the store: the decision may be
// carried through on another replica, so there is nothing in this process
// to wait on.
var awaitEvery = 150 * time.Millisecond

// Judge judges another agent's call without running it or making a card
// (POST /v1/assess): the verdict the gate would act on, or the result of a
// call refused before it was judged (too large, no such tool, arguments
// the schema refuses). The assessment is audited.
func (a *Agent) Judge(ctx context.Context, c AgentCall) (*risk.Verdict, *tools.Result) {
	e := entry{from: fromAgent, requester: c.Requester(), conv: c.Conv, tool: c.Tool, args: string(c.Args), mode: c.Mode}
	if n := len(e.args) + len(e.tool); n > a.cfg.MaxCallBytes {
		r := tools.Denied(fmt.Errorf("the arguments are %s, over the limit of %s (agent.max_call_bytes)", bytesText(n), bytesText(a.cfg.MaxCallBytes)))
		return nil, &r
	}
	if _, ok := a.tools.Lookup(e.tool); !ok {
		r := tools.NotStarted(fmt.Errorf("there is no tool %q", clipName(e.tool)))
		return nil, &r
	}
	args, err := checkArgs(e.args, a.schemas[e.tool])
	if err != nil {
		r := tools.InvalidArgs(err)
		return nil, &r
	}
	v := a.assess(e, args)
	_ = a.audit(ctx, approval.Event{
		Kind: approval.KindAssessment, Actor: e.requester.ID, Tool: e.tool, Operation: a.operation(e.tool, args),
		Rule: string(v.Rule), Decision: approval.AuditDecision(v.Decision), Channel: e.conv.Channel,
		Detail: strings.TrimPrefix(strings.Join(v.Reasons, "; ")+"; judged only (the gateway's assess): nothing ran", "; "),
	})
	return &v, nil
}

// allowedUnrun is the result of a call to decide only that the policy
// lets run without a card: allowed, and not run here.
func allowedUnrun(v risk.Verdict) tools.Result {
	return tools.Result{
		Status: tools.StatusOK, DecidedBy: "policy",
		Reason:  strings.Join(v.Reasons, "; "),
		Message: "Allowed by the policy (rule " + string(v.Rule) + "); Countersign did not run it: the agent runs it itself.",
	}
}

// approvedUnrun is the result of a call to decide only that a person
// approved: allowed, and not run here.
func approvedUnrun(rec *approval.Approval) tools.Result {
	by := "a person"
	if rec.DecidedBy != nil {
		by = rec.DecidedBy.Display()
	}
	return tools.Result{
		Status: tools.StatusOK, DecidedBy: by, Reason: rec.Reason,
		Message: "Approved by " + by + "; Countersign did not run it: the agent runs it itself.",
	}
}

// Specs are the tools as the model is told of them, risk_level included:
// what another agent may call through the gateway.
func (a *Agent) Specs() []tools.Spec { return append([]tools.Spec(nil), a.specs...) }
