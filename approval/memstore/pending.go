package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/countersign/countersign/approval"
)

// pendingIndex keeps the pending approvals of each channel in order, kept
// by put in the same locked step as the state, so that ListPending and
// CountPending read what they answer and no more: the count is a length,
// the list the front of a slice.
type pendingIndex struct {
	byChannel map[string][]pendingRef // "platform:channel" → oldest first
	byID      map[string][]string     // "platform:channel" → ids, sorted
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
	ids := x.byID[k]
	j, _ := slices.BinarySearch(ids, id)
	x.byID[k] = slices.Insert(ids, j, id)
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
	ids := x.byID[k]
	if j, ok := slices.BinarySearch(ids, id); ok {
		ids = slices.Delete(ids, j, j+1)
	}
	if len(refs) == 0 {
		delete(x.byChannel, k) // a channel's order lives while it has one
		delete(x.byID, k)
	} else {
		x.byChannel[k] = refs
		x.byID[k] = ids
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

// FindPending lists the pending approvals of a channel whose id starts
// with prefix, in id order, at most limit: a binary search in the
// channel's sorted ids, then a walk of the matches.
func (s *Store) FindPending(ctx context.Context, platform, channel, prefix string, limit int) ([]*approval.Approval, error) {
	if prefix == "" {
		return nil, fmt.Errorf("find pending approvals: %w: no id prefix", approval.ErrInvalid)
	}
	if limit <= 0 {
		limit = approval.DefaultLimit
	}
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	ids := s.pending.byID[channelKey(platform, channel)]
	i, _ := slices.BinarySearch(ids, prefix)
	var out []*approval.Approval
	for ; i < len(ids) && len(out) < limit && strings.HasPrefix(ids[i], prefix); i++ {
		a, err := s.get(ids[i])
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// PendingChannels lists, sorted, the channels of platform with a pending
// approval: the keys of the channel index, which lives while a channel
// has one.
func (s *Store) PendingChannels(ctx context.Context, platform string) ([]string, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var out []string
	for k := range s.pending.byChannel {
		if ch, ok := strings.CutPrefix(k, platform+":"); ok {
			out = append(out, ch)
		}
	}
	slices.Sort(out)
	return out, nil
}
