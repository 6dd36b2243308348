package bot

import (
	"context"
	"time"

	"github.com/countersign/countersign/approval"
)

// stateStore is what the bot itself asks of the shared store: to read a
// card's approval, list the pending ones, keep a card's reference, audit
// what it refuses, read a card's count, and tell a platform's redelivery
// across replicas. The
// agent takes the whole approval.Store; every approval.Store is one.
type stateStore interface {
	Get(ctx context.Context, id string) (*approval.Approval, error)
	ListPending(ctx context.Context, platform, channel string, limit int) ([]*approval.Approval, error)
	CountPending(ctx context.Context, platform, channel string) (int, error)
	FindPending(ctx context.Context, platform, channel, prefix string, limit int) ([]*approval.Approval, error)
	PendingChannels(ctx context.Context, platform string) ([]string, error)
	Due(ctx context.Context, now time.Time, limit int) ([]string, error)
	SetMessageRef(ctx context.Context, id, ref string) error
	Audit(ctx context.Context, e approval.Event) error
	Progress(ctx context.Context, id string) (approval.Progress, error)
	approval.Deduper
}

var _ stateStore = approval.Store(nil)
