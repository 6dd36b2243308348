package mcptool

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A call checks that its tool is still what was pinned, without a
// tools/list per call: the server's list is kept, with each tool's hash,
// from the last listing, and listed again only when it may have changed:
// a new session (a start or a restart), or the server's
// notifications/tools/list_changed. The pin in the store is read once per
// listing and tool, not per call.

// listing is a server's tools as last listed.
type listing struct {
	// changes counts the events after which the list must be read again.
	// Bumped without a lock: the notification's handler runs on the
	// session's reading goroutine, which a listing waits for.
	changes atomic.Uint64

	mu     sync.Mutex
	gen    uint64            // changes when hashes were listed
	hashes map[string]string // tool name → Hash; nil: never listed
}

// reset says the list may have changed.
func (l *listing) reset() { l.changes.Add(1) }

// seed keeps the tools a listing returned; gen is changes as read before
// that listing began.
func (l *listing) seed(gen uint64, ts []*mcp.Tool) {
	h := make(map[string]string, len(ts))
	for _, t := range ts {
		h[t.Name], _ = Hash(t) // "" for a tool that cannot be hashed: it is refused
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gen, l.hashes = gen, h
}

// current returns the hashes of the server's tools and the generation of
// that list, listing them through sess when they may have changed.
func (l *listing) current(ctx context.Context, sess *mcp.ClientSession) (map[string]string, uint64, error) {
	gen := l.changes.Load()
	l.mu.Lock()
	if l.hashes != nil && l.gen == gen {
		h := l.hashes
		l.mu.Unlock()
		return h, gen, nil
	}
	l.mu.Unlock()
	ts, err := listTools(ctx, sess)
	if err != nil {
		return nil, 0, err
	}
	l.seed(gen, ts)
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.hashes, gen, nil
}
