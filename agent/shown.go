package agent

import (
	"context"
	"strings"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/risk"
)

// This file shows, where a call was asked, every call of a model turn
// that did not wait for a card: it ran (and why it needed no card), or it
// was blocked or refused. Nobody in a channel should learn only from the
// model's prose that `rm keep.txt` ran.

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

// showCalls posts the compact lines of a turn's calls that did not wait
// for a card, unless the conversation is quiet. A failure only costs the
// lines: the model's answer still comes.
func (a *Agent) showCalls(ctx context.Context, out Replier, conv approval.Conversation, calls []callState) {
	if a.quiet(conv) {
		return
	}
	var lines []string
	for _, cs := range calls {
		if l := a.shownLine(cs); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return
	}
	if err := out.Reply(ctx, conv, strings.Join(lines, "\n")); err != nil {
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
