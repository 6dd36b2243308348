package redisstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countersign/countersign/approval"
)

// shards is how many hash tags the approval records are spread over. Each
// shard holds its records and one pending index, so that a script keeps
// the index exact in the same atomic step as the record's state, and a
// count reads the shards' indexes, not every record. It must never
// change: a record's key depends on it.
const shards = 64

// shardTag is the hash tag of record id's shard, "<prefix>:{s<n>}".
func (s *Store) shardTag(id string) string {
	return s.prefix + ":{s" + strconv.Itoa(int(crc32.ChecksumIEEE([]byte(id))%shards)) + "}"
}

// keys are the keys of record id: the record and its shard's pending
// index, id index and channel counts, the KEYS of every approval script.
func (s *Store) keys(id string) []string {
	tag := s.shardTag(id)
	return []string{tag + ":a:" + id, tag + ":pending", tag + ":ids", tag + ":chans"}
}

// shardKeys are one kind of key (":ids", ":chans") of every shard.
func (s *Store) shardKeys(kind string) []string {
	out := make([]string, shards)
	for i := range out {
		out[i] = s.prefix + ":{s" + strconv.Itoa(i) + "}" + kind
	}
	return out
}

// channelField is a channel's field in the shards' channel counts.
func channelField(platform, channel string) string { return platform + ":" + channel }

// idMember is an approval's member in its shard's id index: its channel
// prefix, then its id, so that the pending ids of one channel starting
// with a prefix are one lexical range.
func idMember(platform, channel, id string) string { return channelPrefix(platform, channel) + id }

// pendingIndexes are the pending indexes of every shard.
func (s *Store) pendingIndexes() []string { return s.shardKeys(":pending") }

// legacyKey is where versions before the shards kept record id; such a
// record is still read and moved on (its scripts skip the index), until
// its retention ends.
func (s *Store) legacyKey(id string) string { return s.prefix + ":{" + id + "}:a" }

// legacyPendingKey is the channel index of those versions, sorted by
// creation; it is only read and emptied now.
func (s *Store) legacyPendingKey(platform, channel string) string {
	return s.prefix + ":pending:" + platform + ":" + channel
}

// channelPrefix starts the pending index members of one channel: the
// length of "<platform>:<channel>" in 4 hex digits, then that text, so
// that no channel's prefix starts another's.
func channelPrefix(platform, channel string) string {
	ch := platform + ":" + channel
	return fmt.Sprintf("%04x", len(ch)&0xffff) + ch
}

// pendingMember is the pending index member of an approval: its channel
// prefix, its creation (unix ms, 16 digits) and its id. Every member has
// score 0, so the index sorts by member: by channel, then oldest first,
// then by id, and one channel's entries are one lexical range.
func pendingMember(platform, channel string, created time.Time, id string) string {
	return channelPrefix(platform, channel) + fmt.Sprintf("%016d", max(created.UnixMilli(), 0)) + id
}

// memberID is the approval id of a pending index member.
func memberID(prefix, member string) string {
	return strings.TrimPrefix(member, prefix)[16:]
}

// eval runs an approval script on record id, and on the key of an earlier
// version when the record is not in its shard (the script returned false,
// redis.Nil in Go).
func (s *Store) eval(ctx context.Context, sc *redis.Script, id string, args ...any) (any, error) {
	v, err := sc.Run(ctx, s.c, s.keys(id), args...).Result()
	if errors.Is(err, redis.Nil) {
		return sc.Run(ctx, s.c, []string{s.legacyKey(id)}, args...).Result()
	}
	return v, err
}

// hgetAll reads the fields of records in one pipeline, and those not in
// their shard in a second one at the keys of an earlier version. A missing
// record is an empty map.
func (s *Store) hgetAll(ctx context.Context, ids []string) ([]map[string]string, error) {
	out := make([]map[string]string, len(ids))
	read := func(idx []int, key func(string) string) error {
		cmds := make([]*redis.MapStringStringCmd, len(idx))
		if _, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for j, i := range idx {
				cmds[j] = p.HGetAll(ctx, key(ids[i]))
			}
			return nil
		}); err != nil {
			return err
		}
		for j, i := range idx {
			out[i] = cmds[j].Val()
		}
		return nil
	}
	all := make([]int, len(ids))
	for i := range all {
		all[i] = i
	}
	if err := read(all, func(id string) string { return s.keys(id)[0] }); err != nil {
		return nil, err
	}
	var missing []int
	for i, m := range out {
		if len(m) == 0 {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		if err := read(missing, s.legacyKey); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// lexRange is the ZRANGEBYLEX range of one channel's members after after
// ("" from the start).
func lexRange(prefix, after string) (from, to string) {
	from = "[" + prefix
	if after != "" {
		from = "(" + after
	}
	return from, "(" + prefix + "\xff"
}

// oldestPending returns the index members of the oldest limit pending
// approvals of a channel, merged from every shard's index: each round reads the next
// entries of the shards that may still hold one of the oldest, until the
// oldest limit are known (every shard still unread holds only later ones).
func (s *Store) oldestPending(ctx context.Context, prefix string, limit int) ([]string, error) {
	type cursor struct {
		key  string
		last string // the last member read; "" before the first read
		done bool   // read to the channel's end
	}
	cursors := make([]*cursor, shards)
	for i, k := range s.pendingIndexes() {
		cursors[i] = &cursor{key: k}
	}
	var got []string // members read, of every shard
	batch := int64(limit/shards + 4)
	for {
		// Which shards to read: those not done whose last member is before
		// the limit-th member known (any, while fewer are known).
		slices.Sort(got)
		var read []*cursor
		for _, c := range cursors {
			if !c.done && (len(got) < limit || c.last < got[limit-1]) {
				read = append(read, c)
			}
		}
		if len(read) == 0 {
			break
		}
		cmds := make([]*redis.StringSliceCmd, len(read))
		if _, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, c := range read {
				from, to := lexRange(prefix, c.last)
				cmds[i] = p.ZRangeByLex(ctx, c.key, &redis.ZRangeBy{Min: from, Max: to, Count: batch})
			}
			return nil
		}); err != nil {
			return nil, err
		}
		for i, c := range read {
			ms := cmds[i].Val()
			got = append(got, ms...)
			if int64(len(ms)) < batch {
				c.done = true
			}
			if len(ms) > 0 {
				c.last = ms[len(ms)-1]
			}
		}
		batch *= 2
	}
	return got[:min(limit, len(got))], nil
}

// ListPending lists the pending approvals of a channel, oldest first, at
// most limit (<= 0, or above Options.ListLimit: Options.ListLimit): the oldest entries of the channel in the shards'
// pending indexes, which the scripts keep exact, and those an earlier
// version indexed. An entry whose record ran out of time while nobody
// swept it is dropped on the way.
func (s *Store) ListPending(ctx context.Context, platform, channel string, limit int) ([]*approval.Approval, error) {
	if limit <= 0 || limit > int(s.listLimit) {
		limit = int(s.listLimit)
	}
	prefix := channelPrefix(platform, channel)
	members, err := s.oldestPending(ctx, prefix, limit)
	if err != nil {
		return nil, fmt.Errorf("list pending approvals of %s:%s: %w", platform, channel, err)
	}
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = memberID(prefix, m)
	}
	recs, err := s.getMany(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("list pending approvals of %s:%s: %w", platform, channel, err)
	}
	out := make([]*approval.Approval, 0, len(ids))
	for i, r := range recs {
		if r.a == nil || r.a.State != approval.Pending {
			// Its record ran out of time unswept (a decided record has no
			// entry): drop the entry unless the record holds it after all.
			// Best effort: the next reader drops it too.
			s.heal(ctx, platform, channel, ids[i], members[i])
			continue
		}
		out = append(out, r.a)
	}
	old, err := s.legacyPending(ctx, platform, channel)
	if err != nil {
		return nil, err
	}
	if len(old) > 0 {
		out = append(out, old...)
		slices.SortFunc(out, func(a, b *approval.Approval) int {
			return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
		})
		out = out[:min(len(out), limit)]
	}
	return out, nil
}

// heal drops the index entries of approval id, pending member member in
// channel, whose record is gone or no longer pending; best effort: the
// next reader drops them too.
func (s *Store) heal(ctx context.Context, platform, channel, id, member string) {
	_ = healScript.Run(ctx, s.c, s.keys(id), member, idMember(platform, channel, id), channelField(platform, channel)).Err()
}

// FindPending lists the pending approvals of a channel whose id starts
// with prefix, in id order, at most limit: one ZRANGEBYLEX per shard's id
// index, in one pipeline, then the records found, however many are
// pending. Records written before the id index existed are not in it.
func (s *Store) FindPending(ctx context.Context, platform, channel, prefix string, limit int) ([]*approval.Approval, error) {
	if prefix == "" {
		return nil, fmt.Errorf("find pending approvals: %w: no id prefix", approval.ErrInvalid)
	}
	if limit <= 0 {
		limit = approval.DefaultLimit
	}
	from := channelPrefix(platform, channel) + prefix
	cmds := make([]*redis.StringSliceCmd, shards)
	if _, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range s.shardKeys(":ids") {
			cmds[i] = p.ZRangeByLex(ctx, k, &redis.ZRangeBy{Min: "[" + from, Max: "(" + from + "\xff", Count: int64(limit)})
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("find pending approvals of %s:%s by %q: %w", platform, channel, prefix, err)
	}
	var ids []string
	for _, c := range cmds {
		for _, m := range c.Val() {
			ids = append(ids, m[len(from)-len(prefix):])
		}
	}
	slices.Sort(ids)
	recs, err := s.getMany(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("find pending approvals of %s:%s by %q: %w", platform, channel, prefix, err)
	}
	var out []*approval.Approval
	for i, r := range recs {
		if r.a == nil || r.a.State != approval.Pending {
			// Gone unswept: its pending entry says when it was made.
			if r.a != nil {
				s.heal(ctx, platform, channel, ids[i], pendingMember(platform, channel, r.a.CreatedAt, ids[i]))
			} else {
				_ = healScript.Run(ctx, s.c, s.keys(ids[i]), "", idMember(platform, channel, ids[i]), channelField(platform, channel)).Err()
			}
			continue
		}
		if len(out) < limit {
			out = append(out, r.a)
		}
	}
	return out, nil
}

// PendingChannels lists, sorted, the channels of platform with a pending
// approval: the fields of the shards' channel counts, which the scripts
// keep in the same step as each record's state, read in one pipeline.
func (s *Store) PendingChannels(ctx context.Context, platform string) ([]string, error) {
	cmds := make([]*redis.StringSliceCmd, shards)
	if _, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range s.shardKeys(":chans") {
			cmds[i] = p.HKeys(ctx, k)
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("list the channels of %s with pending approvals: %w", platform, err)
	}
	seen := map[string]bool{}
	var out []string
	for _, c := range cmds {
		for _, f := range c.Val() {
			if ch, ok := strings.CutPrefix(f, platform+":"); ok && !seen[ch] {
				seen[ch] = true
				out = append(out, ch)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// legacyPending lists the pending approvals an earlier version indexed in
// the channel's own index, dropping the entries that are no longer
// pending. The index empties as those approvals are decided or expire.
func (s *Store) legacyPending(ctx context.Context, platform, channel string) ([]*approval.Approval, error) {
	pk := s.legacyPendingKey(platform, channel)
	ids, err := s.c.ZRange(ctx, pk, 0, s.listLimit-1).Result()
	if err != nil {
		return nil, fmt.Errorf("list pending approvals of %s:%s: %w", platform, channel, err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	recs, err := s.getMany(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("list pending approvals of %s:%s: %w", platform, channel, err)
	}
	var out []*approval.Approval
	var stale []any
	for i, r := range recs {
		a := r.a
		if a == nil || a.State != approval.Pending || a.Conversation.Platform != platform || a.Conversation.Channel != channel {
			stale = append(stale, ids[i])
			continue
		}
		out = append(out, a)
	}
	if len(stale) > 0 {
		s.c.ZRem(ctx, pk, stale...) // best effort: the next reader drops them too
	}
	return out, nil
}

// CountPending counts the pending approvals of a channel, or of every
// channel when platform and channel are both "", from the shards' pending
// indexes: one ZLEXCOUNT (or ZCARD) per shard in one pipeline, whatever
// the number pending. The scripts keep the indexes exact; an entry whose
// record ran out of time unswept counts until a ListPending of its channel
// drops it. Approvals an earlier version indexed count too, read from that
// version's channel index.
func (s *Store) CountPending(ctx context.Context, platform, channel string) (int, error) {
	if err := approval.CheckCount(platform, channel); err != nil {
		return 0, err
	}
	prefix := channelPrefix(platform, channel)
	cmds := make([]*redis.IntCmd, shards)
	if _, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range s.pendingIndexes() {
			if platform == "" {
				cmds[i] = p.ZCard(ctx, k)
				continue
			}
			from, to := lexRange(prefix, "")
			cmds[i] = p.ZLexCount(ctx, k, from, to)
		}
		return nil
	}); err != nil {
		return 0, fmt.Errorf("count pending approvals of %s:%s: %w", platform, channel, err)
	}
	n := 0
	for _, c := range cmds {
		n += int(c.Val())
	}
	if platform != "" {
		old, err := s.legacyPending(ctx, platform, channel)
		if err != nil {
			return 0, err
		}
		n += len(old)
	}
	return n, nil
}
