package bot

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/rules"
)

// TestNudgeText: a reminder pings only those who may still decide (a
// person who voted is not pinged; a group is, once) and its text names
// none of them again; an escalation names escalate_to, who are new.
func TestNudgeText(t *testing.T) {
	a := &approval.Approval{ID: "abc", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	bob := approval.Vote{By: approval.User{ID: "U0BOB", Name: "bob"}}
	tests := []struct {
		name     string
		req      rules.Requirement
		votes    approval.Progress
		escalate bool
		text     string
		pings    []string
	}{
		{
			name:  "nobody voted",
			req:   rules.Requirement{Need: 1, Approvers: []string{"group:oncall", "U0CAROL"}},
			text:  "Reminder: approval abc (rm -f ./tmp_a) still waits for a decision (no approval yet, 1 needed): approve or cancel it.",
			pings: []string{"group:oncall", "U0CAROL"},
		},
		{
			name:  "bob voted: he is not pinged",
			req:   rules.Requirement{Need: 2, Approvers: []string{"U0BOB", "U0CAROL", "group:oncall"}},
			votes: approval.Progress{Votes: []approval.Vote{bob}, Need: 2},
			text:  "Reminder: approval abc (rm -f ./tmp_a) still waits for a decision (1 of 2 approvals): approve or cancel it.",
			pings: []string{"U0CAROL", "group:oncall"},
		},
		{
			name:     "escalated",
			req:      rules.Requirement{Need: 1, Approvers: []string{"group:oncall"}, EscalateTo: []string{"group:leads"}},
			escalate: true,
			text:     "Escalated: approval abc (rm -f ./tmp_a) has waited since 03:04:05 UTC; @leads may now decide it too (no approval yet, 1 needed).",
			pings:    []string{"group:leads", "group:oncall"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text, pings := nudgeText(a, "rm -f ./tmp_a", tc.req, tc.votes, rules.Plain, tc.escalate)
			if text != tc.text {
				t.Errorf("text = %q\nwant   %q", text, tc.text)
			}
			if !slices.Equal(pings, tc.pings) {
				t.Errorf("pings = %q, want %q", pings, tc.pings)
			}
			if strings.Contains(text, "@oncall") {
				t.Errorf("the text names @oncall, whom the ping names already: %q", text)
			}
		})
	}
}

// TestHeadlineNamesEveryApprover: a card that needed two approvals says
// in its header who gave them both, by name.
func TestHeadlineNamesEveryApprover(t *testing.T) {
	carol := approval.User{ID: "U0CAROL", Name: "carol"}
	a := &approval.Approval{State: approval.Done, DecidedBy: &carol, Requirement: approval.Requirement{Need: 2}}
	votes := approval.Progress{Need: 2, Votes: []approval.Vote{{By: approval.User{ID: "U0BOB", Name: "bob"}}, {By: carol}}}
	tests := []struct {
		name  string
		votes approval.Progress
		want  string
	}{
		{"two approvals", votes, "Ran: approved by bob and carol"},
		{"the votes unknown", approval.Progress{}, "Ran: approved by carol"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := headline(a, "Run this command?", tc.votes); got != tc.want {
				t.Errorf("headline = %q, want %q", got, tc.want)
			}
		})
	}
}
