package memstore

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/countersign/countersign/approval"
)

var _ approval.Inbox = (*Store)(nil)

// inboxEntry is an accepted event and the process that owns it.
type inboxEntry struct {
	e     approval.InboxEntry
	owner string
}

// Accept records entries under owner.
func (s *Store) Accept(ctx context.Context, owner string, at time.Time, entries ...approval.InboxEntry) error {
	if err := approval.CheckInbox(owner, entries); err != nil {
		return err
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	s.inboxInit()
	for _, e := range entries {
		e.Data = slices.Clone(e.Data)
		s.inbox[e.ID] = inboxEntry{e: e, owner: owner}
	}
	s.owners[owner] = at
	return nil
}

func (s *Store) inboxInit() {
	if s.inbox == nil {
		s.inbox = map[string]inboxEntry{}
		s.owners = map[string]time.Time{}
	}
}

// Answered removes the entries ids.
func (s *Store) Answered(ctx context.Context, ids ...string) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	for _, id := range ids {
		delete(s.inbox, id)
	}
	return nil
}

// Beat marks owner alive at at.
func (s *Store) Beat(ctx context.Context, owner string, at time.Time) error {
	if err := approval.CheckInbox(owner, nil); err != nil {
		return err
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	s.inboxInit()
	s.owners[owner] = at
	return nil
}

// Leave forgets owner.
func (s *Store) Leave(ctx context.Context, owner string) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	delete(s.owners, owner)
	return nil
}

// TakeOver gives taker the entries of owners silent since cutoff.
func (s *Store) TakeOver(ctx context.Context, taker string, cutoff, at time.Time, limit int) ([]approval.InboxEntry, error) {
	if err := approval.CheckInbox(taker, nil); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = approval.DefaultLimit
	}
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	s.inboxInit()
	var ids []string
	for id, ie := range s.inbox {
		if ie.owner == taker {
			continue
		}
		if beat, ok := s.owners[ie.owner]; ok && beat.After(cutoff) {
			continue
		}
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		if c := s.inbox[a].e.AcceptedAt.Compare(s.inbox[b].e.AcceptedAt); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	ids = ids[:min(len(ids), limit)]
	out := make([]approval.InboxEntry, 0, len(ids))
	for _, id := range ids {
		ie := s.inbox[id]
		ie.owner = taker
		s.inbox[id] = ie
		e := ie.e
		e.Data = slices.Clone(e.Data)
		out = append(out, e)
	}
	s.owners[taker] = at
	for o, beat := range s.owners {
		if beat.Before(at.Add(-24 * time.Hour)) {
			delete(s.owners, o)
		}
	}
	return out, nil
}
