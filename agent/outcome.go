package agent

import (
	"cmp"
	"strings"

	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
)

// This file is the words for how a call that needed no card went: why it
// needed none, and how it ended. They call nothing else, so that the bot
// can use them for a card's task (bot/progress.go) without a reader going
// back into the agent's showing of a turn (shown.go).

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

// Outcome says in a few words how a call ended, for its task: the words
// of the card (tools.Result.Outcome: "exit code 0", "2 rows", "HTTP
// 200"), with the first line of the error of a failure; or why it did not
// run ("blocked: writes to /etc", "denied: …").
func Outcome(r tools.Result) string {
	why := strings.TrimSpace(cmp.Or(r.Error, r.Message))
	why, _, _ = strings.Cut(why, "\n")
	switch {
	case r.Status == tools.StatusBlocked:
		return "blocked: " + why
	case !r.Executed:
		return strings.TrimSuffix(string(r.Status)+": "+why, ": ")
	}
	out := r.Outcome()
	if r.Status != tools.StatusOK && why != "" {
		out = strings.TrimPrefix(out+", "+why, ", ")
	}
	return cmp.Or(out, "done")
}

// whyNoCardNow is whyNoCard while the call runs.
func whyNoCardNow(rule risk.Rule) string {
	return "running" + strings.TrimPrefix(whyNoCard(rule), "ran")
}
