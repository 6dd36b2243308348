package adapters

import (
	"crypto/rand"
	"encoding/base32"
	"strconv"
	"strings"
	"sync/atomic"
)

// EventIDs makes event ids for a platform that has none of its own (the
// terminal) or whose own are not unique across processes: a random prefix
// drawn once, then a counter, "k3vq7m2xh4-1", "k3vq7m2xh4-2", …. Two
// processes, or one process before and after a restart, never share ids,
// so the store's dedupe never takes a new line for a repeat of an old one.
type EventIDs struct {
	prefix string
	n      atomic.Uint64
}

// NewEventIDs draws a fresh prefix.
func NewEventIDs() *EventIDs {
	var b [10]byte
	_, _ = rand.Read(b[:])
	return &EventIDs{prefix: strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))}
}

// Next returns the next id.
func (g *EventIDs) Next() string {
	return g.prefix + "-" + strconv.FormatUint(g.n.Add(1), 10)
}
