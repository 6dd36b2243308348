package approval

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Quorum is the part of Store behind "N of M" approvals: a call that
// needs approvals from several distinct people. Every approval is counted
// through it, so it is part of Store, never an optional capability.
//
// Approve counts one person's approval atomically, in the store, so that
// the Nth distinct approval moves the approval to Approved exactly once
// however many people click at once and on however many replicas. That move
// is Decide's: the same pending → approved transition, with the same
// deadline rule (DecidedState: an approval at or after the deadline expires
// it instead), the same decided_by/decided_at fields, and the same
// unsettled bookkeeping, so that after a winning Approve the caller carries
// the decision through exactly as after a winning Decide (claim, run,
// finish, resolve). Cancel stays Decide(…, Cancelled, …): any one allowed
// cancel ends the approval, whatever the count.
type Quorum interface {
	// Approve records v. See Vote for who counts and ApproveResult for
	// what it reports. An error wrapping ErrNotFound: no such approval;
	// ErrInvalid: v is malformed (no voter, Need below 1, no time).
	// Refusals that are part of the protocol (the requester, a second
	// approval by the same person, an approval no longer pending) are not
	// errors: they are ApproveResult.Refused, with the record.
	Approve(ctx context.Context, id string, v Vote) (ApproveResult, error)
	// Progress returns the approvals recorded so far for id, in the order
	// they were counted, whatever the approval's state; an approval nobody
	// has approved yet has an empty list and Need 0. A missing approval is
	// an error wrapping ErrNotFound.
	Progress(ctx context.Context, id string) (Progress, error)
	// ResetVotes forgets the votes of a pending approval, keeping its
	// Need, and returns how many it forgot: the call to make after
	// SetPreview, when the blast radius changed under the card, since
	// those who approved saw another one. An approval that is no longer
	// pending keeps its votes (they are its audit trail) and is an error
	// wrapping ErrConflict; a missing one wraps ErrNotFound.
	ResetVotes(ctx context.Context, id string) (int, error)
}

// Vote is one person's approval.
type Vote struct {
	// By is who approves. Distinct people are told apart by By.ID alone.
	By User `json:"by"`
	// At is when; it also decides lateness, as in Decide.
	At time.Time `json:"at"`
	// Reason is the approver's reason, when one was asked for; the last
	// counted vote's reason becomes the record's Reason.
	Reason string `json:"reason,omitempty"`
	// Need is how many distinct approvals the call requires (>= 1). The
	// first counted vote fixes it for the approval's life, so that a
	// configuration reload between two clicks, or two replicas configured
	// apart, cannot move the bar; later votes' Need is ignored.
	Need int `json:"-"`
	// SelfApproval lets the requester's own approval count (a channel
	// with require_second_person: false). Without it the requester is
	// refused with RefusedRequester: the requester never counts.
	SelfApproval bool `json:"-"`
}

// Refusal says why an Approve did not count.
type Refusal string

// The refusals.
const (
	// RefusedNone: the vote counted.
	RefusedNone Refusal = ""
	// RefusedRequester: the voter asked for the call and SelfApproval was
	// not set.
	RefusedRequester Refusal = "requester"
	// RefusedRepeat: the voter's approval is already counted.
	RefusedRepeat Refusal = "repeat"
	// RefusedDecided: the approval is no longer pending (someone reached
	// the count, cancelled it, or it expired); Approval says how.
	RefusedDecided Refusal = "decided"
)

// Errors that name a refusal, for callers that prefer errors.Is; see
// ApproveResult.Err.
var (
	// ErrRequesterVote: the requester's approval does not count.
	ErrRequesterVote = errors.New("the requester's own approval does not count")
	// ErrRepeatVote: this person has already approved.
	ErrRepeatVote = errors.New("this person has already approved")
)

// Progress is how far an approval is towards its count.
type Progress struct {
	// Votes are the counted approvals, in the order they were counted,
	// each with who and when.
	Votes []Vote `json:"votes"`
	// Need is the count fixed by the first vote (0 before any vote).
	Need int `json:"need"`
}

// Have is how many distinct approvals are counted.
func (p Progress) Have() int { return len(p.Votes) }

// Left is how many more approvals are needed (never negative).
func (p Progress) Left() int { return max(p.Need-len(p.Votes), 0) }

// Approved reports whether user id has a counted approval.
func (p Progress) Approved(id string) bool {
	for _, v := range p.Votes {
		if v.By.ID == id {
			return true
		}
	}
	return false
}

// ApproveResult is what Approve reports.
type ApproveResult struct {
	// Approval is the record after the call.
	Approval *Approval
	// Progress is the count after the call (including this vote when it
	// counted).
	Progress Progress
	// Counted is true when this vote was recorded.
	Counted bool
	// Won is true when this call moved the approval out of Pending: to
	// Approved at the Nth distinct vote, or to Expired for a vote at or
	// after the deadline (as Decide does). Exactly one caller wins; the
	// winner carries the decision through.
	Won bool
	// Refused says why the vote did not count, when it did not.
	Refused Refusal
}

// Err returns the refusal as an error (ErrRequesterVote, ErrRepeatVote,
// or ErrConflict when the approval was no longer pending), or nil when the
// vote counted or expired the approval.
func (r ApproveResult) Err() error {
	switch r.Refused {
	case RefusedRequester:
		return ErrRequesterVote
	case RefusedRepeat:
		return ErrRepeatVote
	case RefusedDecided:
		state := State("")
		if r.Approval != nil {
			state = r.Approval.State
		}
		return fmt.Errorf("approve: %w: already %s", ErrConflict, state)
	}
	return nil
}

// DecideResult is the result as Decide would have given it, for callers
// that carry a winning vote through the same path as a winning Decide.
func (r ApproveResult) DecideResult() DecideResult {
	return DecideResult{Approval: r.Approval, Won: r.Won}
}

// CheckVote returns an ErrInvalid error unless v can be counted. Both
// stores call it.
func CheckVote(id string, v Vote) error {
	switch {
	case v.By.ID == "":
		return fmt.Errorf("approve approval %s: %w: the voter has no id", id, ErrInvalid)
	case v.Need < 1:
		return fmt.Errorf("approve approval %s: %w: need %d approvals; it must be at least 1", id, ErrInvalid, v.Need)
	case v.At.IsZero():
		return fmt.Errorf("approve approval %s: %w: the vote has no time", id, ErrInvalid)
	}
	return nil
}

// The outcomes of a vote in the audit log (Kind click, Decision approve),
// beside the states: a counted vote that did not reach the count, and the
// two refusals.
const (
	OutcomeCounted   Outcome = "counted"   // an approval counted, more are needed
	OutcomeRepeat    Outcome = "repeat"    // the same person approved again: not counted
	OutcomeRequester Outcome = "requester" // the requester approved: not counted
)

// VoteEvent is the audit record of one Approve: who voted and when, what
// came of it (counted "k of n", approved, expired, refused, lost), on the
// approval's tool and channel. operation is the call as the tool shows it,
// secrets masked (the store does not know how to show it).
func VoteEvent(r ApproveResult, v Vote, operation string) Event {
	e := Event{At: v.At, Kind: KindClick, Actor: v.By.ID, Decision: DecisionApprove, Operation: operation}
	if a := r.Approval; a != nil {
		e.ApprovalID, e.Tool, e.Channel = a.ID, a.Tool, a.Conversation.Channel
	}
	need := r.Progress.Need
	if need == 0 {
		need = v.Need // a late first vote: nothing was counted
	}
	count := strconv.Itoa(r.Progress.Have()) + " of " + strconv.Itoa(need)
	switch r.Refused {
	case RefusedRequester:
		e.Outcome, e.Detail = OutcomeRequester, "the requester's own approval does not count"
	case RefusedRepeat:
		e.Outcome, e.Detail = OutcomeRepeat, "already approved; "+count
	case RefusedDecided:
		e.Outcome = OutcomeLost
		if r.Approval != nil {
			e.Detail = "already " + string(r.Approval.State)
			if r.Approval.DecidedBy != nil {
				e.Detail += " by " + r.Approval.DecidedBy.ID
			}
		}
	default:
		switch {
		case r.Won && r.Approval != nil:
			e.Outcome, e.Detail = Outcome(r.Approval.State), count
			if v.Reason != "" {
				e.Detail += ": " + v.Reason
			}
		default:
			e.Outcome, e.Detail = OutcomeCounted, count
			if v.Reason != "" {
				e.Detail += ": " + v.Reason
			}
		}
	}
	return e
}
