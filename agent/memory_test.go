package agent_test

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/approval/redisstore"
	"github.com/countersign/countersign/internal/testenv"
)

// TestRedisMemoryPerApproval measures what one pending approval costs in
// Redis when made the way a chat message makes it: the agent assesses a
// model's tool call, audits the assessment, creates the approval, saves
// the suspended turn, posts the card (audit, message ref), and the bot
// records the chat event for dedupe. It counts every key the approvals
// own under a fresh prefix: MEMORY USAGE per key kind (summed, divided by
// the number of approvals) and, for a second opinion, the growth of INFO
// memory used_memory. Target: under 4 KiB.
func TestRedisMemoryPerApproval(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 1,000 approvals")
	}
	const n = 1000
	url := testenv.RedisURL(t)
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	raw := redis.NewClient(opt)
	t.Cleanup(func() { _ = raw.Close() })
	ctx := context.Background()
	p := "agentmem-" + randomHex()

	script := make([]agenttest.Reply, n)
	for i := range script {
		// An OpenAI-style call id and a command that needs an approval.
		id := "call_" + randomHex() + randomHex()
		script[i] = agenttest.Calls(agenttest.Call(id, "execute_command", fmt.Sprintf(`{"command":"rm -rf ./build/tmp_%04d"}`, i)))
	}
	e := newEnv(t, redisBackend, script...)
	s := redisstore.New(redis.NewClient(opt), redisstore.Options{Prefix: p, Now: e.clock.Now, Logger: quiet})
	t.Cleanup(func() { _ = s.Close() })
	a := e.agent(s)

	before := usedMemory(t, raw)
	for i := range n {
		c := conv
		c.Thread = fmt.Sprintf("1732440000.%06d", i) // a Slack thread ts
		if _, err := s.FirstDelivery(ctx, "slack:Ev0"+strings.ToUpper(randomHex()), 10*time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := a.Handle(ctx, c, alice, "clean the build's temporary folders"); err != nil {
			t.Fatalf("Handle %d: %v", i, err)
		}
	}
	after := usedMemory(t, raw)
	if got, err := s.CountPending(ctx, "", ""); err != nil || got != n {
		t.Fatalf("CountPending = %d, %v; want %d pending approvals", got, err, n)
	}

	kinds := map[string]int64{}
	var total int64
	iter := raw.Scan(ctx, 0, p+":*", 1000).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		size, err := raw.MemoryUsage(ctx, k, 0).Result() // SAMPLES 0: every element
		if err != nil {
			t.Fatalf("MEMORY USAGE %s: %v", k, err)
		}
		kinds[keyKind(strings.TrimPrefix(k, p+":"))] += size
		total += size
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		t.Logf("  %-14s %5d bytes per approval", k, kinds[k]/n)
	}
	per := total / n
	t.Logf("memory per pending approval: %d bytes by MEMORY USAGE of its keys; used_memory grew %d bytes per approval", per, (after-before)/n)
	if per >= 4096 {
		t.Errorf("a pending approval costs %d bytes of Redis, target under 4096", per)
	}
	if len(e.sink.Cards()) != n {
		t.Errorf("%d cards posted, want %d", len(e.sink.Cards()), n)
	}
}

// keyKind names a key by its role in redisstore's layout.
func keyKind(k string) string {
	switch {
	case strings.HasPrefix(k, "{t:") && strings.HasSuffix(k, "}:t"):
		return "turn"
	case strings.HasPrefix(k, "{t:") && strings.HasSuffix(k, "}:p"):
		return "turn pending"
	case strings.HasPrefix(k, "{") && strings.HasSuffix(k, "}:a"):
		return "record"
	}
	kind, _, _ := strings.Cut(k, ":")
	return kind
}

func usedMemory(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	info, err := c.Info(context.Background(), "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("INFO memory has no used_memory")
	return 0
}
