package memstore

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/countersign/countersign/approval"
)

// pendingIndex keeps the pending approvals of each channel in order, kept
// by put in the same locked step as the state, so that ListPending and
// CountPending read what they answer and no more: the count is a length,
// the list the front of a slice.
type pendingIndex struct {
	byChannel map[string][]pendingRef // "platform:channel" → oldest first
	total     int
}

// pendingRef is one pending approval in its channel's order.
type pendingRef struct {
	created time.Time
	id      string
}

func compareRefs(a, b pendingRef) int {
	return cmp.Or(a.created.Compare(b.created), cmp.Compare(a.id, b.id))
}

func channelKey(platform, channel string) string { return platform + ":" + channel }

// add puts id, pending as e says, in its channel's order. Approvals mostly
// come newest last, so the insertion is mostly an append.
func (x *pendingIndex) add(id string, e entry) {
	k := channelKey(e.platform, e.channel)
	refs := x.byChannel[k]
	ref := pendingRef{created: e.created, id: id}
	i, found := slices.BinarySearchFunc(refs, ref, compareRefs)
	if found {
		return
	}
	x.byChannel[k] = slices.Insert(refs, i, ref)
	x.total++
}

// remove takes id, as e last had it, out of its channel's order.
func (x *pendingIndex) remove(id string, e entry) {
	k := channelKey(e.platform, e.channel)
	refs := x.byChannel[k]
	i, found := slices.BinarySearchFunc(refs, pendingRef{created: e.created, id: id}, compareRefs)
	if !found {
		return
	}
	refs = slices.Delete(refs, i, i+1)
	if len(refs) == 0 {
		delete(x.byChannel, k) // a channel's order lives while it has one
	} else {
		x.byChannel[k] = refs
	}
	x.total--
}

// ListPending lists the oldest pending approvals of a channel, at most
// limit (<= 0, or above Options.ListLimit: Options.ListLimit), as the
// Redis store does.
func (s *Store) ListPending(ctx context.Context, platform, channel string, limit int) ([]*approval.Approval, error) {
	if limit <= 0 || limit > s.listLimit {
		limit = s.listLimit
	}
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	refs := s.pending.byChannel[channelKey(platform, channel)]
	out := make([]*approval.Approval, 0, min(limit, len(refs)))
	for _, r := range refs[:min(limit, len(refs))] {
		a, err := s.get(r.id)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// CountPending counts the pending approvals of a channel, or of every
// channel when platform and channel are both "".
func (s *Store) CountPending(ctx context.Context, platform, channel string) (int, error) {
	if err := approval.CheckCount(platform, channel); err != nil {
		return 0, err
	}
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	if platform == "" {
		return s.pending.total, nil
	}
	return len(s.pending.byChannel[channelKey(platform, channel)]), nil
}
