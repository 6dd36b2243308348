package approval

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestVoteEvent(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := &Approval{ID: "a1", Tool: "execute_sql", Conversation: Conversation{Platform: "slack", Channel: "C1"}, State: Pending}
	bob := Vote{By: User{ID: "U2", Name: "bob"}, At: at, Reason: "looks right"}
	one := Progress{Need: 2, Votes: []Vote{bob}}
	approved := *rec
	approved.State = Approved
	cancelled := *rec
	cancelled.State, cancelled.DecidedBy = Cancelled, &User{ID: "U3"}
	base := Event{At: at, Kind: KindClick, Actor: "U2", ApprovalID: "a1", Tool: "execute_sql", Operation: "ALTER TABLE t", Decision: DecisionApprove, Channel: "C1"}
	with := func(o Outcome, detail string) Event {
		e := base
		e.Outcome, e.Detail = o, detail
		return e
	}
	tests := []struct {
		name    string
		r       ApproveResult
		want    Event
		wantErr error
	}{
		{"counted", ApproveResult{Approval: rec, Progress: one, Counted: true}, with(OutcomeCounted, "1 of 2: looks right"), nil},
		{"won", ApproveResult{Approval: &approved, Progress: Progress{Need: 1, Votes: []Vote{bob}}, Counted: true, Won: true}, with("approved", "1 of 1: looks right"), nil},
		{"requester", ApproveResult{Approval: rec, Refused: RefusedRequester}, with(OutcomeRequester, "the requester's own approval does not count"), ErrRequesterVote},
		{"repeat", ApproveResult{Approval: rec, Progress: one, Refused: RefusedRepeat}, with(OutcomeRepeat, "already approved; 1 of 2"), ErrRepeatVote},
		{"lost", ApproveResult{Approval: &cancelled, Refused: RefusedDecided}, with(OutcomeLost, "already cancelled by U3"), ErrConflict},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, VoteEvent(tc.r, bob, "ALTER TABLE t")); diff != "" {
				t.Errorf("VoteEvent (-want +got):\n%s", diff)
			}
			if err := tc.r.Err(); !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Errorf("Err() = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

func TestCheckVote(t *testing.T) {
	at := time.Unix(1, 0)
	for _, v := range []Vote{{At: at, Need: 1}, {By: User{ID: "U"}, At: at}, {By: User{ID: "U"}, Need: 1}} {
		if err := CheckVote("a", v); !errors.Is(err, ErrInvalid) {
			t.Errorf("CheckVote(%+v) = %v, want ErrInvalid", v, err)
		}
	}
	if err := CheckVote("a", Vote{By: User{ID: "U"}, At: at, Need: 2}); err != nil {
		t.Errorf("CheckVote of a good vote: %v", err)
	}
}
