package slack_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/slack/slacktest"
)

// TestMember: the App Home asks whether a person is in a channel through
// conversations.members (every page of a large channel), once a minute at
// most per channel; a channel the bot cannot see is an error, so that the
// bot lists none of its cards.
func TestMember(t *testing.T) {
	fake, ad, _ := setup(t)
	big := make([]string, 2500)
	for i := range big {
		big[i] = fmt.Sprintf("U%05d", i)
	}
	fake.SetMembers("C0PUBLIC", "U0ALICE", "U0BOB")
	fake.SetMembers("G0PRIVATE", "U0ALICE")
	fake.SetMembers("D0ALICE", "U0ALICE", slacktest.BotUserID)
	fake.SetMembers("C0BIG", big...)
	ctx := context.Background()
	tests := []struct {
		name    string
		channel string
		user    string
		team    string
		want    bool
		wantErr bool
	}{
		{"a member of a channel", "C0PUBLIC", "U0BOB", "", true, false},
		{"not a member of a private channel", "G0PRIVATE", "U0BOB", "", false, false},
		{"a member of a private channel", "G0PRIVATE", "U0ALICE", "", true, false},
		{"not in someone else's direct message", "D0ALICE", "U0BOB", "", false, false},
		{"in her own direct message", "D0ALICE", "U0ALICE", "", true, false},
		{"on the third page of a large channel", "C0BIG", "U02400", "", true, false},
		{"a person of another workspace", "C0PUBLIC", "U0BOB", "T0OTHER", false, false},
		{"a channel the bot cannot see", "C0UNSEEN", "U0ALICE", "", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ad.Member(ctx, tc.channel, adapters.User{ID: tc.user, Team: tc.team})
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("Member(%s, %s) = %v, %v; want %v, error %v", tc.channel, tc.user, got, err, tc.want, tc.wantErr)
			}
		})
	}
	calls := fake.Calls("conversations.members")
	if _, err := ad.Member(ctx, "C0BIG", adapters.User{ID: "U00001"}); err != nil {
		t.Fatal(err)
	}
	if n := fake.Calls("conversations.members"); n != calls {
		t.Errorf("a second question about C0BIG within a minute made %d more conversations.members calls, want 0", n-calls)
	}
}
