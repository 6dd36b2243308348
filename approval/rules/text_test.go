package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/approval"
)

func votes(names ...string) approval.Progress {
	p := approval.Progress{Need: 2}
	for i, n := range names {
		p.Votes = append(p.Votes, approval.Vote{By: approval.User{ID: "U" + n, Name: n}, At: time.Unix(int64(i), 0)})
	}
	return p
}

// slack stands in for an adapter's own mentions.
func slack(entry string) string {
	kind, name, _ := strings.Cut(entry, ":")
	switch kind {
	case "group":
		return "<!subteam^" + name + ">"
	case "channel":
		return "<#" + name + ">"
	}
	return "<@" + strings.TrimPrefix(entry, "user:") + ">"
}

func TestCard(t *testing.T) {
	dba := Requirement{Approvers: []string{"group:dba"}, Need: 2}
	tests := []struct {
		name    string
		req     Requirement
		p       approval.Progress
		mention Mention
		want    string
	}{
		{"none yet, one needed", Requirement{Approvers: []string{"group:oncall"}, Need: 1}, approval.Progress{}, nil, "Needs an approval from @oncall."},
		{"none yet, two needed", dba, approval.Progress{}, nil, "Needs two approvals from @dba."},
		{"a group by its handle", Requirement{Approvers: []string{"group:@oncall", "channel:#ops"}, Need: 1}, approval.Progress{}, nil, "Needs an approval from @oncall or #ops."},
		{"one of two", dba, votes("bob"), nil, "1 of 2: bob ✓ — one more from @dba"},
		{"two of two", dba, votes("bob", "carol"), nil, "2 of 2: bob ✓, carol ✓"},
		{"one of three, several approvers", Requirement{Approvers: []string{"U1", "group:dba", "role:admin"}, Need: 3},
			approval.Progress{Need: 3, Votes: votes("bob").Votes}, nil, "1 of 3: bob ✓ — two more from @U1, @dba or @admin"},
		{"the stored count wins over a reloaded one", Requirement{Approvers: []string{"group:dba"}, Need: 1}, votes("bob"), nil, "1 of 2: bob ✓ — one more from @dba"},
		{"anyone", Requirement{Need: 1}, approval.Progress{}, nil, "Needs an approval from anyone in the channel."},
		{"star", Requirement{Approvers: []string{"U1", "*"}, Need: 2}, approval.Progress{}, nil, "Needs two approvals from anyone in the channel."},
		{"the platform's mentions", dba, votes("bob"), slack, "1 of 2: bob ✓ — one more from <!subteam^dba>"},
		{"on call", Requirement{Approvers: []string{"U1", "oncall:pagerduty:P123"}, Need: 1}, approval.Progress{}, nil,
			"Needs an approval from @U1 or whoever is on call in PagerDuty schedule P123."},
		{"a voter without a name", dba, approval.Progress{Need: 2, Votes: []approval.Vote{{By: approval.User{ID: "U7"}}}}, nil, "1 of 2: U7 ✓ — one more from @dba"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Card(tc.req, tc.p, tc.mention); got != tc.want {
				t.Errorf("Card = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRefusal(t *testing.T) {
	dba := Requirement{Approvers: []string{"group:dba"}, Need: 2}
	tests := []struct {
		name string
		req  Requirement
		p    approval.Progress
		why  Why
		want string
	}{
		{"not an approver", dba, approval.Progress{}, NotApprover, "Only members of @dba may approve this (2 needed)."},
		{"not an approver, one needed", Requirement{Approvers: []string{"U1", "user:U2"}, Need: 1}, approval.Progress{}, NotApprover, "Only @U1 or @U2 may approve this."},
		{"people and groups", Requirement{Approvers: []string{"U1", "group:dba", "role:admin"}, Need: 1}, approval.Progress{}, NotApprover,
			"Only @U1, members of @dba or members of @admin may approve this."},
		{"on call", Requirement{Approvers: []string{"group:dba", "oncall:opsgenie:S1"}, Need: 1}, approval.Progress{}, NotApprover,
			"Only members of @dba or whoever is on call in Opsgenie schedule S1 may approve this."},
		{"not a canceller", dba, approval.Progress{}, NotCanceller, "Only the requester or members of @dba may cancel this."},
		{"the requester, none yet", dba, approval.Progress{}, Requester, "You asked for this call, so your approval does not count: it needs two approvals from @dba."},
		{"the requester, one yet", dba, votes("bob"), Requester, "You asked for this call, so your approval does not count: 1 of 2: bob ✓ — one more from @dba"},
		{"again", dba, votes("bob"), Repeat, "You have already approved this: 1 of 2: bob ✓ — one more from @dba"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Refusal(tc.req, tc.p, tc.why, nil); got != tc.want {
				t.Errorf("Refusal = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDeadEnd(t *testing.T) {
	tests := []struct {
		name    string
		req     Requirement
		mention Mention
		want    string
	}{
		{"an approval channel", Requirement{Approvers: []string{"group:dba"}, Need: 1, ApprovalChannel: "C0456OPS"}, slack,
			"Only you can see this conversation, and this call needs an approval from someone else: it can be decided in <#C0456OPS>."},
		{"none", Requirement{Approvers: []string{"group:dba"}, Need: 2}, nil,
			"Only you can see this conversation, and this call needs two approvals from someone else: ask for it in a channel where members of @dba can see it."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := DeadEnd(tc.req, tc.mention); got != tc.want {
				t.Errorf("DeadEnd = %q, want %q", got, tc.want)
			}
		})
	}
}
