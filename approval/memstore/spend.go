package memstore

import (
	"context"
	"time"

	"github.com/countersign/countersign/approval"
)

// spendTotals are the tokens spent by key (approval.Spender), each with
// when it is forgotten. Adds prune the totals past their expiry, so the
// map holds no more than the keys of the days and conversations still
// current (every pruneEvery adds).
type spendTotals struct {
	m    map[string]approval.Spent
	adds int // since the last prune
}

// AddSpend adds tokens to key's total (approval.Spender).
func (s *Store) AddSpend(ctx context.Context, key string, tokens int64, expiry time.Time) (int64, error) {
	if err := approval.CheckSpend(key, tokens, expiry); err != nil {
		return 0, err
	}
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	now := s.now()
	t := &s.spend
	if t.m == nil {
		t.m = map[string]approval.Spent{}
	}
	if t.adds++; t.adds >= pruneEvery {
		t.adds = 0
		for k, v := range t.m {
			if !v.Until.After(now) {
				delete(t.m, k)
			}
		}
	}
	cur := t.m[key]
	if !cur.Until.After(now) {
		cur = approval.Spent{}
	}
	cur.Tokens += tokens
	cur.Until = expiry
	t.m[key] = cur
	return cur.Tokens, nil
}

// Spend returns the totals of keys (approval.Spender).
func (s *Store) Spend(ctx context.Context, keys ...string) ([]approval.Spent, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	now := s.now()
	out := make([]approval.Spent, len(keys))
	for i, k := range keys {
		if v := s.spend.m[k]; v.Until.After(now) {
			out[i] = v
		}
	}
	return out, nil
}
