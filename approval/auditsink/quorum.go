package auditsink

import (
	"context"
	"errors"

	"github.com/countersign/countersign/approval"
)

// The count of approvals (approval.Quorum), which the bot needs, passes
// through the wrapper to the wrapped store.

var _ approval.Quorum = (*Store)(nil)

var errNoQuorum = errors.New("the approval store cannot count approvals (approval.Quorum)")

// Approve counts a vote in the wrapped store.
func (s *Store) Approve(ctx context.Context, id string, v approval.Vote) (approval.ApproveResult, error) {
	q, ok := s.Store.(approval.Quorum)
	if !ok {
		return approval.ApproveResult{}, errNoQuorum
	}
	return q.Approve(ctx, id, v)
}

// Progress reads the count from the wrapped store.
func (s *Store) Progress(ctx context.Context, id string) (approval.Progress, error) {
	q, ok := s.Store.(approval.Quorum)
	if !ok {
		return approval.Progress{}, errNoQuorum
	}
	return q.Progress(ctx, id)
}

// ResetVotes forgets the votes in the wrapped store.
func (s *Store) ResetVotes(ctx context.Context, id string) (int, error) {
	q, ok := s.Store.(approval.Quorum)
	if !ok {
		return 0, errNoQuorum
	}
	return q.ResetVotes(ctx, id)
}
