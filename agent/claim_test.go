package agent_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/redisstore"
	"github.com/countersign/countersign/internal/testenv"
	"github.com/countersign/countersign/tools"
)

const waitLimit = 15 * time.Second

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	testenv.Eventually(t, waitLimit, ok, what)
}

// TestHeartbeatStartsAtClaim: the "running" card takes long to draw (a
// platform rate-limiting); meanwhile the lease's time passes. The run beats
// from its claim on, so a sweep on another replica does not end it as
// interrupted, and it runs once, to its recorded end.
func TestHeartbeatStartsAtClaim(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			defer agent.SetHeartbeatEvery(20 * time.Millisecond)()
			e := newEnv(t, b,
				agenttest.Calls(agenttest.Call("c1", "run_job", `{"job":"reindex"}`)),
				agenttest.Text("Reindexed."),
			)
			store := e.open()
			other := e.agent(e.open())
			var once sync.Once
			e.sink.OnUpdate = func(a *approval.Approval, p *tools.Progress) {
				if a.State != approval.Running || p != nil {
					return
				}
				once.Do(func() {
					// The card update is slow: longer than the lease.
					e.clock.Advance(3 * time.Minute)
					now := e.clock.Now()
					waitUntil(t, "a heartbeat after the lease's time passed", func() bool {
						recs, err := store.Unsettled(context.Background(), now.Add(-2*time.Minute), now.Add(-2*time.Minute), 0)
						return err == nil && len(recs) == 0
					})
					if err := other.Sweep(context.Background()); err != nil {
						t.Errorf("Sweep: %v", err)
					}
				})
			}
			if err := e.agent(store).Handle(ctx, conv, alice, "reindex"); err != nil {
				t.Fatalf("Handle: %v", err)
			}
			id := e.sink.Cards()[0].ID
			if _, err := approve(ctx, e.agent(store), id, bob); err != nil {
				t.Fatalf("decision: %v", err)
			}
			got, err := store.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != approval.Done || got.Result == nil || got.Result.Stdout != "job done" {
				t.Errorf("the approval ended %s with %+v; want done with the job's own result", got.State, got.Result)
			}
		})
	}
}

// TestClaimCheckedBeforeTheRun: between the claim and the start of the
// process another replica ended the call (it took the run for dead); the
// run checks its claim immediately before starting and does not start.
func TestClaimCheckedBeforeTheRun(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			e := newEnv(t, b,
				agenttest.Calls(agenttest.Call("c1", "run_job", `{"job":"reindex"}`)),
				agenttest.Text("Not reindexed."),
			)
			store := e.open()
			var once sync.Once
			e.sink.OnUpdate = func(a *approval.Approval, p *tools.Progress) {
				if a.State != approval.Running || p != nil {
					return
				}
				once.Do(func() {
					res := tools.Failed(errors.New("interrupted"))
					now := e.clock.Now()
					if _, err := store.FinishAbandoned(context.Background(), a.ID, approval.Failed, res, now, now.Add(time.Hour)); err != nil {
						t.Errorf("FinishAbandoned: %v", err)
					}
				})
			}
			if err := e.agent(store).Handle(ctx, conv, alice, "reindex"); err != nil {
				t.Fatalf("Handle: %v", err)
			}
			if _, err := approve(ctx, e.agent(store), e.sink.Cards()[0].ID, bob); err != nil {
				t.Fatalf("decision: %v", err)
			}
			e.job.mu.Lock()
			n := len(e.job.runs)
			e.job.mu.Unlock()
			if n != 0 {
				t.Errorf("the job ran %d times after another replica ended its call", n)
			}
		})
	}
}

// cutProxy forwards TCP to Redis until cut: then every connection is
// closed and new ones are refused, as when Redis goes away.
type cutProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  []net.Conn
	// refused counts the connections refused while cut: each a try of
	// the client's.
	refused int
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target}
	t.Cleanup(func() { _ = ln.Close(); p.setCut(true) })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			if p.cut {
				p.refused++
				p.mu.Unlock()
				_ = c.Close()
				continue
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				p.mu.Unlock()
				_ = c.Close()
				continue
			}
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(s, c); _ = s.Close() }()
			go func() { _, _ = io.Copy(c, s); _ = c.Close() }()
		}
	}()
	return p
}

func (p *cutProxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.conns = nil
	}
}

// TestOutcomeRecordedWhenRedisReturns: Redis goes away while an approved
// call runs; the call ends; its outcome is not recorded, nor made up, until
// Redis is back, and then its own process records its own result, and the
// model learns it.
func TestOutcomeRecordedWhenRedisReturns(t *testing.T) {
	e, proxy, direct, id, decided := approvedJobBehindACut(t)
	proxy.setCut(true) // Redis goes away while the job runs
	close(e.job.release)
	// The job has ended; its outcome cannot be recorded: the record stays
	// running, and no card shows an outcome nobody recorded.
	waitUntil(t, "a failed try to record the outcome", func() bool { return len(e.sink.States(id)) > 0 })
	refused := func() int {
		proxy.mu.Lock()
		defer proxy.mu.Unlock()
		return proxy.refused
	}
	tried := refused()
	waitUntil(t, "three more tries to reach Redis, all refused", func() bool { return refused() >= tried+3 })
	got, err := direct.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != approval.Running {
		t.Fatalf("with Redis away the record is %s, want still running", got.State)
	}
	for _, s := range e.sink.States(id) {
		if s.Final() {
			t.Fatalf("the card showed %s before the outcome was recorded", s)
		}
	}
	proxy.setCut(false) // Redis is back
	select {
	case err := <-decided:
		if err != nil {
			t.Fatalf("decision: %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("the outcome was not recorded after Redis came back")
	}
	got, err = direct.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != approval.Done || got.Result == nil || got.Result.Stdout != "job done" {
		t.Errorf("the record is %s with %+v, want done with the job's own result", got.State, got.Result)
	}
	if r := resumedResult(t, e); r.Status != tools.StatusOK || r.Stdout != "job done" {
		t.Errorf("the model was told %+v, want the job's own ok result", r)
	}
}

// TestRunsWaitTheirTurn: with one approved run allowed at once, a second
// approved call waits (claimed) until the first ends, then runs.
func TestRunsWaitTheirTurn(t *testing.T) {
	e := newEnv(t, memoryBackend,
		agenttest.Calls(agenttest.Call("c1", "run_job", `{"job":"one"}`), agenttest.Call("c2", "run_job", `{"job":"two"}`)),
		agenttest.Text("Both done."),
	)
	e.cfg.MaxRuns = 1
	e.job.release = make(chan struct{})
	e.job.started = make(chan struct{}, 2)
	a := e.agent(e.open())
	if err := a.Handle(ctx, conv, alice, "run both"); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	cards := e.sink.Cards()
	errs := make(chan error, 2)
	for _, c := range cards {
		go func() {
			_, err := approve(ctx, a, c.ID, bob)
			errs <- err
		}()
	}
	<-e.job.started
	waitUntil(t, "both calls claimed", func() bool { return len(a.Running()) == 2 })
	// The second waits at the gate of runs: it cannot start before the
	// first ends.
	waitUntil(t, "the second call waiting for a place to run", func() bool { return agent.RunsWaiting(a) == 1 })
	e.job.mu.Lock()
	n := len(e.job.runs)
	e.job.mu.Unlock()
	if n != 1 {
		t.Errorf("%d runs at once, want 1", n)
	}
	close(e.job.release)
	for range cards {
		if err := <-errs; err != nil {
			t.Fatalf("decision: %v", err)
		}
	}
	e.job.mu.Lock()
	n = len(e.job.runs)
	e.job.mu.Unlock()
	if n != 2 {
		t.Errorf("%d runs in all, want 2", n)
	}
}

// TestAbandonKillsAndRecords: a forced quit while an approved command
// runs: its process is killed and its record says it was stopped.
func TestAbandonKillsAndRecords(t *testing.T) {
	e := newEnv(t, redisBackend,
		agenttest.Calls(agenttest.Call("c1", "execute_command", `{"command":"sleep 39.5; rm -f a.txt"}`)),
		agenttest.Text("Stopped."),
	)
	store := e.open()
	a := e.agent(store)
	if err := a.Handle(ctx, conv, alice, "wait, then remove"); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	id := e.sink.Cards()[0].ID
	decided := make(chan struct{})
	go func() {
		defer close(decided)
		_, _ = approve(ctx, a, id, bob)
	}()
	waitUntil(t, "the command running", func() bool { return len(a.Running()) == 1 })
	waitUntil(t, "its process", func() bool { return testenv.Running("sleep 39.5") })
	if n := a.Abandon(5 * time.Second); n != 1 {
		t.Errorf("Abandon stopped %d calls, want 1", n)
	}
	got, err := store.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != approval.Failed || got.Result == nil || !strings.Contains(got.Result.Message, "forced quit") {
		t.Errorf("after Abandon the record is %s with %+v; want failed, stopped by a forced quit", got.State, got.Result)
	}
	if testenv.Running("sleep 39.5") {
		t.Error("the command still runs after Abandon returned")
	}
	<-decided
}

// TestOwnOutcomeWinsOverASweep: Redis is cut off from the process running
// an approved call; its heartbeats fail, and another replica, which still
// reaches Redis, sweeps after the run's lease and records the call as
// interrupted. The run then ends and Redis comes back: the run's own
// outcome replaces the sweep's guess in the record and on the card (the
// turn was already told of the interruption by the sweep).
func TestOwnOutcomeWinsOverASweep(t *testing.T) {
	e, proxy, direct, id, decided := approvedJobBehindACut(t)
	proxy.setCut(true) // the runner's Redis goes away while the job runs

	// Past the lease, another replica takes the silent run for dead.
	e.clock.Advance(agent.DefaultRunLease + time.Minute)
	if err := e.agent(direct).Sweep(ctx); err != nil {
		t.Fatalf("Sweep: %v", err)
	}
	got, err := direct.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != approval.Failed || got.Result == nil || !strings.Contains(got.Result.Error, "interrupted") {
		t.Fatalf("after the sweep the record is %s with %+v, want failed as interrupted", got.State, got.Result)
	}

	close(e.job.release) // the job ends, after the sweep's guess
	proxy.setCut(false)  // Redis is back
	select {
	case err := <-decided:
		if err != nil {
			t.Fatalf("approve: %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("the outcome was not recorded after Redis came back")
	}
	got, err = direct.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != approval.Done || got.Result == nil || got.Result.Stdout != "job done" {
		t.Errorf("the record is %s with %+v, want done with the job's own result", got.State, got.Result)
	}
	states := e.sink.States(id)
	if last := states[len(states)-1]; last != approval.Done {
		t.Errorf("the card last showed %s (all: %v), want done", last, states)
	}
}

// approvedJobBehindACut is the scene of the tests of a run whose Redis goes
// away: an agent whose store reaches Redis through a proxy the test can
// cut (proxy), a second store on the same keys that always reaches it
// (direct), and an approved job (id) that has started and waits for
// e.job.release; decided gets the approval's error once it returns.
func approvedJobBehindACut(t *testing.T) (e *env, proxy *cutProxy, direct *redisstore.Store, id string, decided chan error) {
	t.Helper()
	t.Cleanup(agent.SetFinishRetry(20 * time.Millisecond))
	opt, err := redis.ParseURL(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	e = newEnv(t, memoryBackend,
		agenttest.Calls(agenttest.Call("c1", "run_job", `{"job":"reindex"}`)),
		agenttest.Text("Reindexed."),
	)
	prefix := "agenttest-" + randomHex()
	proxy = newCutProxy(t, opt.Addr)
	viaProxy := *opt
	viaProxy.Addr = proxy.ln.Addr().String()
	viaProxy.MaxRetries = -1
	store := redisstore.New(redis.NewClient(&viaProxy), redisstore.Options{Prefix: prefix, Now: e.clock.Now, Logger: quiet})
	direct = redisstore.New(redis.NewClient(opt), redisstore.Options{Prefix: prefix, Now: e.clock.Now, Logger: quiet})
	t.Cleanup(func() { _ = store.Close(); _ = direct.Close() })
	e.job.release = make(chan struct{})
	e.job.started = make(chan struct{}, 1)

	a := e.agent(store)
	if err := a.Handle(ctx, conv, alice, "reindex"); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	id = e.sink.Cards()[0].ID
	decided = make(chan error, 1)
	go func() {
		_, err := approve(ctx, a, id, bob)
		decided <- err
	}()
	<-e.job.started
	return e, proxy, direct, id, decided
}
