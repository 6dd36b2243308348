package approval

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Spender keeps the model tokens spent, as running totals by key, so that
// a budget (llm.budget) holds across replicas and restarts: every replica
// adds what its model calls used, and reads the totals before the next
// call. It is part of Store: every store keeps the totals, and no wrapper
// of a store can lose them.
//
// A key is opaque to the store; ChannelDayKey and ConversationKey are the
// keys the agent uses.
type Spender interface {
	// AddSpend adds tokens (at least 1) to key's total, atomically, sets
	// the total to be forgotten at expiry (the latest add's expiry wins),
	// and returns the new total. Any number of concurrent callers, on any
	// replica, each see their own add counted exactly once.
	AddSpend(ctx context.Context, key string, tokens int64, expiry time.Time) (total int64, err error)
	// Spend returns the totals of keys, in order: a key never spent, or
	// past its expiry, is Spent{} (no tokens, no expiry).
	Spend(ctx context.Context, keys ...string) ([]Spent, error)
}

// Spent is the total of one key, and when the store forgets it.
type Spent struct {
	Tokens int64
	// Until is when the total is forgotten (zero when there is none). A
	// Redis store reads it as the key's remaining time to live, so it is
	// as exact as the two clocks agree.
	Until time.Time
}

// CheckSpend checks the arguments of AddSpend; both stores call it.
func CheckSpend(key string, tokens int64, expiry time.Time) error {
	switch {
	case key == "":
		return fmt.Errorf("add spend: %w: no key", ErrInvalid)
	case tokens < 1:
		return fmt.Errorf("add spend to %s: %w: %d tokens (at least 1)", key, ErrInvalid, tokens)
	case expiry.IsZero():
		return fmt.Errorf("add spend to %s: %w: no expiry", key, ErrInvalid)
	}
	return nil
}

// The prefixes of the keys the agent spends under.
const (
	spendDay  = "day:"
	spendConv = "conv:"
)

// ChannelDayKey is the key of one channel's spend on the UTC day of at:
// "day:2026-05-01:platform:channel". Days begin at midnight UTC.
func ChannelDayKey(platform, channel string, at time.Time) string {
	return spendDay + at.UTC().Format(time.DateOnly) + ":" + platform + ":" + channel
}

// ConversationKey is the key of one conversation's spend: "conv:" and
// its Key.
func ConversationKey(c Conversation) string { return spendConv + c.Key() }

// SpendChannel returns the "platform:channel" of a key ChannelDayKey made,
// and false for any other key (the metrics count spend per channel from
// the adds that pass by the store).
func SpendChannel(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, spendDay)
	if !ok || len(rest) <= len(time.DateOnly)+1 || rest[len(time.DateOnly)] != ':' {
		return "", false
	}
	return rest[len(time.DateOnly)+1:], true
}
