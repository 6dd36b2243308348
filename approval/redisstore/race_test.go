package redisstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/approvaltest"
	"github.com/countersign/countersign/approval/redisstore"
	"github.com/countersign/countersign/tools"
)

// pauseAfter is a go-redis hook that holds the first command named cmd,
// once Redis has answered it, until resume is closed: the moment between
// two round trips of one store call, where another replica can act.
type pauseAfter struct {
	cmd    string
	once   sync.Once
	paused chan struct{} // closed when the command has been held
	resume chan struct{} // closed by the test to let it go on
}

func newPauseAfter(cmd string) *pauseAfter {
	return &pauseAfter{cmd: cmd, paused: make(chan struct{}), resume: make(chan struct{})}
}

func (h *pauseAfter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *pauseAfter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if cmd.Name() == h.cmd {
			h.once.Do(func() {
				close(h.paused)
				<-h.resume
			})
		}
		return err
	}
}

func (h *pauseAfter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestRecoveryRacesAnotherReplica forces the interleaving behind "outcome
// unknown" for calls that never started: replica B sweeps, and between
// Unsettled's read of the cs:unsettled index and its read of the records,
// replica A brings the call back to life (claims it to recover it itself,
// or its run beats its heartbeat). B reads a running record next to the
// old score. B then does what the agent's recovery does with what it was
// given; it must not end the call as interrupted, and A's own outcome must
// be the one recorded.
func TestRecoveryRacesAnotherReplica(t *testing.T) {
	ctx := context.Background()
	decided := approvaltest.Sample("x").CreatedAt.Add(time.Minute)
	now := decided.Add(3 * time.Minute) // both replicas' clock at the sweep
	cutoff := now.Add(-2 * time.Minute) // claim grace and run lease alike
	notRun := tools.NotRun(tools.StatusError, "recovered by A: it did not run")
	unknown := tools.Failed(errors.New("recovered by B: the outcome is unknown"))
	ranOK := tools.Result{Status: tools.StatusOK, Executed: true, Stdout: "done"}

	tests := []struct {
		name string
		// before drives the call to where the sweep finds it, at decided.
		before func(t *testing.T, a *redisstore.Store, id string)
		// revive is what A does while B is held.
		revive func(t *testing.T, a *redisstore.Store, id string)
		// end is A finishing its own work; its result must stand.
		end  approval.State
		want tools.Result
	}{
		{
			name:   "A claims an approved call to recover it",
			before: func(*testing.T, *redisstore.Store, string) {},
			revive: func(t *testing.T, a *redisstore.Store, id string) {
				if _, ok, err := a.Claim(ctx, id, now); err != nil || !ok {
					t.Errorf("A's Claim = %v, %v", ok, err)
				}
			},
			end:  approval.Failed,
			want: notRun,
		},
		{
			name: "A's run beats its heartbeat",
			before: func(t *testing.T, a *redisstore.Store, id string) {
				if _, ok, err := a.Claim(ctx, id, decided); err != nil || !ok {
					t.Fatalf("A's Claim = %v, %v", ok, err)
				}
			},
			revive: func(t *testing.T, a *redisstore.Store, id string) {
				if err := a.Heartbeat(ctx, id, now); err != nil {
					t.Errorf("A's Heartbeat: %v", err)
				}
			},
			end:  approval.Done,
			want: ranOK,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := prefix()
			a := open(t, p)
			hook := newPauseAfter("zrangebyscore")
			c := newClient(t)
			c.AddHook(hook)
			b := redisstore.New(c, redisstore.Options{Prefix: p, Logger: quiet()})

			rec, _, err := a.Create(ctx, approvaltest.Sample("call-race"))
			if err != nil {
				t.Fatal(err)
			}
			if d, err := a.Decide(ctx, rec.ID, approval.Approved, approval.User{ID: "U2"}, "", decided); err != nil || !d.Won {
				t.Fatalf("Decide = %+v, %v", d, err)
			}
			tc.before(t, a, rec.ID)

			returned, revived := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(revived)
				defer close(hook.resume)
				select {
				case <-hook.paused:
					tc.revive(t, a, rec.ID)
				case <-returned:
					t.Error("B's Unsettled returned without reading the index")
				}
			}()
			listed, err := b.Unsettled(ctx, cutoff, cutoff, 0)
			close(returned)
			<-revived
			if err != nil {
				t.Fatalf("B's Unsettled: %v", err)
			}

			// B recovers what it was given, as the agent's recoverOne does.
			for _, r := range listed {
				switch r.State {
				case approval.Approved:
					if _, ok, err := b.Claim(ctx, r.ID, now); err != nil || ok {
						t.Errorf("B claimed %s (ok %v, err %v): A had claimed it", r.ID, ok, err)
					}
				case approval.Running:
					if _, err := b.FinishAbandoned(ctx, r.ID, approval.Failed, unknown, now, cutoff); !errors.Is(err, approval.ErrConflict) {
						t.Errorf("B's FinishAbandoned = %v; want ErrConflict: the call is alive", err)
					}
				default:
					t.Errorf("B listed %s in state %s", r.ID, r.State)
				}
			}

			fin, err := a.Finish(ctx, rec.ID, tc.end, tc.want, now)
			if err != nil {
				got, _ := a.Get(ctx, rec.ID)
				t.Fatalf("A's Finish: %v; the record says %s: %+v", err, got.State, got.Result)
			}
			if fin.Result == nil || fin.Result.Error != tc.want.Error || fin.Result.Stdout != tc.want.Stdout {
				t.Errorf("the record's result is %+v, want A's %+v", fin.Result, tc.want)
			}
		})
	}
}

// pipeOrder is a go-redis hook that records the commands of each pipeline
// in the order they are sent.
type pipeOrder struct {
	mu    sync.Mutex
	pipes [][]string
}

func (h *pipeOrder) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *pipeOrder) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *pipeOrder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		names := make([]string, len(cmds))
		for i, c := range cmds {
			names[i] = c.Name()
		}
		h.mu.Lock()
		h.pipes = append(h.pipes, names)
		h.mu.Unlock()
		return next(ctx, cmds)
	}
}

// TestMarkBeforeTransition: a click's transitions send the cs:unsettled
// mark ahead of the script in one pipeline (one connection, run in that
// order), so a process that dies right after a transition leaves an entry
// for recovery; and a server that has lost its scripts (restart, flush)
// still gets the mark and the transition.
func TestMarkBeforeTransition(t *testing.T) {
	ctx := context.Background()
	p := prefix()
	hook := &pipeOrder{}
	c := newClient(t)
	c.AddHook(hook)
	s := redisstore.New(c, redisstore.Options{Prefix: p, Logger: quiet()})
	raw := newClient(t)
	rec, _, err := s.Create(ctx, approvaltest.Sample("call-order"))
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	at := rec.CreatedAt.Add(time.Minute)
	hook.pipes = nil
	if d, err := s.Decide(ctx, rec.ID, approval.Approved, approval.User{ID: "U2"}, "", at); err != nil || !d.Won {
		t.Fatalf("Decide after SCRIPT FLUSH = %+v, %v", d, err)
	}
	if _, ok, err := s.Claim(ctx, rec.ID, at.Add(time.Second)); err != nil || !ok {
		t.Fatalf("Claim = %v, %v", ok, err)
	}
	var transitions int
	for _, names := range hook.pipes {
		if len(names) == 2 && names[1] == "evalsha" {
			transitions++
			if names[0] != "zadd" {
				t.Errorf("pipeline %v: want the zadd mark before the script", names)
			}
		}
	}
	if transitions != 2 {
		t.Errorf("pipelines %v: want two mark+script pipelines (decide, claim)", hook.pipes)
	}
	score, err := raw.ZScore(ctx, p+":unsettled", rec.ID).Result()
	if err != nil || int64(score) != at.Add(time.Second).UnixMilli() {
		t.Errorf("unsettled score = %v, %v; want the claim's time %d", score, err, at.Add(time.Second).UnixMilli())
	}
}
