package approval

import (
	"context"
	"fmt"
	"time"
)

// Inbox is the journal of the chat events a process has accepted
// (acknowledged to its platform) and not yet answered.
// A platform never sends an acknowledged event again, so an event that is
// only in a dead process's memory would be lost in silence; in the inbox it
// outlives the process, and another replica, or the same one started again,
// finds it and either carries it out or tells its sender.
//
// Each entry has an owner: the process that accepted it. An owner is
// alive while it beats (Beat) more recently than the cutoff a taker gives;
// TakeOver moves the entries of owners silent since the cutoff to the
// taker, atomically, so that exactly one taker gets each entry.
//
// It is part of Store: every store keeps the journal, and no wrapper of a
// store can lose it.
type Inbox interface {
	// Accept records entries, owned by owner, and marks owner alive at at.
	// An entry whose id is already recorded is replaced (the owner wrote
	// it again).
	Accept(ctx context.Context, owner string, at time.Time, entries ...InboxEntry) error
	// Answered removes the entries ids: their events have been answered.
	// Removing a missing one is not an error.
	Answered(ctx context.Context, ids ...string) error
	// Beat marks owner alive at at.
	Beat(ctx context.Context, owner string, at time.Time) error
	// Leave forgets owner, which has answered everything it accepted (a
	// clean exit); entries it still holds stay, and its silence makes them
	// anyone's to take at once.
	Leave(ctx context.Context, owner string) error
	// TakeOver gives taker, atomically, at most limit (<= 0 means
	// DefaultLimit) entries whose owner last beat at or before cutoff, or
	// has left, oldest first, and marks taker alive at at. Of any number of
	// concurrent takers, exactly one gets each entry.
	TakeOver(ctx context.Context, taker string, cutoff, at time.Time, limit int) ([]InboxEntry, error)
}

// InboxEntry is one accepted event: an id unique among the events of all
// platforms ("slack:Ev0123") and the accepting process's own encoding of
// the event.
type InboxEntry struct {
	ID         string    `json:"id"`
	Data       []byte    `json:"data"`
	AcceptedAt time.Time `json:"accepted_at"`
}

// CheckInbox checks the arguments shared by the Inbox methods; every store
// calls it.
func CheckInbox(owner string, entries []InboxEntry) error {
	if owner == "" {
		return fmt.Errorf("inbox: %w: no owner", ErrInvalid)
	}
	for _, e := range entries {
		if e.ID == "" {
			return fmt.Errorf("inbox: %w: an entry has no id", ErrInvalid)
		}
	}
	return nil
}
