package approval

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
	"time"
)

// Deduper remembers chat event ids across replicas. A platform redelivers
// an event when unsure it arrived, and the redelivery can reach another
// replica than the first delivery did; the bot asks the shared store so
// that only one of them acts on it. It is part of Store: a wrapper of a
// store cannot lose it.
type Deduper interface {
	// FirstDelivery records eventID for ttl and reports whether this call
	// is the first to record it since it was last forgotten: of any number
	// of concurrent callers, on any replica, exactly one gets true. The
	// caller puts the platform in eventID ("slack:Ev0123"); the store
	// treats it as opaque. An error means nothing is known: the caller
	// decides whether to act.
	FirstDelivery(ctx context.Context, eventID string, ttl time.Duration) (first bool, err error)
}

// maxEventKey is the longest event id a store keeps as it is; longer ones
// are replaced by their hash (EventKey).
const maxEventKey = 128

// EventKey is what a store keeps of a chat event id: the id itself when it
// is short, or "#" and the SHA-256 of the id (base64url) when it is long or
// starts with "#", so that a key is at most maxEventKey bytes and a kept
// id never equals a hash. Ids come from the platforms and are opaque.
func EventKey(eventID string) string {
	if len(eventID) <= maxEventKey && !strings.HasPrefix(eventID, "#") {
		return eventID
	}
	sum := sha256.Sum256([]byte(eventID))
	return "#" + base64.RawURLEncoding.EncodeToString(sum[:])
}

// CheckDelivery checks the arguments of FirstDelivery; both stores call it.
func CheckDelivery(eventID string, ttl time.Duration) error {
	if eventID == "" {
		return fmt.Errorf("record event: %w: no event id", ErrInvalid)
	}
	if ttl <= 0 {
		return fmt.Errorf("record event %s: %w: ttl must be positive", EventKey(eventID), ErrInvalid)
	}
	return nil
}
