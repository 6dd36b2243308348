package agent

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/rules"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
)

// This file is the gate (issue 24; GATE.md): the one way in for every
// call, whoever makes it. A model's tool call (a built-in tool or an MCP
// server's), a person's direct command and a person's edit of a card all
// reach admit as the same value, an entry, and go the same way:
//
//	admit   bound it (size; cards per model answer)
//	        judge it (risk.Policy), with the level its source may give
//	        audit the assessment (no record, no run)
//	        block → a blocked result
//	        auto  → run now (run.go), audited, the result
//	        card  → a stored approval, whose card the caller posts
//
// No entry builds its own shortcut: Handle's loop (turn.go), Direct
// (direct.go), Edit (edit.go) and Call (call.go) only make the entry and
// act on what admit returns. In the file's order: admit; the judgement
// (assess); the card and what it requires (card, requirement); and at the
// end, the call's arguments checked against the tool's schema
// (checkArgs).

// source is who made a call; it decides what the call's own word on its
// risk (risk_level) counts for, and whether it may run without a card.
type source string

const (
	// fromModel: a tool call in a model turn, a built-in tool or an MCP
	// server's. Its risk_level counts as far as the policy lets it.
	fromModel source = "model"
	// fromCommand: a person's direct command (!run, !sql, !http,
	// !file). A person gives no level: the call is judged on what it does.
	fromCommand source = "command"
	// fromEdit: a person's edit of a waiting card. Judged afresh with no
	// level, and always a new card: an edit is not an approval.
	fromEdit source = "edit"
	// fromAgent: another agent's call through the gateway (call.go). Its
	// risk_level may raise the risk, never lower it, unless the operator
	// set the agent's mode to smart; its requester is the agent.
	fromAgent source = "agent"
)

// rates reports whether a call from s may rate its own risk.
func (s source) rates() bool { return s == fromModel || s == fromAgent }

// entry is one call at the gate: who asks, where its card goes, what it
// calls, and where it comes from.
type entry struct {
	from source
	// requester is who asks: the person who spoke to the model, typed the
	// command, or edited the card.
	requester approval.User
	// conv is where the call's card goes, and its result.
	conv approval.Conversation
	tool string
	// args are the arguments as given: the model's may not even be JSON.
	args string
	// callID is the tool call its result answers; turnID the turn that
	// waits for its card.
	callID, turnID string
	// outside names the public host the turn has read from, if any
	// (taint.go); only a model's call has one.
	outside string
	// fenced are the calls the kernel's fence stopped earlier in the
	// turn (fenced.go): they are not auto-run again.
	fenced fencedCalls
	// replaces is, for an edit, the waiting card the call replaces.
	replaces *approval.Approval
	// cardsLeft, when not nil, is how many more cards the model's answer
	// may post (agent.max_cards_per_answer); admit counts it down.
	cardsLeft *int
	// show is where the call is shown while it runs, if anywhere.
	show *shownHere
	// mode is, for another agent's call, the mode its operator gave it
	// (call.go); it can make the policy stricter, never looser.
	mode risk.Mode
	// id, when set, is the id the call's approval gets (another agent's
	// call with an idempotency key: a repeat finds the same card), and
	// keyed says that a second Create with its tool call id attaches to
	// the first instead of making another card.
	id    string
	keyed bool
	// decideOnly: judge and decide, never run (another agent that runs
	// the tool itself, like a hook): an auto call is allowed unrun.
	decideOnly bool
	// reason is another agent's own reason for the call, for the audit.
	reason string
}

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
	// Tokens is what the turn's model calls have spent (llm.budget.per_turn).
	Tokens int64 `json:"tokens,omitempty"`
	// Unrecorded: an add of the turn's spend failed, so its resumed part
	// stops at its next check, as the turn would have (agent/budget.go).
	Unrecorded bool `json:"unrecorded,omitempty"`
}

// The kinds of a suspended turn.
const (
	kindModel  = "model"  // resumes the model loop
	kindDirect = "direct" // replies with the result
)

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
	replaced bool               // an edit: the card it replaces has ended as replaced
}

// admit is the gate: it bounds, judges and audits one call and acts on
// the verdict. An auto call runs now, a blocked call gets its blocked
// result, and a call that needs a person gets a stored approval
// (callState.approval) whose card the caller posts. Every failure becomes
// a result that did not run; admit never runs a call it could not audit.
func (a *Agent) admit(ctx context.Context, e entry) callState {
	ctx, span := a.traceEntry(ctx, e) // trace.go
	defer span.End()
	cs := callState{ID: e.callID, Tool: e.tool}
	set := func(r tools.Result) callState { cs.Result = &r; return cs }

	// Bounds first: a call too large is refused before anything reads,
	// stores or shows it; the audit line names its size, not its text.
	if n := len(e.args) + len(e.tool); n > a.cfg.MaxCallBytes {
		why := fmt.Sprintf("the arguments are %s, over the limit of %s (agent.max_call_bytes)", bytesText(n), bytesText(a.cfg.MaxCallBytes))
		_ = a.audit(ctx, approval.Event{
			Kind: approval.KindAssessment, Actor: e.requester.ID, Tool: clipName(e.tool), Decision: approval.DecisionBlock,
			Channel: e.conv.Channel, Detail: "refused at the gate: " + why,
		})
		return set(tools.Denied(errors.New(why + "; send a smaller call, for example a script file the command runs")))
	}
	t, ok := a.tools.Lookup(e.tool)
	if !ok {
		names := make([]string, 0, len(a.specs))
		for _, s := range a.specs {
			names = append(names, s.Name)
		}
		return set(tools.NotStarted(fmt.Errorf("there is no tool %q; the tools are %s", clipName(e.tool), strings.Join(names, ", "))))
	}
	args, err := checkArgs(e.args, a.schemas[e.tool])
	if err != nil {
		return set(tools.InvalidArgs(err))
	}
	if !e.from.rates() {
		args = withoutLevel(args)
	}
	cs.Args = args

	judging := a.traceJudge(ctx, e) // trace.go
	v := a.assess(e, args)
	v = a.refenced(e.fenced, e.tool, args, v)
	v = a.unfenced(e.tool, v)
	if v.Decision != risk.Auto && v.Decision != risk.Block {
		v.Decision = risk.Confirm // the zero value, or anything unknown, waits for a person
	}
	if e.from == fromEdit && v.Decision == risk.Auto {
		v.Decision = risk.Confirm
		v.Reasons = append(v.Reasons, "an edited call always waits on a new card: an edit is not an approval")
	}
	cs.rule = v.Rule
	endJudge(judging, v)
	op := a.operation(e.tool, args)
	ev := approval.Event{
		Kind: approval.KindAssessment, Actor: e.requester.ID, Tool: e.tool, Operation: op,
		Rule: string(v.Rule), Decision: approval.AuditDecision(v.Decision), Channel: e.conv.Channel,
		Detail: strings.Join(v.Reasons, "; "), Risk: string(v.Risk), LLMLevel: string(v.LLMLevel),
	}
	if e.reason != "" {
		ev.Detail = strings.TrimPrefix(ev.Detail+"; the requester's reason: "+clipName(e.reason), "; ")
	}
	over := v.Decision == risk.Confirm && e.cardsLeft != nil && *e.cardsLeft <= 0
	if over {
		ev.Detail += "; no card: over agent.max_cards_per_answer"
	}
	id := ""
	if v.Decision == risk.Confirm && !over {
		id = cmp.Or(e.id, approval.NewID())
		if e.replaces != nil {
			id = replacementID(e.replaces.ID)
		}
		ev.ApprovalID = id
	}
	if e.replaces != nil {
		ev.Detail = strings.TrimPrefix(ev.Detail+"; an edit of "+e.replaces.ID+" by "+e.requester.ID, "; ")
	}
	if err := a.audit(ctx, ev); err != nil {
		return set(auditFailed())
	}

	switch {
	case v.Decision == risk.Block:
		return set(tools.Blocked(v.Reasons...))
	case v.Decision == risk.Auto && e.decideOnly:
		return set(allowedUnrun(v))
	case v.Decision == risk.Auto:
		res := a.runAuto(ctx, t, e.conv, e.requester, e.tool, args, v, e.show)
		a.auditExecution(ctx, e.requester, "", e.conv.Channel, e.tool, op, approval.DecisionAuto, res)
		return set(res)
	case over:
		return set(tools.Denied(fmt.Errorf("this answer already asked for %d approval cards, the most one answer may post (agent.max_cards_per_answer); "+
			"wait until they are decided, then ask for this call again if it is still needed", a.cfg.MaxCardsPerAnswer)))
	}
	if e.cardsLeft != nil {
		*e.cardsLeft--
	}
	if e.replaces != nil {
		// An edit: the old card ends as replaced before the new one
		// exists (edit.go).
		if err := a.replace(ctx, e, op); err != nil {
			if errors.Is(err, errDecidedFirst) {
				return set(tools.NotRun(tools.StatusError, "The card was decided before the edit arrived, so the edit changed nothing"))
			}
			a.log.ErrorContext(ctx, "replacing an edited approval", "approval", e.replaces.ID, "error", err)
			return set(tools.NotStarted(errors.New("the edited card could not be replaced, so nothing changed")))
		}
		cs.replaced = true
	}
	ap, err := a.card(ctx, e, t, id, args, v, op)
	if err != nil {
		a.log.ErrorContext(ctx, "storing an approval", "tool", e.tool, "tool_call", e.callID, "error", err)
		if errors.Is(err, errAudit) {
			return set(auditFailed())
		}
		return set(tools.NotStarted(errors.New("the approval could not be stored, so nobody could approve the operation")))
	}
	cs.ApprovalID = ap.ID
	cs.approval = ap
	return cs
}

// errAudit: the card's audit record could not be written.
var errAudit = errors.New("the card's audit record could not be written")

// assess is the policy's verdict on a call, with the level its source may
// give. Another agent's mode can only make it stricter: the call is judged
// under the policy's own mode and under the agent's, and the stricter
// verdict stands (guarded, the default, never lets its low lower a call).
func (a *Agent) assess(e entry, args json.RawMessage) risk.Verdict {
	c := risk.Call{Tool: e.tool, Args: args, Channel: e.conv.Channel, Outside: e.outside}
	v := a.policy.Assess(c)
	if e.from != fromAgent {
		return v
	}
	c.Mode = e.mode
	if c.Mode == "" {
		c.Mode = risk.Guarded
	}
	if w := a.policy.Assess(c); strictness(w.Decision) > strictness(v.Decision) {
		return w
	}
	return v
}

// strictness orders decisions: block over confirm over auto; anything
// unknown counts as confirm.
func strictness(d risk.Decision) int {
	switch d {
	case risk.Auto:
		return 0
	case risk.Block:
		return 2
	}
	return 1
}

// card stores the approval of a call that waits for a person (id, from
// admit), audited as a card, and returns it; its card is still to post.
func (a *Agent) card(ctx context.Context, e entry, t tools.Tool, id string, args json.RawMessage, v risk.Verdict, op string) (*approval.Approval, error) {
	now := a.now()
	req := a.requirement(e.conv, e.tool, args, v)
	ttl := a.cfg.ApprovalTTL
	if req.Expiry > 0 {
		ttl = req.Expiry
	}
	ap := &approval.Approval{
		ID: id, ToolCallID: e.callID, TurnID: e.turnID,
		Tool: e.tool, Args: args, ArgsHash: approval.ArgsHash(args),
		Verdict: v, Preview: a.preview(ctx, t, args),
		Requester: e.requester, Conversation: e.conv,
		CreatedAt: now, ExpiresAt: now.Add(ttl),
		Requirement: req.Record(now), TraceParent: a.traceParent(ctx),
	}
	if old := e.replaces; old != nil {
		ap.Replaces, ap.ReplacesCall = old.ID, callOf(old)
	}
	err := a.audit(ctx, approval.Event{
		Kind: approval.KindCard, Actor: e.requester.ID, ApprovalID: id, Tool: e.tool, Operation: op,
		Rule: string(v.Rule), Decision: approval.AuditDecision(v.Decision), Channel: e.conv.Channel,
		Detail: "approval card, expires " + ap.ExpiresAt.UTC().Format(time.RFC3339) + needs(req),
	})
	if err != nil {
		return nil, errAudit
	}
	stored, created, err := a.store.Create(ctx, ap)
	if err == nil && !created && e.keyed {
		return stored, nil // the same agent's call again: its card
	}
	if err == nil && !created && e.replaces == nil {
		// Another call already holds this tool call id (a server that
		// numbers its calls per response): this call is a different one.
		ap.ToolCallID = e.callID + "/" + id
		stored, created, err = a.store.Create(ctx, ap)
	}
	if err != nil {
		return nil, fmt.Errorf("create approval %s: %w", id, err)
	}
	if !created {
		return nil, fmt.Errorf("create approval %s: tool call %s is held by approval %s", id, ap.ToolCallID, stored.ID)
	}
	return stored, nil
}

// requirement resolves what a call that waits for a person needs, from
// the call's facts (tool, channel, the policy's verdict, its SQL statement
// kinds and command names).
func (a *Agent) requirement(conv approval.Conversation, tool string, args json.RawMessage, v risk.Verdict) rules.Requirement {
	if a.require == nil {
		return rules.Requirement{Need: 1}
	}
	req := a.require(rules.Facts{
		Tool: tool, Platform: conv.Platform, Channel: conv.Channel, Verdict: v,
		Call: a.policy.Facts(risk.Call{Tool: tool, Args: args, Channel: conv.Channel}),
	})
	req.Need = max(req.Need, 1)
	return req
}

// needs is what the audit record of a card adds about its requirement:
// "; rule prod-ddl: 2 of group:dba".
func needs(req rules.Requirement) string {
	if req.Rule == "" && req.Need <= 1 && len(req.Approvers) == 0 {
		return ""
	}
	s := "; "
	if req.Rule != "" {
		s += "rule " + req.Rule + ": "
	}
	who := "anyone"
	if len(req.Approvers) > 0 {
		who = strings.Join(req.Approvers, ", ")
	}
	return s + strconv.Itoa(req.Need) + " of " + who
}

// withoutLevel returns args without risk_level (in any case): a person's
// call gives no level, whatever the arguments it started from held (an
// edit starts from the model's).
func withoutLevel(args json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil {
		return args
	}
	found := false
	for k := range obj {
		if strings.EqualFold(k, tools.RiskLevelArg) {
			delete(obj, k)
			found = true
		}
	}
	if !found {
		return args
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return args
	}
	return out
}

// bytesText says a number of bytes in words: "5.0 MiB", "64 KiB", "900 bytes".
func bytesText(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// clipName shortens a tool name that names no tool, for a result or an
// audit line: the model wrote it, and it may be anything.
func clipName(name string) string {
	const most = 100
	if len(name) <= most {
		return name
	}
	return strings.ToValidUTF8(name[:most], "") + "…"
}

// checkArgs checks the arguments the model wrote against the tool's JSON
// schema before anything judges or runs them: they must be one JSON object,
// every required argument must be there, and every argument the schema
// types must have that type. It checks no more of JSON Schema than that
// (enums and formats are the tool's business). The error names the problem
// in words the model can act on. Empty arguments mean {}.
func checkArgs(raw string, schema json.RawMessage) (json.RawMessage, error) {
	text := strings.TrimSpace(raw)
	if text == "" {
		text = "{}"
	}
	if !json.Valid([]byte(text)) {
		var v any
		err := json.Unmarshal([]byte(text), &v)
		return nil, fmt.Errorf("the arguments are not valid JSON (%v); send one JSON object", err)
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, fmt.Errorf("the arguments must be one JSON object, not %s", jsonKind([]byte(text)))
	}

	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		// The registry checked every schema; one it cannot read here
		// only loses the type checks, the tool still checks its input.
		return json.RawMessage(text), nil
	}
	for _, name := range s.Required {
		if _, ok := obj[name]; !ok {
			return nil, fmt.Errorf("missing required argument %q", name)
		}
	}
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p, ok := s.Properties[name]
		if !ok {
			continue
		}
		want := schemaTypes(p.Type)
		if len(want) == 0 {
			continue
		}
		got := valueType(obj[name])
		if !slices.ContainsFunc(want, func(w string) bool { return typeFits(w, got, obj[name]) }) {
			return nil, fmt.Errorf("argument %q must be %s, not %s", name, strings.Join(want, " or "), got)
		}
	}
	return json.RawMessage(text), nil
}

// schemaTypes reads a schema "type", a string or a list of strings.
func schemaTypes(t any) []string {
	switch t := t.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// valueType names the JSON type of a decoded value.
func valueType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "unknown"
}

// typeFits reports whether a value of type got fits schema type want.
func typeFits(want, got string, v any) bool {
	switch want {
	case "string":
		return got == "a string"
	case "boolean":
		return got == "a boolean"
	case "number":
		return got == "a number"
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		f, err := n.Float64()
		return err == nil && f == math.Trunc(f)
	case "array":
		return got == "an array"
	case "object":
		return got == "an object"
	case "null":
		return got == "null"
	}
	return true // a type this check does not know: leave it to the tool
}

func jsonKind(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '{':
		return "several values"
	}
	return "a number"
}
