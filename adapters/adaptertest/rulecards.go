package adaptertest

import "github.com/countersign/countersign/adapters"

// RuleCards are the card states of issue 19 (approval rules) as the bot
// makes them (bot/card.go): a card that says who may decide and how many,
// one with an approval counted, and finished cards whose title says what
// happened instead of asking. Every adapter renders each to a golden file.
func RuleCards(id string) map[string]adapters.Card {
	decided := func(state, title, line string) adapters.Card {
		c := PendingCard(id)
		c.State, c.Title, c.StateLine, c.Buttons = state, title, line, nil
		return c
	}
	needs := PendingCard(id)
	needs.StateLine = "waiting for a decision · Needs two approvals from @dba."
	counted := PendingCard(id)
	counted.StateLine = "waiting for a decision · 1 of 2: bob ✓ — one more from @dba"
	ran := decided("done", "Ran: approved by carol", "approved by carol at 05:41:02 UTC · done: exit code 0 in 12ms")
	ran.Output = "removed tmp_a\nremoved tmp_b\n"
	failed := decided("failed", "Failed: approved by carol", "approved by carol at 05:41:02 UTC · failed: exit code 1 in 40ms")
	failed.Output = "rm: cannot remove './tmp_a': Permission denied\n"
	stopped := decided("failed", "Stopped by bob", "approved by carol at 05:41:02 UTC · failed: stopped by bob while it ran in 3s")
	return map[string]adapters.Card{
		"rules_needs_two":  needs,
		"rules_one_of_two": counted,
		"rules_ran":        ran,
		"rules_failed":     failed,
		"rules_stopped":    stopped,
		"rules_cancelled":  decided("cancelled", "Cancelled by alice", "cancelled by alice at 05:41:02 UTC: wrong folder"),
		"rules_expired":    decided("expired", "Expired: nobody decided in time", "expired at 06:00:00 UTC: nobody decided in time"),
	}
}
