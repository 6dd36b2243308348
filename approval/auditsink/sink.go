// Package auditsink owns where audit records (SPEC §6) are kept beyond the
// approval store's own stream: the Sink contract, a JSON-lines file rotated
// by size (File), a MySQL/MariaDB table written in acknowledged batches
// (MySQL), the store's stream seen as a sink (Stream), and Wrap, the store
// decorator that writes every event to each configured sink and fails closed
// when a required one cannot write. It also reads the sinks back, filtered,
// for `countersign audit tail` and `audit export`.
package auditsink

import (
	"context"
	"errors"
	"time"

	"github.com/countersign/countersign/approval"
)

// Reader reads audit events back.
type Reader interface {
	// Read returns the events f matches, oldest first.
	Read(ctx context.Context, f Filter) ([]approval.Event, error)
}

// Follower is a Reader that can also wait for new events: Follow calls fn
// with the events f matches (its Last most recent ones first), then with
// every new matching event as it is written, until ctx ends or fn fails.
// It returns nil when ctx ends.
type Follower interface {
	Reader
	Follow(ctx context.Context, f Filter, fn func(approval.Event) error) error
}

// Sink keeps audit events. Write returns only once the event is stored
// (flushed to the file, committed to the table): a nil error is the
// acknowledgement that lets the operation it describes run. Every method
// is safe for concurrent use.
type Sink interface {
	Write(ctx context.Context, e approval.Event) error
	Reader
	// Close releases what the sink holds; later Writes fail with
	// ErrClosed. Closing twice is not an error.
	Close() error
}

// ErrClosed is returned by a Write after Close.
var ErrClosed = errors.New("audit sink is closed")

// Filter selects events. The zero Filter matches every event.
type Filter struct {
	Since      time.Time // at or after, when set
	Channel    string    // Event.Channel, exactly
	Actor      string    // Event.Actor (the user id), exactly
	ApprovalID string    // Event.ApprovalID, exactly
	// Last keeps only the Last most recent matching events; 0 keeps all.
	Last int
}

// Match reports whether e passes every condition of f (Last aside).
func (f Filter) Match(e approval.Event) bool {
	return (f.Since.IsZero() || !e.At.Before(f.Since)) &&
		(f.Channel == "" || e.Channel == f.Channel) &&
		(f.Actor == "" || e.Actor == f.Actor) &&
		(f.ApprovalID == "" || e.ApprovalID == f.ApprovalID)
}

// keepLast trims events to the last n when n > 0.
func keepLast(events []approval.Event, n int) []approval.Event {
	if n > 0 && len(events) > n {
		return events[len(events)-n:]
	}
	return events
}
