package memstore

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"weak"

	"github.com/countersign/countersign/approval"
)

var _ approval.Quorum = (*Store)(nil)

// The votes of N-of-M approvals live beside the records, in a table per
// store reached through the store's weak pointer: a store's table goes
// when the store is collected. Every read and write of a table happens
// under its store's mutex, in the same critical section as the record's
// transition, which is what makes the count and the move to Approved one
// atomic step. (The table sits outside Store so that this capability
// lives in a file of its own; a field of Store would do the same.)
var (
	tablesMu sync.Mutex
	tables   = map[weak.Pointer[Store]]*ballots{}
)

// ballots are one store's votes.
type ballots struct {
	byID  map[string]*ballot // approval id → its votes
	calls int                // Approve calls since the last sweep
}

// ballot is the votes of one approval.
type ballot struct {
	need  int
	votes []approval.Vote
}

// sweepEvery is how many Approve calls pass between sweeps of the ballots
// whose records are gone (pruned).
const sweepEvery = 1024

// ballotsOf returns s's table, creating it on first use.
func (s *Store) ballotsOf() *ballots {
	k := weak.Make(s)
	tablesMu.Lock()
	defer tablesMu.Unlock()
	b, ok := tables[k]
	if !ok {
		b = &ballots{byID: map[string]*ballot{}}
		tables[k] = b
		runtime.AddCleanup(s, func(k weak.Pointer[Store]) {
			tablesMu.Lock()
			delete(tables, k)
			tablesMu.Unlock()
		}, k)
	}
	return b
}

// progress copies b's votes; b may be nil. s.mu must be held.
func (b *ballot) progress() approval.Progress {
	if b == nil {
		return approval.Progress{Votes: []approval.Vote{}}
	}
	return approval.Progress{Votes: slices.Clone(b.votes), Need: b.need}
}

// Approve counts v towards the approval id and, at the Nth distinct
// vote, moves it to Approved as Decide would; all under the store's lock.
// See approval.Quorum.
func (s *Store) Approve(ctx context.Context, id string, v approval.Vote) (approval.ApproveResult, error) {
	if err := approval.CheckVote(id, v); err != nil {
		return approval.ApproveResult{}, err
	}
	need, self := v.Need, v.SelfApproval
	v.Need, v.SelfApproval = 0, false // not part of the recorded vote
	tb := s.ballotsOf()
	if err := s.lock(); err != nil {
		return approval.ApproveResult{}, err
	}
	defer s.mu.Unlock()
	if tb.calls++; tb.calls >= sweepEvery {
		tb.calls = 0
		for bid := range tb.byID {
			if _, ok := s.approvals[bid]; !ok {
				delete(tb.byID, bid)
			}
		}
	}
	a, err := s.get(id)
	if err != nil {
		return approval.ApproveResult{}, fmt.Errorf("approve approval %s: %w", id, err)
	}
	b := tb.byID[id]
	res := approval.ApproveResult{Approval: a}
	switch {
	case a.State != approval.Pending:
		res.Refused = approval.RefusedDecided
	case a.Requester.ID == v.By.ID && !self:
		res.Refused = approval.RefusedRequester
	case b != nil && slices.ContainsFunc(b.votes, func(o approval.Vote) bool { return o.By.ID == v.By.ID }):
		res.Refused = approval.RefusedRepeat
	}
	if res.Refused != approval.RefusedNone {
		res.Progress = b.progress()
		return res, nil
	}
	to := approval.DecidedState(a, approval.Approved, v.At)
	if to == approval.Pending || to == approval.Approved {
		// In time: the vote counts.
		if b == nil {
			b = &ballot{need: need}
			tb.byID[id] = b
		}
		b.votes = append(b.votes, v)
		res.Counted = true
		to = approval.Pending
		if len(b.votes) >= b.need {
			to = approval.Approved
		}
	}
	res.Progress = b.progress()
	if to == approval.Pending {
		return res, nil
	}
	by := v.By
	a.State, a.DecidedBy, a.DecidedAt, a.Reason = to, &by, v.At, v.Reason
	out, err := s.put(a)
	if err != nil {
		return approval.ApproveResult{}, err
	}
	s.alive(id, v.At)
	res.Approval, res.Won = out, true
	return res, nil
}

// Progress returns the votes counted for id so far.
func (s *Store) Progress(ctx context.Context, id string) (approval.Progress, error) {
	tb := s.ballotsOf()
	if err := s.lock(); err != nil {
		return approval.Progress{}, err
	}
	defer s.mu.Unlock()
	if _, ok := s.approvals[id]; !ok {
		return approval.Progress{}, fmt.Errorf("progress of approval %s: %w", id, approval.ErrNotFound)
	}
	return tb.byID[id].progress(), nil
}

// ResetVotes forgets the votes of a pending approval, keeping its Need.
func (s *Store) ResetVotes(ctx context.Context, id string) (int, error) {
	tb := s.ballotsOf()
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	e, ok := s.approvals[id]
	if !ok {
		return 0, fmt.Errorf("reset votes of approval %s: %w", id, approval.ErrNotFound)
	}
	if e.state != approval.Pending {
		return 0, fmt.Errorf("reset votes of approval %s (%s): %w", id, e.state, approval.ErrConflict)
	}
	b := tb.byID[id]
	if b == nil {
		return 0, nil
	}
	n := len(b.votes)
	b.votes = nil
	return n, nil
}
