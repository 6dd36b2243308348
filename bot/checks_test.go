package bot_test

import (
	"context"
	"strings"
	"testing"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/bot"
)

// TestTypedDecisionsGetTheChecksOfClicks: a decision typed as words and
// the same decision clicked are checked alike (one function): another
// workspace's user, a member of the approver group, a holder of the
// approver role, someone on no list, and the requester needing a second
// person.
func TestTypedDecisionsGetTheChecksOfClicks(t *testing.T) {
	cfg := bot.Config{Default: bot.Policy{Approvers: []string{"group:oncall", "role:dba"}}}
	tests := []struct {
		name    string
		user    adapters.User
		allowed bool
	}{
		{"member of the approver group", adapters.User{ID: "U7", Name: "gina", Groups: []string{"oncall"}}, true},
		{"holder of the approver role", adapters.User{ID: "U8", Name: "rolf", Roles: []string{"dba"}}, true},
		{"another workspace, in the group", adapters.User{ID: "U9", Name: "otto", Groups: []string{"oncall"}, Outsider: true}, false},
		{"on no list", adaptertest.Bob, false},
		{"group membership the platform could not check", adapters.User{ID: "U6", Name: "una", Groups: []string{"!unchecked:oncall"}}, false},
		{"the requester, in the group", adapters.User{ID: adaptertest.Alice.ID, Name: adaptertest.Alice.Name, Groups: []string{"oncall"}}, false},
	}
	for _, tc := range tests {
		for _, typed := range []bool{false, true} {
			name := tc.name + "/click"
			if typed {
				name = tc.name + "/typed"
			}
			t.Run(name, func(t *testing.T) {
				_, fake, store, done := startOnFakeCfg(t, cfg, []string{"x"}, nil)
				place := adapters.Place{Channel: "C1", Thread: "T1"}
				fake.Say(t, adaptertest.Alice, place, "!run rm -f ./x")
				ref, c := waitCard(t, fake, "pending")
				d := &adapters.Decision{ApprovalID: c.ApprovalID, Approve: true, Ref: ref}
				e := adapters.Event{ID: "decide-1", User: tc.user, Place: place, Decision: d}
				if typed {
					e = adapters.Event{ID: "decide-1", User: tc.user, Place: place, Text: "approve " + c.ApprovalID}
				}
				fake.Deliver(t, e)
				if tc.allowed {
					waitCard(t, fake, "done")
				} else {
					waitFor(t, "a notice", func() bool { return len(fake.Notices(tc.user)) > 0 })
					if n := fake.Notices(tc.user)[0]; !strings.Contains(n, "You cannot approve") {
						t.Errorf("%s was told %q", tc.user.ID, n)
					}
					if strings.HasPrefix(tc.user.ID, "U6") && !strings.Contains(fake.Notices(tc.user)[0], "could not check whether you are in the user group oncall") {
						t.Errorf("una was told %q, want that her group could not be checked", fake.Notices(tc.user)[0])
					}
					got, err := store.Get(context.Background(), c.ApprovalID)
					if err != nil {
						t.Fatal(err)
					}
					if got.State != approval.Pending {
						t.Errorf("the approval is %s after a refused decision", got.State)
					}
				}
				fake.End(t)
				if err := <-done; err != nil {
					t.Fatalf("Run: %v", err)
				}
				if n := len(fake.Notices(tc.user)); !tc.allowed && n != 1 {
					t.Errorf("%d notices for one refused decision, want 1: %q", n, fake.Notices(tc.user))
				}
			})
		}
	}
}
