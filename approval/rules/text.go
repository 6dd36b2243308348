package rules

import (
	"strconv"
	"strings"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/oncall"
)

// Mention writes one approver entry ("U0123", "user:U0123", "group:dba",
// "role:dba") or a channel ("channel:C0123") as a platform shows it: an
// adapter passes its own (Slack: "<!subteam^S0123>" for a group, Discord:
// "<@&123>" for a role). nil is Plain.
type Mention func(entry string) string

// Plain writes an entry without a platform: "@dba" for group:dba and
// role:dba, "@alice" for a user, "#ops" for channel:ops, "whoever is on
// call in PagerDuty schedule P123" for oncall:pagerduty:P123.
func Plain(entry string) string {
	entry = strings.TrimSpace(entry)
	if e, ok, err := oncall.Parse(entry); ok && err == nil {
		return OnCall(e)
	}
	kind, name, found := strings.Cut(entry, ":")
	if !found {
		return "@" + entry
	}
	name = strings.TrimSpace(name)
	if kind == "channel" {
		return "#" + strings.TrimPrefix(name, "#")
	}
	return "@" + strings.TrimPrefix(name, "@") // "group:@oncall" is @oncall, not @@oncall
}

// Who names the approvers in words: "@dba", "@alice or members of @dba",
// "anyone in the channel" for an empty list or "*".
func Who(approvers []string, mention Mention) string {
	if mention == nil {
		mention = Plain
	}
	var parts []string
	for _, a := range approvers {
		a = strings.TrimSpace(a)
		if a == "*" {
			return "anyone in the channel"
		}
		if a != "" {
			parts = append(parts, mention(a))
		}
	}
	if len(parts) == 0 {
		return "anyone in the channel"
	}
	return join(parts)
}

// OnCall names the people an on-call entry stands for.
func OnCall(e oncall.Entry) string {
	return "whoever is on call in " + e.Title() + " schedule " + e.Schedule
}

// whoMembers is Who with groups and roles as "members of …".
func whoMembers(approvers []string, mention Mention) string {
	if mention == nil {
		mention = Plain
	}
	var parts []string
	for _, a := range approvers {
		a = strings.TrimSpace(a)
		switch {
		case a == "*":
			return "anyone in the channel"
		case a == "":
		case IsGroup(a) && !oncall.Is(a):
			parts = append(parts, "members of "+mention(a))
		default:
			parts = append(parts, mention(a))
		}
	}
	if len(parts) == 0 {
		return "anyone in the channel"
	}
	return join(parts)
}

// Card is the line of a card that says who may decide and how far the
// approvals are:
//
//	Needs an approval from @oncall.
//	Needs two approvals from @dba.
//	1 of 2: bob ✓ — one more from @dba
//	2 of 2: bob ✓, carol ✓
func Card(req Requirement, p approval.Progress, mention Mention) string {
	need := max(req.Need, p.Need, 1)
	have := p.Have()
	who := Who(req.Approvers, mention)
	if have == 0 {
		if need == 1 {
			return "Needs an approval from " + who + "."
		}
		return "Needs " + number(need) + " approvals from " + who + "."
	}
	return progress(have, need, p) + more(need-have, who)
}

// progress is "1 of 2: bob ✓".
func progress(have, need int, p approval.Progress) string {
	names := make([]string, 0, len(p.Votes))
	for _, v := range p.Votes {
		names = append(names, v.By.Display()+" ✓")
	}
	return strconv.Itoa(have) + " of " + strconv.Itoa(need) + ": " + strings.Join(names, ", ")
}

// more is " — one more from @dba", or "" when none is left.
func more(left int, who string) string {
	if left <= 0 {
		return ""
	}
	return " — " + number(left) + " more from " + who
}

// Why is why a person's click did not count.
type Why int

// The reasons a click is refused.
const (
	// NotApprover: the person is not among the approvers.
	NotApprover Why = iota
	// NotCanceller: the person may not cancel (neither the requester nor
	// an approver).
	NotCanceller
	// Requester: the person asked for the call; their approval does not
	// count.
	Requester
	// Repeat: the person's approval is already counted.
	Repeat
)

// Refusal is what a person whose click did not count is told, privately;
// it names who can decide:
//
//	Only members of @dba may approve this (2 needed).
//	You asked for this call, so your approval does not count: it needs two approvals from @dba.
//	You have already approved this: 1 of 2: bob ✓ — one more from @dba
func Refusal(req Requirement, p approval.Progress, why Why, mention Mention) string {
	need := max(req.Need, p.Need, 1)
	switch why {
	case NotCanceller:
		return "Only the requester or " + whoMembers(req.Approvers, mention) + " may cancel this."
	case Requester:
		left := need - p.Have()
		if p.Have() == 0 {
			return "You asked for this call, so your approval does not count: it needs " + approvals(need) + " from " + Who(req.Approvers, mention) + "."
		}
		return "You asked for this call, so your approval does not count: " + progress(p.Have(), need, p) + more(left, Who(req.Approvers, mention))
	case Repeat:
		return "You have already approved this: " + progress(p.Have(), need, p) + more(need-p.Have(), Who(req.Approvers, mention))
	}
	s := "Only " + whoMembers(req.Approvers, mention) + " may approve this"
	if need > 1 {
		s += " (" + strconv.Itoa(need) + " needed)"
	}
	return s + "."
}

// DeadEnd is said instead of posting a card that nobody but its requester
// could decide (a DM that needs a second person): where it can be decided.
func DeadEnd(req Requirement, mention Mention) string {
	if mention == nil {
		mention = Plain
	}
	s := "Only you can see this conversation, and this call needs " + approvals(max(req.Need, 1)) + " from someone else"
	if req.ApprovalChannel != "" {
		return s + ": it can be decided in " + mention("channel:"+req.ApprovalChannel) + "."
	}
	return s + ": ask for it in a channel where " + whoMembers(req.Approvers, mention) + " can see it."
}

// approvals is "an approval" or "two approvals".
func approvals(n int) string {
	if n == 1 {
		return "an approval"
	}
	return number(n) + " approvals"
}

// number writes small counts in words, as a sentence does.
func number(n int) string {
	words := []string{"no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}
	if n >= 0 && n < len(words) {
		return words[n]
	}
	return strconv.Itoa(n)
}

// join is "a", "a or b", "a, b or c".
func join(parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}
