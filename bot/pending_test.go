package bot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters/terminal"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/risk"
)

// TestPendingCounts: !pending says how many approvals wait in the channel
// in all, lists the oldest of them when there are more than a message
// holds, and counts neither decided ones nor another channel's.
func TestPendingCounts(t *testing.T) {
	tests := []struct {
		name       string
		waiting    int
		want       string
		wantListed int
	}{
		{"a few, all shown", 3, `3 approvals waiting in this channel:\n`, 3},
		{"more than a message holds", 60, `60 approvals waiting in this channel \(the oldest 25 shown\):\n`, 25},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, setup{})
			ctx := context.Background()
			base := time.Now().Add(-time.Minute)
			create := func(tcid, channel string, created time.Time) *approval.Approval {
				a, _, err := w.store.Create(ctx, &approval.Approval{
					ToolCallID: tcid, Tool: "execute_command", Args: json.RawMessage(`{"command":"touch ` + tcid + `"}`),
					Verdict:      risk.Verdict{Decision: risk.Confirm, Risk: risk.Medium},
					Requester:    approval.User{ID: "bob"},
					Conversation: approval.Conversation{Platform: "terminal", Channel: channel, Thread: terminal.Thread},
					CreatedAt:    created, ExpiresAt: created.Add(time.Hour),
				})
				if err != nil {
					t.Fatal(err)
				}
				return a
			}
			var oldest string
			for i := range tc.waiting {
				a := create(fmt.Sprint("call-", i), terminal.Channel, base.Add(time.Duration(i)*time.Millisecond))
				if i == 0 {
					oldest = a.ID
				}
			}
			create("elsewhere", "other", base)
			decided := create("decided", terminal.Channel, base)
			if _, err := w.store.Decide(ctx, decided.ID, approval.Cancelled, approval.User{ID: "bob"}, "", time.Now()); err != nil {
				t.Fatal(err)
			}
			w.say(t, "!pending")
			w.screen.waitFor(t, tc.want+`\s+`+oldest)
			w.end(t)
			if got := strings.Count(w.screen.String(), "(asked by bob"); got != tc.wantListed {
				t.Errorf("%d approvals listed, want %d", got, tc.wantListed)
			}
			if regexp.MustCompile(regexp.QuoteMeta(decided.ID)).MatchString(w.screen.String()) {
				t.Errorf("the decided approval %s is listed", decided.ID)
			}
		})
	}
}
