package agent_test

import (
	"context"
	"encoding/json"
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

// TestRecoveryAfterACrash: a process dies somewhere between recording a
// decision and telling the turn. A new process's Sweep (two replicas at
// once) ends the call exactly once without running it, and resumes the
// turn exactly once; the model is told what happened.
func TestRecoveryAfterACrash(t *testing.T) {
	tests := []struct {
		name string
		// crash drives the stored approval to where the dead process left it.
		crash      func(t *testing.T, s approval.Store, id string, at time.Time)
		wait       time.Duration
		wantStatus tools.Status
		wantExec   bool
		wantText   string
	}{
		{
			name: "approved, never claimed",
			crash: func(t *testing.T, s approval.Store, id string, at time.Time) {
				if d, err := s.Decide(ctx, id, approval.Approved, bob, "", at); err != nil || !d.Won {
					t.Fatalf("decision = %+v, %v", d, err)
				}
			},
			wait:       3 * time.Minute,
			wantStatus: tools.StatusError,
			wantText:   "Interrupted before it ran",
		},
		{
			name: "running, no heartbeat",
			crash: func(t *testing.T, s approval.Store, id string, at time.Time) {
				if d, err := s.Decide(ctx, id, approval.Approved, bob, "", at); err != nil || !d.Won {
					t.Fatalf("decision = %+v, %v", d, err)
				}
				if _, ok, err := s.Claim(ctx, id, at); err != nil || !ok {
					t.Fatalf("Claim = %v, %v", ok, err)
				}
			},
			wait:       3 * time.Minute,
			wantStatus: tools.StatusError,
			wantExec:   true,
			wantText:   "the outcome is unknown",
		},
		{
			name: "cancelled, turn never told",
			crash: func(t *testing.T, s approval.Store, id string, at time.Time) {
				if d, err := s.Decide(ctx, id, approval.Cancelled, bob, "not now", at); err != nil || !d.Won {
					t.Fatalf("decision = %+v, %v", d, err)
				}
			},
			wait:       3 * time.Minute,
			wantStatus: tools.StatusCancelled,
			wantText:   "cancelled by Bob",
		},
	}
	for _, b := range backends {
		for _, tc := range tests {
			t.Run(b.name+"/"+tc.name, func(t *testing.T) {
				e := newEnv(t, b,
					agenttest.Calls(agenttest.Call("c1", "execute_command", `{"command":"echo one >> log.txt"}`)),
					agenttest.Text("Noted."),
				)
				before := e.open()
				if err := e.agent(before).Handle(ctx, conv, alice, "append a line"); err != nil {
					t.Fatalf("Handle: %v", err)
				}
				cards := e.sink.Cards()
				if len(cards) != 1 {
					t.Fatalf("%d cards, want 1", len(cards))
				}
				tc.crash(t, before, cards[0].ID, e.clock.Now())

				// Before the grace period nothing is touched: a live
				// carrier may still be at work.
				if err := e.agent(e.open()).Sweep(ctx); err != nil {
					t.Fatalf("Sweep: %v", err)
				}
				if n := len(e.srv.Requests()); n != 1 {
					t.Fatalf("%d model requests before the grace period, want 1", n)
				}

				e.clock.Advance(tc.wait)
				var wg sync.WaitGroup
				for range 2 { // two replicas sweep at once
					a := e.agent(e.open())
					wg.Go(func() {
						if err := a.Sweep(ctx); err != nil {
							t.Errorf("Sweep: %v", err)
						}
					})
				}
				wg.Wait()
				if err := e.agent(e.open()).Sweep(ctx); err != nil {
					t.Fatalf("Sweep again: %v", err)
				}

				r := resumedResult(t, e)
				if r.Status != tc.wantStatus || r.Executed != tc.wantExec {
					t.Errorf("result = %s executed %v, want %s executed %v", r.Status, r.Executed, tc.wantStatus, tc.wantExec)
				}
				if text := r.Error + " " + r.Message; !strings.Contains(text, tc.wantText) {
					t.Errorf("result says %q, want it to say %q", text, tc.wantText)
				}
				if !r.Executed && !strings.Contains(r.Message, tools.DidNotRun) {
					t.Errorf("result message %q does not say it did not run", r.Message)
				}
				if _, ok := e.file("log.txt"); ok {
					t.Error("recovery ran the command")
				}
				if r := e.sink.Replies(); len(r) != 1 || r[0] != "Noted." {
					t.Errorf("replies = %q, want the model's one answer", r)
				}
				left, err := e.open().Unsettled(ctx, e.clock.Now().Add(time.Hour), e.clock.Now().Add(time.Hour), 0)
				if err != nil || len(left) != 0 {
					t.Errorf("Unsettled after recovery = %d records, %v; want none", len(left), err)
				}
			})
		}
	}
}

// TestLiveRunIsNotRecovered: a run that beats its heartbeat is left alone
// by a sweep however long it takes.
func TestLiveRunIsNotRecovered(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			e := newEnv(t, b)
			s := e.open()
			a := e.agent(s)
			if err := a.Direct(ctx, conv, alice, "run_job", []byte(`{"job":"reindex"}`)); err != nil {
				t.Fatalf("Direct: %v", err)
			}
			cards := e.sink.Cards()
			if len(cards) != 1 {
				t.Fatalf("%d cards, want 1", len(cards))
			}
			id := cards[0].ID
			if _, err := s.Decide(ctx, id, approval.Approved, bob, "", e.clock.Now()); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Claim(ctx, id, e.clock.Now()); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				e.clock.Advance(time.Minute)
				if err := s.Heartbeat(ctx, id, e.clock.Now()); err != nil {
					t.Fatal(err)
				}
				if err := e.agent(e.open()).Sweep(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if got, err := s.Get(ctx, id); err != nil || got.State != approval.Running {
				t.Fatalf("state = %v, %v; want still running", got, err)
			}
		})
	}
}

// TestResumeWaitsForATurnInTheSameThread: a card approved while a new
// message of the same thread is with the model resumes after that turn, so
// neither save overwrites the other.
func TestResumeWaitsForATurnInTheSameThread(t *testing.T) {
	e := newEnv(t, memoryBackend,
		agenttest.Calls(agenttest.Call("c1", "run_job", `{"job":"reindex"}`)),
		agenttest.Reply{Content: "second answer", Delay: 300 * time.Millisecond},
		agenttest.Text("first answer"),
	)
	s := e.open()
	a := e.agent(s)
	if err := a.Handle(ctx, conv, alice, "reindex"); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	cards := e.sink.Cards()
	if len(cards) != 1 {
		t.Fatalf("%d cards, want 1", len(cards))
	}
	second := make(chan error, 1)
	go func() { second <- a.Handle(ctx, conv, alice, "and how are the disks?") }()
	waitUntil(t, "the second message at the model", func() bool { return len(e.srv.Requests()) >= 2 })
	if _, err := approve(ctx, a, cards[0].ID, bob); err != nil {
		t.Fatalf("decision: %v", err)
	}
	if err := <-second; err != nil {
		t.Fatalf("second Handle: %v", err)
	}
	a.Wait()
	stored, err := s.LoadConversation(ctx, conv.Key())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"and how are the disks?", "second answer", "job done", "first answer"} {
		if !strings.Contains(string(stored), want) {
			t.Errorf("the stored conversation lost %q:\n%s", want, stored)
		}
	}
}

// ctxStore fails Finish once its context is done, as a network store does.
type ctxStore struct{ approval.Store }

func (c ctxStore) Finish(ctx context.Context, id string, to approval.State, result tools.Result, at time.Time) (*approval.Approval, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.Store.Finish(ctx, id, to, result, at)
}

// TestRecoveryRecordsItsOutcomeDuringShutdown: a sweep cancelled (by a
// shutdown) after claiming a stranded call still records it as not run,
// rather than leaving it running, which a later sweep would report as a
// run with an unknown outcome.
func TestRecoveryRecordsItsOutcomeDuringShutdown(t *testing.T) {
	e := newEnv(t, memoryBackend,
		agenttest.Calls(agenttest.Call("c1", "execute_command", `{"command":"echo one >> log.txt"}`)),
		agenttest.Text("Noted."),
	)
	s := ctxStore{e.open()}
	if err := e.agent(s).Handle(ctx, conv, alice, "append a line"); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	id := e.sink.Cards()[0].ID
	if _, err := s.Decide(ctx, id, approval.Approved, bob, "", e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(3 * time.Minute)
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	_ = e.agent(s).Sweep(stopped)
	got, err := s.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != approval.Failed || got.Result == nil || got.Result.Executed {
		t.Errorf("after a cancelled sweep the approval is %s with %+v; want failed, not run", got.State, got.Result)
	}
}

// TestTamperedRecordDoesNotRun: an approval whose stored operation was
// changed after the card was shown, or whose record no longer decodes,
// never runs.
func TestTamperedRecordDoesNotRun(t *testing.T) {
	tests := []struct {
		name   string
		tamper func(r map[string]any) string // returns the new "r" field
	}{
		{"operation swapped", func(r map[string]any) string {
			r["args"] = map[string]any{"command": "echo two >> log.txt"}
			b, _ := json.Marshal(r)
			return string(b)
		}},
		{"record is not JSON", func(map[string]any) string { return "{not json" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, memoryBackend,
				agenttest.Calls(agenttest.Call("c1", "execute_command", `{"command":"echo one >> log.txt"}`)),
				agenttest.Text("Noted."),
			)
			opt, err := redis.ParseURL(testenv.RedisURL(t))
			if err != nil {
				t.Fatal(err)
			}
			prefix := "tamper-" + randomHex()
			raw := redis.NewClient(opt)
			t.Cleanup(func() { _ = raw.Close() })
			s := redisstore.New(redis.NewClient(opt), redisstore.Options{Prefix: prefix, Now: e.clock.Now, Logger: quiet})
			t.Cleanup(func() { _ = s.Close() })
			a := e.agent(s)
			if err := a.Handle(ctx, conv, alice, "append a line"); err != nil {
				t.Fatalf("Handle: %v", err)
			}
			id := e.sink.Cards()[0].ID
			keys := raw.Keys(ctx, prefix+":*:a:"+id).Val() // wherever the store shards it
			if len(keys) != 1 {
				t.Fatalf("the stored record of %s: keys %v, want one", id, keys)
			}
			key := keys[0]
			var r map[string]any
			if err := json.Unmarshal([]byte(raw.HGet(ctx, key, "r").Val()), &r); err != nil {
				t.Fatalf("read the stored record: %v", err)
			}
			if err := raw.HSet(ctx, key, "r", tc.tamper(r)).Err(); err != nil {
				t.Fatal(err)
			}
			_, _ = approve(ctx, a, id, bob)
			a.Wait()
			if got, ok := e.file("log.txt"); ok {
				t.Errorf("a tampered approval ran: log.txt = %q", got)
			}
		})
	}
}

// TestLongRunBeatsItsHeartbeat: a run that lasts longer than the lease
// keeps telling the store it is alive, so a sweep leaves it alone and its
// own outcome is recorded.
func TestLongRunBeatsItsHeartbeat(t *testing.T) {
	defer agent.SetHeartbeatEvery(5 * time.Millisecond)()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			e := newEnv(t, b)
			e.job.release = make(chan struct{})
			e.job.started = make(chan struct{}, 1)
			s := e.open()
			a := e.agent(s)
			if err := a.Direct(ctx, conv, alice, "run_job", []byte(`{"job":"reindex"}`)); err != nil {
				t.Fatalf("Direct: %v", err)
			}
			id := e.sink.Cards()[0].ID
			decided := make(chan error, 1)
			go func() { _, err := approve(ctx, a, id, bob); decided <- err }()
			<-e.job.started
			e.clock.Advance(3 * time.Minute) // past the lease, counted from the claim
			now := e.clock.Now()
			waitUntil(t, "a heartbeat after the lease's time passed", func() bool {
				recs, err := s.Unsettled(context.Background(), now.Add(-2*time.Minute), now.Add(-2*time.Minute), 0)
				return err == nil && len(recs) == 0
			})
			if err := e.agent(e.open()).Sweep(ctx); err != nil {
				t.Fatalf("Sweep: %v", err)
			}
			close(e.job.release)
			if err := <-decided; err != nil {
				t.Fatalf("decision: %v", err)
			}
			got, err := s.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != approval.Done {
				t.Errorf("the long run ended %s (%+v), want done: a sweep took it for interrupted", got.State, got.Result)
			}
		})
	}
}
