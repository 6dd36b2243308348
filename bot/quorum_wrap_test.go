package bot_test

import (
	"context"

	"github.com/countersign/countersign/approval"
)

// The test stores that wrap a real one to make one method fail keep its
// count of approvals (approval.Quorum), which the bot needs to start.

type quorum struct{ q approval.Quorum }

func (w quorum) Approve(ctx context.Context, id string, v approval.Vote) (approval.ApproveResult, error) {
	return w.q.Approve(ctx, id, v)
}

func (w quorum) Progress(ctx context.Context, id string) (approval.Progress, error) {
	return w.q.Progress(ctx, id)
}

func (w quorum) ResetVotes(ctx context.Context, id string) (int, error) {
	return w.q.ResetVotes(ctx, id)
}

func (c claimFails) Approve(ctx context.Context, id string, v approval.Vote) (approval.ApproveResult, error) {
	return quorum{c.Store.(approval.Quorum)}.Approve(ctx, id, v)
}

func (c claimFails) Progress(ctx context.Context, id string) (approval.Progress, error) {
	return quorum{c.Store.(approval.Quorum)}.Progress(ctx, id)
}

func (c claimFails) ResetVotes(ctx context.Context, id string) (int, error) {
	return quorum{c.Store.(approval.Quorum)}.ResetVotes(ctx, id)
}

func (d deliveryFails) Approve(ctx context.Context, id string, v approval.Vote) (approval.ApproveResult, error) {
	return quorum{d.Store.(approval.Quorum)}.Approve(ctx, id, v)
}

func (d deliveryFails) Progress(ctx context.Context, id string) (approval.Progress, error) {
	return quorum{d.Store.(approval.Quorum)}.Progress(ctx, id)
}

func (d deliveryFails) ResetVotes(ctx context.Context, id string) (int, error) {
	return quorum{d.Store.(approval.Quorum)}.ResetVotes(ctx, id)
}

// stalling's count stalls with the rest of the store.

func (s *stalling) wait(ctx context.Context) error {
	if s.stalled.Load() {
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

func (s *stalling) Approve(ctx context.Context, id string, v approval.Vote) (approval.ApproveResult, error) {
	if err := s.wait(ctx); err != nil {
		return approval.ApproveResult{}, err
	}
	return s.Store.(approval.Quorum).Approve(ctx, id, v)
}

func (s *stalling) Progress(ctx context.Context, id string) (approval.Progress, error) {
	if err := s.wait(ctx); err != nil {
		return approval.Progress{}, err
	}
	return s.Store.(approval.Quorum).Progress(ctx, id)
}

func (s *stalling) ResetVotes(ctx context.Context, id string) (int, error) {
	if err := s.wait(ctx); err != nil {
		return 0, err
	}
	return s.Store.(approval.Quorum).ResetVotes(ctx, id)
}
