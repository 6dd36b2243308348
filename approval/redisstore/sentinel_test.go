package redisstore_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/approvaltest"
	"github.com/countersign/countersign/approval/redisstore"
	"github.com/countersign/countersign/internal/testenv"
)

// TestSentinelFailover kills the master of a Sentinel set (.ci/services
// starts a master, its replica and a sentinel) with cards pending, and
// checks that after the sentinel promotes the replica, two replicas of the
// bot, each with its own go-redis FailoverClient, find every card still
// pending and decide each exactly once, and claim each approved one
// exactly once. It kills the master for good: it runs once per
// .ci/services.
func TestSentinelFailover(t *testing.T) {
	addr, name := testenv.RedisSentinel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sentinel := redis.NewSentinelClient(&redis.Options{Addr: addr})
	defer sentinel.Close()
	hostPort, err := sentinel.GetMasterAddrByName(ctx, name).Result()
	if err != nil {
		t.Fatalf("ask the sentinel for master %s: %v", name, err)
	}
	oldMaster := hostPort[0] + ":" + hostPort[1]
	direct := redis.NewClient(&redis.Options{Addr: oldMaster})
	defer direct.Close()
	if info := direct.Info(ctx, "replication").Val(); !strings.Contains(info, "connected_slaves:1") {
		t.Fatalf("master %s has no replica to promote (INFO replication:\n%s); this test kills the master: run it under a fresh .ci/services", oldMaster, info)
	}

	p := prefix()
	open := func() *redisstore.Store {
		c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: name, SentinelAddrs: []string{addr}})
		s := redisstore.New(c, redisstore.Options{Prefix: p, Logger: quiet()})
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	replicas := []*redisstore.Store{open(), open()}

	const cards = 40
	ids := make([]string, cards)
	for i := range ids {
		a, created, err := replicas[i%2].Create(ctx, approvaltest.Sample(fmt.Sprint("failover-", i)))
		if err != nil || !created {
			t.Fatalf("Create %d = %v, %v", i, created, err)
		}
		ids[i] = a.ID
	}
	// Replication is asynchronous: what the master acknowledged but had not
	// sent on would be lost with it. WAIT until the replica holds it all, as
	// the failover test is about the store and the client, not about that.
	if n, err := direct.Wait(ctx, 1, 10*time.Second).Result(); err != nil || n < 1 {
		t.Fatalf("WAIT for the replica = %d, %v", n, err)
	}

	pid, err := processID(ctx, direct)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 the master (pid %d): %v", pid, err)
	}
	killed := time.Now()

	// The sentinel sees the master down after a second, then promotes the
	// replica; the clients follow the sentinel to it.
	left := func() time.Duration { d, _ := ctx.Deadline(); return time.Until(d) }
	if !testenv.Within(left(), func() bool {
		hostPort, err = sentinel.GetMasterAddrByName(ctx, name).Result()
		return err == nil && hostPort[0]+":"+hostPort[1] != oldMaster
	}) {
		t.Fatalf("the sentinel named no new master within the test's time (last answer %v, %v)", hostPort, err)
	}
	t.Logf("the sentinel promoted %s:%s %s after the kill", hostPort[0], hostPort[1], time.Since(killed).Round(time.Millisecond))
	for i, s := range replicas {
		// Connections to the dead master fail until the client has
		// dropped them; the first answer means it follows the new one.
		var n int
		if !testenv.Within(left(), func() bool { n, err = s.CountPending(ctx, "slack", "C1"); return err == nil }) {
			t.Fatalf("replica %d never reached the new master: %v", i, err)
		}
		if n != cards {
			t.Fatalf("replica %d counts %d pending cards after the failover, want %d", i, n, cards)
		}
	}
	t.Logf("both replicas answered from the new master %s after the kill", time.Since(killed).Round(time.Millisecond))
	if list, err := replicas[0].ListPending(ctx, "slack", "C1", 0); err != nil || len(list) != cards {
		t.Fatalf("ListPending after the failover = %d cards, %v; want %d", len(list), err, cards)
	}

	// Both replicas decide every card at once, one approving, the other
	// cancelling; then both try to claim every approved one.
	at := approvaltest.Sample("x").CreatedAt.Add(time.Minute)
	type outcome struct {
		won  [2]bool
		errs [2]error
	}
	decided := make([]outcome, cards)
	claimed := make([]outcome, cards)
	var wg sync.WaitGroup
	for r, s := range replicas {
		to := []approval.State{approval.Approved, approval.Cancelled}[r]
		wg.Go(func() {
			for i, id := range ids {
				d, err := s.Decide(ctx, id, to, approval.User{ID: fmt.Sprint("U", r)}, "", at)
				decided[i].won[r], decided[i].errs[r] = d.Won, err
			}
		})
	}
	wg.Wait()
	for r, s := range replicas {
		wg.Go(func() {
			for i, id := range ids {
				_, ok, err := s.Claim(ctx, id, at)
				claimed[i].won[r], claimed[i].errs[r] = ok, err
			}
		})
	}
	wg.Wait()
	for i, id := range ids {
		d, c := decided[i], claimed[i]
		if d.errs[0] != nil || d.errs[1] != nil || c.errs[0] != nil || c.errs[1] != nil {
			t.Errorf("card %d: errors after the failover: decide %v, claim %v", i, d.errs, c.errs)
			continue
		}
		if d.won[0] == d.won[1] {
			t.Errorf("card %d: decide wins %v, want exactly one", i, d.won)
		}
		a, err := replicas[i%2].Get(ctx, id)
		if err != nil {
			t.Fatalf("Get card %d: %v", i, err)
		}
		wantClaims := 0
		if a.State == approval.Running {
			wantClaims = 1
		}
		if got := btoi(c.won[0]) + btoi(c.won[1]); got != wantClaims {
			t.Errorf("card %d (%s): %d claims won, want %d", i, a.State, got, wantClaims)
		}
		if winner := a.DecidedBy.ID; (winner == "U0") != d.won[0] {
			t.Errorf("card %d was decided by %s, but the wins were %v", i, winner, d.won)
		}
	}
	if n, err := replicas[1].CountPending(ctx, "slack", "C1"); err != nil || n != 0 {
		t.Errorf("CountPending after every card was decided = %d, %v; want 0", n, err)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// processID reads the pid of the Redis server behind c (INFO server).
func processID(ctx context.Context, c *redis.Client) (int, error) {
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return 0, fmt.Errorf("INFO server: %w", err)
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, fmt.Errorf("INFO server holds no process_id:\n%s", info)
}
