package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countersign/countersign/approval"
)

var _ approval.Inbox = (*Store)(nil)

// The inbox lives in four keys that share one hash slot ({inbox}), so
// that a script may touch them all on a Redis Cluster too:
//
//	<prefix>:{inbox}:e  hash: entry id → the entry, JSON
//	<prefix>:{inbox}:o  hash: entry id → its owner
//	<prefix>:{inbox}:t  sorted set: entry id, scored by when it was accepted (ms)
//	<prefix>:{inbox}:b  sorted set: owner, scored by its last beat (ms)
func (s *Store) inboxKeys() []string {
	p := s.prefix + ":{inbox}:"
	return []string{p + "e", p + "o", p + "t", p + "b"}
}

// ownerForget is how long an owner silent for good is remembered; its
// entries are taken long before.
const ownerForget = 24 * time.Hour

// takeOverScript: KEYS the inbox keys. ARGV: taker, cutoff ms, at ms,
// limit, forget-before ms. Returns id, entry, id, entry, … of the entries
// it gave the taker, oldest first.
var takeOverScript = redis.NewScript(`
local taker, cutoff, at, limit = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local out, alive, n = {}, {}, 0
for _, id in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
  if n >= limit then break end
  local owner = redis.call('HGET', KEYS[2], id)
  if owner ~= taker then
    local live = false
    if owner then
      live = alive[owner]
      if live == nil then
        local beat = redis.call('ZSCORE', KEYS[4], owner)
        live = beat ~= false and tonumber(beat) > cutoff
        alive[owner] = live
      end
    end
    if not live then
      local e = redis.call('HGET', KEYS[1], id)
      if e then
        redis.call('HSET', KEYS[2], id, taker)
        out[#out+1] = id
        out[#out+1] = e
        n = n + 1
      else
        redis.call('HDEL', KEYS[2], id)
        redis.call('ZREM', KEYS[3], id)
      end
    end
  end
end
redis.call('ZADD', KEYS[4], at, taker)
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', '(' .. ARGV[5])
return out
`)

// Accept records entries under owner in one transaction.
func (s *Store) Accept(ctx context.Context, owner string, at time.Time, entries ...approval.InboxEntry) error {
	if err := approval.CheckInbox(owner, entries); err != nil {
		return err
	}
	k := s.inboxKeys()
	_, err := s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, e := range entries {
			data, err := json.Marshal(e)
			if err != nil {
				return fmt.Errorf("encode inbox entry %s: %w", e.ID, err)
			}
			p.HSet(ctx, k[0], e.ID, data)
			p.HSet(ctx, k[1], e.ID, owner)
			p.ZAdd(ctx, k[2], redis.Z{Score: float64(e.AcceptedAt.UnixMilli()), Member: e.ID})
		}
		p.ZAdd(ctx, k[3], redis.Z{Score: float64(at.UnixMilli()), Member: owner})
		return nil
	})
	if err != nil {
		return fmt.Errorf("inbox: accept %d entries: %w", len(entries), err)
	}
	return nil
}

// Answered removes the entries ids.
func (s *Store) Answered(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	k := s.inboxKeys()
	members := make([]any, len(ids))
	for i, id := range ids {
		members[i] = id
	}
	_, err := s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HDel(ctx, k[0], ids...)
		p.HDel(ctx, k[1], ids...)
		p.ZRem(ctx, k[2], members...)
		return nil
	})
	if err != nil {
		return fmt.Errorf("inbox: answer %d entries: %w", len(ids), err)
	}
	return nil
}

// Beat marks owner alive at at.
func (s *Store) Beat(ctx context.Context, owner string, at time.Time) error {
	if err := approval.CheckInbox(owner, nil); err != nil {
		return err
	}
	if err := s.c.ZAdd(ctx, s.inboxKeys()[3], redis.Z{Score: float64(at.UnixMilli()), Member: owner}).Err(); err != nil {
		return fmt.Errorf("inbox: beat %s: %w", owner, err)
	}
	return nil
}

// Leave forgets owner.
func (s *Store) Leave(ctx context.Context, owner string) error {
	if err := s.c.ZRem(ctx, s.inboxKeys()[3], owner).Err(); err != nil {
		return fmt.Errorf("inbox: leave %s: %w", owner, err)
	}
	return nil
}

// TakeOver gives taker the entries of owners silent since cutoff, in one
// script: Redis runs the scripts of all replicas one at a time.
func (s *Store) TakeOver(ctx context.Context, taker string, cutoff, at time.Time, limit int) ([]approval.InboxEntry, error) {
	if err := approval.CheckInbox(taker, nil); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = approval.DefaultLimit
	}
	v, err := takeOverScript.Run(ctx, s.c, s.inboxKeys(), taker, cutoff.UnixMilli(), at.UnixMilli(), limit,
		at.Add(-ownerForget).UnixMilli()).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("inbox: take over for %s: %w", taker, err)
	}
	out := make([]approval.InboxEntry, 0, len(v)/2)
	for i := 0; i+1 < len(v); i += 2 {
		var e approval.InboxEntry
		if err := json.Unmarshal([]byte(v[i+1]), &e); err != nil {
			return out, fmt.Errorf("inbox: decode entry %s: %w", v[i], err)
		}
		out = append(out, e)
	}
	return out, nil
}
