package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countersign/countersign/approval"
)

// spendKey is the string of one total of tokens spent (approval.Spender),
// an integer with a TTL. Each command touches one key, so the keys need
// no common hash tag: on a Cluster, a braced part of key only chooses the
// slot.
func (s *Store) spendKey(key string) string { return s.prefix + ":spend:" + key }

// AddSpend adds tokens to key's total (approval.Spender): INCRBY and
// PEXPIRE in one MULTI/EXEC, one round trip on one slot. The TTL is
// expiry less the store's clock, like every TTL here, so the total lives
// as long by the Redis server's clock as the caller meant by its own.
func (s *Store) AddSpend(ctx context.Context, key string, tokens int64, expiry time.Time) (int64, error) {
	if err := approval.CheckSpend(key, tokens, expiry); err != nil {
		return 0, err
	}
	k := s.spendKey(key)
	ttl := max(expiry.Sub(s.now()), time.Millisecond)
	var total *redis.IntCmd
	_, err := s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		total = p.IncrBy(ctx, k, tokens)
		p.PExpire(ctx, k, ttl)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("add %d tokens to the spend of %s: %w", tokens, key, err)
	}
	return total.Val(), nil
}

// Spend returns the totals of keys (approval.Spender): a GET and a PTTL
// per key in one pipeline (split by node on a Cluster).
func (s *Store) Spend(ctx context.Context, keys ...string) ([]approval.Spent, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	gets := make([]*redis.StringCmd, len(keys))
	ttls := make([]*redis.DurationCmd, len(keys))
	_, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, key := range keys {
			gets[i] = p.Get(ctx, s.spendKey(key))
			ttls[i] = p.PTTL(ctx, s.spendKey(key))
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("read the spend of %s: %w", keys[0], err)
	}
	now := s.now()
	out := make([]approval.Spent, len(keys))
	for i, key := range keys {
		n, err := gets[i].Int64()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read the spend of %s: %w", key, err)
		}
		out[i].Tokens = n
		if ttl := ttls[i].Val(); ttl > 0 {
			out[i].Until = now.Add(ttl)
		}
	}
	return out, nil
}
