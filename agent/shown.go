package agent

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
)

// This file shows, where a call was asked, every call of a model turn
// that did not wait for a card: it ran (and why it needed no card), or it
// was blocked or refused. Nobody in a channel should learn only from the
// model's prose that `rm keep.txt` ran. At the end, operation: how a
// call is named there, in the audit log and in the log.

// shownLine is the compact line for a call judged without a card: the
// operation and its outcome, and why it needed no card. It is empty for a
// call that waits for a card.
func (a *Agent) shownLine(cs callState) string {
	if cs.Result == nil {
		return ""
	}
	text := a.render(cs.Tool, cs.Args, *cs.Result)
	line, rest, _ := strings.Cut(text, "\n")
	switch {
	case cs.Result.Executed:
		line += " · " + whyNoCard(cs.rule)
	case len(cs.Args) == 0:
		// Arguments the model got wrong: name the tool and the problem.
		why, _, _ := strings.Cut(rest, "\n")
		line = cs.Tool + ": " + strings.TrimSuffix(line, ".")
		if why != "" {
			line += " (" + why + ")"
		}
	}
	return "▸ " + line
}

// CallShower is an optional Replier capability: the calls of a turn that
// did not wait for a card shown as tasks of the turn (a Slack stream),
// instead of the "▸" lines. ShowCall reports whether the call was shown;
// when false its line is posted as before.
type CallShower interface {
	ShowCall(ctx context.Context, conv approval.Conversation, c ShownCall) bool
}

// Texter is an optional Replier capability: the model's words shown as
// they come (a Slack stream). Text with an empty delta shows nothing and
// reports whether the replier takes the words of this turn at all; the
// agent asks that before each model call, and asks the model to stream
// only when it does, so that a replier without it (Discord, a terminal
// without a stream) gets the whole message at once, as before. Text
// reports false when it did not take delta; the agent then gives it no
// more of the message. Either way Reply is given the whole answer: a
// Texter shows only what it has not shown of it.
type Texter interface {
	Text(ctx context.Context, conv approval.Conversation, delta string) bool
}

// textTo is the model's Request.Text for a call whose words go to out:
// nil when out does not take them.
func (a *Agent) textTo(ctx context.Context, out Replier, conv approval.Conversation) func(string) {
	tx, ok := out.(Texter)
	if !ok || !tx.Text(ctx, conv, "") {
		return nil
	}
	taken := true
	return func(delta string) {
		if taken && delta != "" {
			taken = tx.Text(ctx, conv, delta)
		}
	}
}

// Noter is an optional Replier capability: words in the middle of a turn
// (the "▸" lines), which, unlike Reply, do not end it.
type Noter interface {
	Note(ctx context.Context, conv approval.Conversation, text string) error
}

// Resumer is an optional Sink capability: the Replier for the words of a
// turn that a decision resumes, so that they join what the turn showed
// before it waited (its stream). It returns the Sink itself when the turn
// has nothing of its own any more (another process started it, a
// restart).
type Resumer interface {
	Resumed(convKey string) Replier
}

// resumedOut is where the words of a resumed turn of conversation key go.
func (a *Agent) resumedOut(key string) Replier {
	if r, ok := a.sink.(Resumer); ok {
		if out := r.Resumed(key); out != nil {
			return out
		}
	}
	return a.sink
}

// ShownCall is one call of a turn that needed no card, as a task: it
// runs (Running), it ran (OK when it succeeded), or it was blocked or
// refused. A running call is shown again, under the same ID, when it
// ends.
type ShownCall struct {
	// ID is the model's id of the call, unique in the turn.
	ID string
	// Title is the operation ("df -h").
	Title string
	// Running says the call has started and not ended; OK says nothing
	// then.
	Running bool
	OK      bool
	// Details say why it needed no card and how it ended ("ran without a
	// card: read-only · exit code 0"), or why it did not run ("blocked:
	// …").
	Details string
}

// shownCall is cs as a task; ok is false for a call that waits for a card.
func (a *Agent) shownCall(cs callState) (ShownCall, bool) {
	if cs.Result == nil {
		return ShownCall{}, false
	}
	r := *cs.Result
	c := ShownCall{ID: cs.ID, Title: cs.Tool, OK: r.Executed && r.Status == tools.StatusOK}
	if len(cs.Args) > 0 {
		c.Title = a.operation(cs.Tool, cs.Args)
	}
	if r.Executed {
		c.Details = whyNoCard(cs.rule) + " · " + r.Briefly()
	} else {
		c.Details = r.Briefly()
	}
	return c, true
}

// showCalls shows the calls of a turn that did not wait for a card: as
// tasks where out shows them (CallShower), else as compact lines, unless
// the conversation is quiet. A failure only costs the lines: the model's
// answer still comes.
func (a *Agent) showCalls(ctx context.Context, out Replier, conv approval.Conversation, calls []callState) {
	if a.quiet(conv) {
		return
	}
	shower, _ := out.(CallShower)
	var lines []string
	for _, cs := range calls {
		if shower != nil {
			if c, ok := a.shownCall(cs); ok && shower.ShowCall(ctx, conv, c) {
				continue
			}
		}
		if l := a.shownLine(cs); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return
	}
	say := out.Reply
	if n, ok := out.(Noter); ok {
		say = n.Note
	}
	if err := say(ctx, conv, strings.Join(lines, "\n")); err != nil {
		a.log.WarnContext(ctx, "showing the calls that ran", "conversation", conv.Key(), "error", err)
	}
}

// withWhy is a direct command's reply: its result, and why it needed no
// card when it ran without one.
func (a *Agent) withWhy(cs callState) string {
	text := a.render(cs.Tool, cs.Args, *cs.Result)
	if !cs.Result.Executed {
		return text
	}
	head, rest, more := strings.Cut(text, "\n")
	head += " · " + whyNoCard(cs.rule)
	if more {
		return head + "\n" + rest
	}
	return head
}

// shownHere is where runAuto shows a call of a model turn as it starts
// and as it ends: the turn's CallShower, passed down through admit. nil
// shows nothing (a direct command, a quiet conversation, a replier that
// does not show calls as tasks): the "▸" lines come after the calls ran.
type shownHere struct {
	out  CallShower
	conv approval.Conversation
	id   string // the model's id of the call
}

// callShown is where the model's call id is shown while it runs, or nil
// when out does not show calls as tasks or the conversation is quiet.
func (a *Agent) callShown(out Replier, conv approval.Conversation, id string) *shownHere {
	shower, ok := out.(CallShower)
	if !ok || a.quiet(conv) {
		return nil
	}
	return &shownHere{out: shower, conv: conv, id: id}
}

// running shows that a call that needs no card starts: a task in
// progress.
func (here *shownHere) running(ctx context.Context, a *Agent, tool string, args json.RawMessage, rule risk.Rule) {
	if here == nil {
		return
	}
	c := ShownCall{ID: here.id, Title: tool, Running: true, Details: whyNoCardNow(rule)}
	if len(args) > 0 {
		c.Title = a.operation(tool, args)
	}
	here.out.ShowCall(ctx, here.conv, c)
}

// ran shows how a call that needed no card ended, as soon as it has: the
// same task, complete or failed. showCalls shows it again with the
// turn's other calls; the same task twice is one.
func (here *shownHere) ran(ctx context.Context, a *Agent, tool string, args json.RawMessage, rule risk.Rule, res tools.Result) {
	if here == nil {
		return
	}
	if c, ok := a.shownCall(callState{ID: here.id, Tool: tool, Args: args, Result: &res, rule: rule}); ok {
		here.out.ShowCall(ctx, here.conv, c)
	}
}

// whyNoCard says why an auto-run call needed no card.
func whyNoCard(rule risk.Rule) string {
	switch rule {
	case risk.RuleWhitelist:
		return "ran without a card: read-only"
	case risk.RuleLLM:
		return "ran without a card: the model said low risk"
	case risk.RulePreauthorized:
		return "ran without a card: pre-authorised by the operator"
	}
	return "ran without a card"
}

// whyNoCardNow is whyNoCard while the call runs.
func whyNoCardNow(rule risk.Rule) string {
	return "running" + strings.TrimPrefix(whyNoCard(rule), "ran")
}

// operationCap caps the operation text the audit log and the log keep.
const operationCap = 1000

// operation is the text of a call as a task, the audit log and the log
// name it, as the tool describes it (secrets masked), capped at
// operationCap bytes.
func (a *Agent) operation(tool string, args json.RawMessage) string {
	op := a.tools.Operation(tool, args).Text
	if shown, cut := tools.CapText(op, operationCap); cut {
		op = shown + "…"
	}
	return op
}
