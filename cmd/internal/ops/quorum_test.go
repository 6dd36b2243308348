package ops

import (
	"context"

	"github.com/countersign/countersign/approval"
)

// nilStore's count of approvals has no store behind it either: reaching
// it panics, as every other method of nilStore does.

func (nilStore) Approve(context.Context, string, approval.Vote) (approval.ApproveResult, error) {
	panic("no store")
}

func (nilStore) Progress(context.Context, string) (approval.Progress, error) { panic("no store") }

func (nilStore) ResetVotes(context.Context, string) (int, error) { panic("no store") }
