// Package approvaltest is the contract suite every approval.Store must
// pass: creation and its idempotency, every legal and illegal transition,
// decide and resolve races between separate clients, expiry, listing,
// turns, conversations, the audit log, chat event dedupe and the inbox
// journal (RunQuorum and RunMCPPins hold the count of approvals and the MCP
// pins). A store's own tests call Run.
package approvaltest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
)

// Opener opens a new client of the store backend named ns. Clients opened
// with the same ns share their data, the way bot replicas share one Redis;
// a new ns starts empty. The opener closes its client in t.Cleanup.
type Opener func(t *testing.T, ns string) approval.Store

// Run runs the contract suite against the stores open gives.
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(*testing.T, func() approval.Store)
	}{
		{"CreateGet", testCreateGet},
		{"CreateIdempotent", testCreateIdempotent},
		{"CreateConcurrent", testCreateConcurrent},
		{"CreateInvalid", testCreateInvalid},
		{"Missing", testMissing},
		{"Transitions", testTransitions},
		{"DecideRace", testDecideRace},
		{"Due", testDue},
		{"ListPending", testListPending},
		{"ListPendingMany", testListPendingMany},
		{"CountPending", testCountPending},
		{"FindPending", testFindPending},
		{"PendingChannels", testPendingChannels},
		{"SetMessageRef", testSetMessageRef},
		{"Turn", testTurn},
		{"Resolve", testResolve},
		{"ResolveRace", testResolveRace},
		{"Conversation", testConversation},
		{"Audit", testAudit},
		{"Reopen", testReopen},
		{"Unsettled", testUnsettled},
		{"UnsettledLifecycle", testUnsettledLifecycle},
		{"SettledStaysSettled", testSettledStaysSettled},
		{"FinishAbandoned", testFinishAbandoned},
		{"OwnOutcomeWins", testOwnOutcomeWins},
		{"SetPreview", testSetPreview},
		{"Dedupe", testDedupe},
		{"DedupeRace", testDedupeRace},
		{"Inbox", testInbox},
		{"InboxRace", testInboxRace},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ns := tc.name + "-" + randHex(6)
			tc.fn(t, func() approval.Store { return open(t, ns) })
		})
	}
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// t0 is the suite's clock origin: a round time, in the past, so no store
// may rely on the wall clock for anything but conversation TTLs.
var t0 = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

// approvalOpts compares records the way a caller would: times by instant,
// JSON by its canonical form.
var approvalOpts = cmp.Options{
	cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) }),
	cmp.Comparer(func(a, b json.RawMessage) bool { return approval.ArgsHash(a) == approval.ArgsHash(b) }),
}

// Sample returns a full approval as the agent would create it, created at
// a fixed time in the past with the default 15 minutes to decide.
func Sample(tcid string) *approval.Approval {
	return &approval.Approval{
		ToolCallID: tcid,
		TurnID:     "turn-" + tcid,
		Tool:       "shell",
		Args:       json.RawMessage(`{"command": "rm -rf /var/tmp/cache/*", "cwd": "/srv/<app>"}`),
		Verdict: risk.Verdict{
			Decision: risk.Confirm,
			Risk:     risk.High,
			Reasons:  []string{"deletes files"},
		},
		Preview:      &tools.Preview{Summary: "3 files", Items: []string{"a", "b", "c"}, Total: 3},
		Requester:    approval.User{ID: "U1", Name: "ada"},
		Conversation: approval.Conversation{Platform: "slack", Channel: "C1", Thread: "1700000000.000100"},
		CreatedAt:    t0,
		ExpiresAt:    t0.Add(15 * time.Minute),
	}
}

func create(t *testing.T, s approval.Store, a *approval.Approval) *approval.Approval {
	t.Helper()
	got, created, err := s.Create(context.Background(), a)
	if err != nil {
		t.Fatalf("Create(%s): %v", a.ToolCallID, err)
	}
	if !created {
		t.Fatalf("Create(%s): created=false for a new tool call id", a.ToolCallID)
	}
	return got
}

func get(t *testing.T, s approval.Store, id string) *approval.Approval {
	t.Helper()
	got, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("Get(%s): %v", id, err)
	}
	return got
}

func testCreateGet(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	s := open()
	in := Sample("call-1")
	got := create(t, s, in)

	want := *in
	want.ID = got.ID
	want.State = approval.Pending
	want.ArgsHash = approval.ArgsHash(in.Args)
	if !approval.ValidID(got.ID) {
		t.Errorf("Create gave id %q, not of NewID's shape", got.ID)
	}
	if diff := cmp.Diff(&want, got, approvalOpts); diff != "" {
		t.Errorf("Create returned (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&want, get(t, s, got.ID), approvalOpts); diff != "" {
		t.Errorf("Get returned (-want +got):\n%s", diff)
	}
	// The record is a copy: changing what Create returned changes nothing.
	got.Tool = "changed"
	if g := get(t, open(), got.ID); g.Tool != "shell" {
		t.Errorf("after changing the returned record, Get.Tool = %q, want shell", g.Tool)
	}

	// Defaults: no deadline means DefaultTTL, no CreatedAt means now.
	d := Sample("call-2")
	d.ExpiresAt = time.Time{}
	d.Args = nil
	g := create(t, s, d)
	if want := t0.Add(approval.DefaultTTL); !g.ExpiresAt.Equal(want) {
		t.Errorf("default ExpiresAt = %v, want %v", g.ExpiresAt, want)
	}
	if string(g.Args) != "{}" {
		t.Errorf("empty args stored as %q, want {}", g.Args)
	}
	// A caller-chosen id is kept.
	c := Sample("call-3")
	c.ID = approval.NewID()
	if g := create(t, s, c); g.ID != c.ID {
		t.Errorf("Create with ID %q stored %q", c.ID, g.ID)
	}
	// The same id twice is a conflict, not an overwrite.
	dup := Sample("call-4")
	dup.ID = c.ID
	if _, _, err := s.Create(ctx, dup); !errors.Is(err, approval.ErrConflict) {
		t.Errorf("Create with an id in use: err = %v, want ErrConflict", err)
	}
}

func testCreateIdempotent(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	s := open()
	first := create(t, s, Sample("call-1"))
	again := Sample("call-1")
	again.Args = json.RawMessage(`{"command":"something else"}`)
	got, created, err := open().Create(ctx, again)
	if err != nil {
		t.Fatalf("second Create: %v", err)
	}
	if created {
		t.Errorf("second Create with the same tool call id: created = true")
	}
	if diff := cmp.Diff(first, got, approvalOpts); diff != "" {
		t.Errorf("second Create returned (-first +got):\n%s", diff)
	}
	// Idempotent whatever the state of the first record.
	if _, err := s.Decide(ctx, first.ID, approval.Cancelled, approval.User{ID: "U2"}, "", t0); err != nil {
		t.Fatal(err)
	}
	got, created, err = s.Create(ctx, Sample("call-1"))
	if err != nil || created || got.ID != first.ID || got.State != approval.Cancelled {
		t.Errorf("Create after the first was cancelled = %v %v %v, want the cancelled record", got, created, err)
	}
}

func testCreateConcurrent(t *testing.T, open func() approval.Store) {
	const n = 16
	stores := make([]approval.Store, n)
	for i := range stores {
		stores[i] = open()
	}
	var (
		wg      sync.WaitGroup
		created atomic.Int32
		ids     = make([]string, n)
		errs    = make([]error, n)
	)
	for i := range n {
		wg.Go(func() {
			got, c, err := stores[i].Create(context.Background(), Sample("call-race"))
			if err != nil {
				errs[i] = err
				return
			}
			if c {
				created.Add(1)
			}
			ids[i] = got.ID
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent Create: %v", err)
	}
	if c := created.Load(); c != 1 {
		t.Errorf("%d concurrent Creates of one tool call id: created=true %d times, want 1", n, c)
	}
	for i, id := range ids {
		if id != ids[0] {
			t.Errorf("Create %d got id %s, Create 0 got %s", i, id, ids[0])
		}
	}
}

func testCreateInvalid(t *testing.T, open func() approval.Store) {
	s := open()
	tests := []struct {
		name string
		a    func() *approval.Approval
	}{
		{"nil", func() *approval.Approval { return nil }},
		{"no tool call id", func() *approval.Approval { a := Sample(""); return a }},
		{"no tool", func() *approval.Approval { a := Sample("c"); a.Tool = ""; return a }},
		{"args not JSON", func() *approval.Approval { a := Sample("c"); a.Args = json.RawMessage(`{"a":`); return a }},
		{"wrong args hash", func() *approval.Approval {
			a := Sample("c")
			a.ArgsHash = approval.ArgsHash(json.RawMessage(`{}`))
			return a
		}},
		{"expires before created", func() *approval.Approval { a := Sample("c"); a.ExpiresAt = t0.Add(-time.Second); return a }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, created, err := s.Create(context.Background(), tc.a())
			if !errors.Is(err, approval.ErrInvalid) {
				t.Errorf("Create = %v, %v, %v; want ErrInvalid", got, created, err)
			}
		})
	}
	if ids, err := s.Due(context.Background(), t0.Add(time.Hour), 10); err != nil || len(ids) != 0 {
		t.Errorf("after invalid Creates, Due = %v, %v; want nothing stored", ids, err)
	}
}

func testMissing(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	s := open()
	id := approval.NewID()
	tests := []struct {
		name string
		call func() error
	}{
		{"Get", func() error { _, err := s.Get(ctx, id); return err }},
		{"Decide", func() error {
			_, err := s.Decide(ctx, id, approval.Approved, approval.User{ID: "U1"}, "", t0)
			return err
		}},
		{"Claim", func() error { _, _, err := s.Claim(ctx, id, t0); return err }},
		{"Finish", func() error { _, err := s.Finish(ctx, id, approval.Done, tools.Result{}, t0); return err }},
		{"FinishAbandoned", func() error {
			_, err := s.FinishAbandoned(ctx, id, approval.Failed, tools.Result{}, t0, t0)
			return err
		}},
		{"SetPreview", func() error { _, err := s.SetPreview(ctx, id, &tools.Preview{Summary: "x"}); return err }},
		{"SetMessageRef", func() error { return s.SetMessageRef(ctx, id, "m1") }},
		{"GetTurn", func() error { _, err := s.GetTurn(ctx, "no-such-turn"); return err }},
		{"Resolve", func() error { _, err := s.Resolve(ctx, "no-such-turn", id); return err }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); !errors.Is(err, approval.ErrNotFound) {
				t.Errorf("%s on a missing id: err = %v, want ErrNotFound", tc.name, err)
			}
		})
	}
	if err := s.DeleteTurn(ctx, "no-such-turn"); err != nil {
		t.Errorf("DeleteTurn on a missing turn: %v, want nil", err)
	}
}

var (
	alice = approval.User{ID: "U2", Name: "alice"}
	bob   = approval.User{ID: "U3", Name: "bob"}
	okRes = tools.Result{Status: tools.StatusOK, Executed: true, Stdout: "done\n", DurationMS: 12}
)

// reach creates an approval and drives it to state through legal steps, all
// at t0+1m (before the deadline).
func reach(t *testing.T, s approval.Store, tcid string, state approval.State) *approval.Approval {
	t.Helper()
	ctx := context.Background()
	a := create(t, s, Sample(tcid))
	at := t0.Add(time.Minute)
	decide := func(to approval.State) {
		if d, err := s.Decide(ctx, a.ID, to, alice, "because", at); err != nil || !d.Won {
			t.Fatalf("reach %s: Decide(%s) = %+v, %v", state, to, d, err)
		}
	}
	claim := func() {
		if _, ok, err := s.Claim(ctx, a.ID, at); err != nil || !ok {
			t.Fatalf("reach %s: Claim = %v, %v", state, ok, err)
		}
	}
	finish := func(to approval.State) {
		if _, err := s.Finish(ctx, a.ID, to, okRes, at); err != nil {
			t.Fatalf("reach %s: Finish(%s) = %v", state, to, err)
		}
	}
	switch state {
	case approval.Pending:
	case approval.Approved:
		decide(approval.Approved)
	case approval.Cancelled, approval.Expired:
		decide(state)
	case approval.Running:
		decide(approval.Approved)
		claim()
	case approval.Done, approval.Failed:
		decide(approval.Approved)
		claim()
		finish(state)
	default:
		t.Fatalf("reach: unknown state %q", state)
	}
	return get(t, s, a.ID)
}

var allStates = []approval.State{
	approval.Pending, approval.Approved, approval.Running, approval.Done,
	approval.Failed, approval.Cancelled, approval.Expired,
}

func testTransitions(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	s := open()
	at := t0.Add(2 * time.Minute)

	t.Run("Decide", func(t *testing.T) {
		for _, from := range allStates {
			for _, to := range []approval.State{approval.Approved, approval.Cancelled, approval.Expired} {
				t.Run(fmt.Sprintf("%s to %s", from, to), func(t *testing.T) {
					before := reach(t, s, "decide-"+string(from)+"-"+string(to), from)
					d, err := s.Decide(ctx, before.ID, to, bob, "my reason", at)
					if err != nil {
						t.Fatalf("Decide: %v", err)
					}
					want := *before
					if from == approval.Pending {
						want.State, want.DecidedBy, want.DecidedAt, want.Reason = to, &bob, at, "my reason"
					}
					if d.Won != (from == approval.Pending) {
						t.Errorf("Won = %v, want %v", d.Won, from == approval.Pending)
					}
					if diff := cmp.Diff(&want, d.Approval, approvalOpts); diff != "" {
						t.Errorf("Decide returned (-want +got):\n%s", diff)
					}
					if diff := cmp.Diff(&want, get(t, s, before.ID), approvalOpts); diff != "" {
						t.Errorf("stored after Decide (-want +got):\n%s", diff)
					}
				})
			}
			for _, to := range []approval.State{approval.Pending, approval.Running, approval.Done, approval.Failed, "bogus"} {
				t.Run(fmt.Sprintf("%s to %s is invalid", from, to), func(t *testing.T) {
					before := reach(t, s, "decide-bad-"+string(from)+"-"+string(to), from)
					if d, err := s.Decide(ctx, before.ID, to, bob, "", at); !errors.Is(err, approval.ErrInvalid) {
						t.Errorf("Decide(%s) = %+v, %v; want ErrInvalid", to, d, err)
					}
					if diff := cmp.Diff(before, get(t, s, before.ID), approvalOpts); diff != "" {
						t.Errorf("record changed (-before +after):\n%s", diff)
					}
				})
			}
		}
	})

	t.Run("late approve expires", func(t *testing.T) {
		for _, late := range []time.Duration{15 * time.Minute, time.Hour} {
			a := create(t, s, Sample(fmt.Sprint("late-", late)))
			d, err := s.Decide(ctx, a.ID, approval.Approved, bob, "", t0.Add(late))
			if err != nil || !d.Won || d.Approval.State != approval.Expired {
				t.Errorf("approve %v after creation (deadline 15m) = %+v, %v; want won, expired", late, d, err)
			}
		}
		a := create(t, s, Sample("late-cancel"))
		d, err := s.Decide(ctx, a.ID, approval.Cancelled, bob, "", t0.Add(time.Hour))
		if err != nil || !d.Won || d.Approval.State != approval.Cancelled {
			t.Errorf("late cancel = %+v, %v; want won, cancelled", d, err)
		}
	})

	t.Run("Claim", func(t *testing.T) {
		for _, from := range allStates {
			t.Run(string(from), func(t *testing.T) {
				before := reach(t, s, "claim-"+string(from), from)
				got, ok, err := s.Claim(ctx, before.ID, at)
				if err != nil {
					t.Fatalf("Claim: %v", err)
				}
				want := *before
				if from == approval.Approved {
					want.State, want.StartedAt = approval.Running, at
				}
				if ok != (from == approval.Approved) {
					t.Errorf("ok = %v, want %v", ok, from == approval.Approved)
				}
				if diff := cmp.Diff(&want, got, approvalOpts); diff != "" {
					t.Errorf("Claim returned (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(&want, get(t, s, before.ID), approvalOpts); diff != "" {
					t.Errorf("stored after Claim (-want +got):\n%s", diff)
				}
			})
		}
	})

	t.Run("Finish", func(t *testing.T) {
		for _, from := range allStates {
			for _, to := range []approval.State{approval.Done, approval.Failed} {
				t.Run(fmt.Sprintf("%s to %s", from, to), func(t *testing.T) {
					before := reach(t, s, "finish-"+string(from)+"-"+string(to), from)
					res := tools.Result{Status: tools.StatusError, Executed: true, Error: "exit 2", DurationMS: 40}
					got, err := s.Finish(ctx, before.ID, to, res, at)
					want := *before
					if from == approval.Running {
						if err != nil {
							t.Fatalf("Finish: %v", err)
						}
						want.State, want.EndedAt, want.Result = to, at, &res
						if diff := cmp.Diff(&want, got, approvalOpts); diff != "" {
							t.Errorf("Finish returned (-want +got):\n%s", diff)
						}
					} else if !errors.Is(err, approval.ErrConflict) {
						t.Errorf("Finish from %s = %v, %v; want ErrConflict", from, got, err)
					}
					if diff := cmp.Diff(&want, get(t, s, before.ID), approvalOpts); diff != "" {
						t.Errorf("stored after Finish (-want +got):\n%s", diff)
					}
				})
			}
			t.Run(fmt.Sprintf("%s to approved is invalid", from), func(t *testing.T) {
				before := reach(t, s, "finish-bad-"+string(from), from)
				if _, err := s.Finish(ctx, before.ID, approval.Approved, okRes, at); !errors.Is(err, approval.ErrInvalid) {
					t.Errorf("Finish(approved) = %v, want ErrInvalid", err)
				}
				if diff := cmp.Diff(before, get(t, s, before.ID), approvalOpts); diff != "" {
					t.Errorf("record changed (-before +after):\n%s", diff)
				}
			})
		}
	})
}

// testDecideRace: 64 clients decide one approval at once, half approving,
// half cancelling, then all try to claim it. Exactly one decision wins,
// every loser is told who won, and at most one claim succeeds: exactly one
// when the approval won.
func testDecideRace(t *testing.T, open func() approval.Store) {
	const (
		clients = 64
		rounds  = 50
	)
	stores := make([]approval.Store, clients)
	for i := range stores {
		stores[i] = open()
	}
	ctx := context.Background()
	outcomes := map[approval.State]int{}
	for round := range rounds {
		a := create(t, stores[round%clients], Sample(fmt.Sprint("race-", round)))
		var (
			start  = make(chan struct{})
			wg     sync.WaitGroup
			mu     sync.Mutex
			wins   []approval.DecideResult
			losses []approval.DecideResult
			claims int
			errs   []error
		)
		for i := range clients {
			wg.Go(func() {
				to, by := approval.Approved, approval.User{ID: fmt.Sprint("A", i)}
				if i%2 == 1 {
					to, by = approval.Cancelled, approval.User{ID: fmt.Sprint("C", i)}
				}
				<-start
				d, err := stores[i].Decide(ctx, a.ID, to, by, "", t0.Add(time.Minute))
				_, ok, cerr := stores[i].Claim(ctx, a.ID, t0.Add(2*time.Minute))
				mu.Lock()
				defer mu.Unlock()
				if err := errors.Join(err, cerr); err != nil {
					errs = append(errs, err)
					return
				}
				if d.Won {
					wins = append(wins, d)
				} else {
					losses = append(losses, d)
				}
				if ok {
					claims++
				}
			})
		}
		close(start)
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if len(wins) != 1 {
			t.Fatalf("round %d: %d winners, want exactly 1", round, len(wins))
		}
		won := wins[0].Approval
		outcomes[won.State]++
		wantClaims := 0
		if won.State == approval.Approved {
			wantClaims = 1
		}
		if claims != wantClaims {
			t.Errorf("round %d: decision %s, %d successful claims, want %d", round, won.State, claims, wantClaims)
		}
		for _, l := range losses {
			if l.Approval.DecidedBy == nil || *l.Approval.DecidedBy != *won.DecidedBy {
				t.Errorf("round %d: a loser was told decided_by %v, the winner was %v", round, l.Approval.DecidedBy, won.DecidedBy)
				break
			}
		}
		final := get(t, stores[0], a.ID)
		if want := map[approval.State]approval.State{approval.Approved: approval.Running, approval.Cancelled: approval.Cancelled}[won.State]; final.State != want {
			t.Errorf("round %d: final state %s, want %s", round, final.State, want)
		}
	}
	t.Logf("%d rounds of %d concurrent decides: outcomes %v", rounds, clients, outcomes)
}

func testDue(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	s := open()
	mk := func(tcid string, deadline time.Duration) *approval.Approval {
		a := Sample(tcid)
		a.ExpiresAt = t0.Add(deadline)
		return create(t, s, a)
	}
	third := mk("third", 3*time.Minute)
	first := mk("first", time.Minute)
	decided := mk("decided", 30*time.Second)
	second := mk("second", 2*time.Minute)
	if _, err := s.Decide(ctx, decided.ID, approval.Cancelled, alice, "", t0); err != nil {
		t.Fatal(err)
	}

	due := func(now time.Duration, limit int) []string {
		t.Helper()
		ids, err := open().Due(ctx, t0.Add(now), limit)
		if err != nil {
			t.Fatalf("Due: %v", err)
		}
		return ids
	}
	tests := []struct {
		name  string
		now   time.Duration
		limit int
		want  []string
	}{
		{"none yet", 59 * time.Second, 10, nil},
		{"deadline is inclusive", time.Minute, 10, []string{first.ID}},
		{"earliest first", 2 * time.Minute, 10, []string{first.ID, second.ID}},
		{"limit", time.Hour, 2, []string{first.ID, second.ID}},
		{"all", time.Hour, 10, []string{first.ID, second.ID, third.ID}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, due(tc.now, tc.limit), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Due(t0+%v, %d) (-want +got):\n%s", tc.now, tc.limit, diff)
			}
		})
	}

	// The sweep: expire what is due, through Decide.
	for _, id := range due(2*time.Minute, 10) {
		d, err := s.Decide(ctx, id, approval.Expired, approval.User{ID: "countersign"}, "", t0.Add(2*time.Minute))
		if err != nil || !d.Won || d.Approval.State != approval.Expired {
			t.Errorf("expire %s = %+v, %v", id, d, err)
		}
	}
	if diff := cmp.Diff([]string{third.ID}, due(time.Hour, 10)); diff != "" {
		t.Errorf("Due after expiring two (-want +got):\n%s", diff)
	}
	// An approval decided otherwise leaves the due list too.
	if _, err := s.Decide(ctx, third.ID, approval.Approved, alice, "", t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := due(time.Hour, 10); len(got) != 0 {
		t.Errorf("Due after the last was approved = %v, want none", got)
	}
}

func testListPending(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	s := open()
	mk := func(tcid, platform, channel string, created time.Duration) *approval.Approval {
		a := Sample(tcid)
		a.Conversation = approval.Conversation{Platform: platform, Channel: channel, Thread: tcid}
		a.CreatedAt = t0.Add(created)
		a.ExpiresAt = a.CreatedAt.Add(15 * time.Minute)
		return create(t, s, a)
	}
	c := mk("c", "slack", "C1", 3*time.Second)
	a := mk("a", "slack", "C1", time.Second)
	mk("other-channel", "slack", "C2", 0)
	otherPlatform := mk("other-platform", "discord", "C1", 0)
	decided := mk("decided", "slack", "C1", 0)
	b := mk("b", "slack", "C1", 2*time.Second)
	if _, err := s.Decide(ctx, decided.ID, approval.Approved, alice, "", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name              string
		platform, channel string
		limit             int
		want              []string
	}{
		{"oldest first, decided left out", "slack", "C1", 0, []string{a.ID, b.ID, c.ID}},
		{"the oldest limit", "slack", "C1", 2, []string{a.ID, b.ID}},
		{"a limit above the number pending", "slack", "C1", 10, []string{a.ID, b.ID, c.ID}},
		{"per platform", "discord", "C1", 0, []string{otherPlatform.ID}},
		{"no channel's prefix is another's", "slack", "C", 0, nil},
		{"empty channel", "slack", "C9", 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := open().ListPending(ctx, tc.platform, tc.channel, tc.limit)
			if err != nil {
				t.Fatalf("ListPending: %v", err)
			}
			var ids []string
			for _, a := range got {
				ids = append(ids, a.ID)
			}
			if diff := cmp.Diff(tc.want, ids, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ListPending(%s, %s) (-want +got):\n%s", tc.platform, tc.channel, diff)
			}
		})
	}
	// A full record comes back, not just the id.
	got, err := s.ListPending(ctx, "slack", "C1", 0)
	if err != nil || len(got) == 0 {
		t.Fatalf("ListPending = %v, %v", got, err)
	}
	if diff := cmp.Diff(a, got[0], approvalOpts); diff != "" {
		t.Errorf("ListPending record (-want +got):\n%s", diff)
	}
}

// testListPendingMany: with more approvals than a limit, in an order of
// creation unlike the order they were created in and with ties of time
// (broken by id), ListPending returns exactly the oldest limit, in order.
func testListPendingMany(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	s := open()
	const n, limit = 300, 120
	type key struct {
		created time.Time
		id      string
	}
	var all []key
	for i := range n {
		a := Sample(fmt.Sprint("many-", i))
		a.Conversation.Channel = "many"
		a.CreatedAt = t0.Add(time.Duration((i*7919)%101) * time.Second) // scrambled, with ties
		a.ExpiresAt = a.CreatedAt.Add(time.Hour)
		got := create(t, s, a)
		all = append(all, key{got.CreatedAt, got.ID})
	}
	slices.SortFunc(all, func(a, b key) int {
		if c := a.created.Compare(b.created); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	var want []string
	for _, k := range all[:limit] {
		want = append(want, k.id)
	}
	list, err := open().ListPending(ctx, "slack", "many", limit)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range list {
		ids = append(ids, a.ID)
	}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("ListPending(limit %d) of %d (-want +got):\n%s", limit, n, diff)
	}
	if c, err := open().CountPending(ctx, "slack", "many"); err != nil || c != n {
		t.Errorf("CountPending = %d, %v; want %d", c, err, n)
	}
}

func testCountPending(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	s := open()
	mk := func(tcid, platform, channel string) *approval.Approval {
		a := Sample(tcid)
		a.Conversation = approval.Conversation{Platform: platform, Channel: channel, Thread: tcid}
		return create(t, s, a)
	}
	for i := range 3 {
		mk(fmt.Sprint("c1-", i), "slack", "C1")
	}
	mk("c2", "slack", "C2")
	mk("discord", "discord", "C1")
	at := t0.Add(time.Minute)
	for i, to := range []approval.State{approval.Approved, approval.Cancelled, approval.Expired} {
		d := mk(fmt.Sprint("decided-", i), "slack", "C1")
		if _, err := s.Decide(ctx, d.ID, to, alice, "", at); err != nil {
			t.Fatal(err)
		}
	}
	run := reach(t, s, "running", approval.Running)
	if run.Conversation.Channel != "C1" {
		t.Fatalf("reach made a record in %s, want C1", run.Conversation.Channel)
	}
	tests := []struct {
		name              string
		platform, channel string
		want              int
	}{
		{"one channel, decided left out", "slack", "C1", 3},
		{"another channel", "slack", "C2", 1},
		{"per platform", "discord", "C1", 1},
		{"empty channel", "slack", "C9", 0},
		{"everywhere", "", "", 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := open().CountPending(ctx, tc.platform, tc.channel)
			if err != nil || got != tc.want {
				t.Errorf("CountPending(%q, %q) = %d, %v; want %d", tc.platform, tc.channel, got, err, tc.want)
			}
		})
	}
	for _, args := range [][2]string{{"slack", ""}, {"", "C1"}} {
		if _, err := s.CountPending(ctx, args[0], args[1]); !errors.Is(err, approval.ErrInvalid) {
			t.Errorf("CountPending(%q, %q) = %v, want ErrInvalid", args[0], args[1], err)
		}
	}
	// More than a page of anything: the count is not capped.
	for i := range 1234 {
		mk(fmt.Sprint("many-", i), "slack", "C3")
	}
	if got, err := s.CountPending(ctx, "slack", "C3"); err != nil || got != 1234 {
		t.Errorf("CountPending(slack, C3) = %d, %v; want 1234", got, err)
	}
	if got, err := s.CountPending(ctx, "", ""); err != nil || got != 1239 {
		t.Errorf("CountPending everywhere = %d, %v; want 1239", got, err)
	}
}

func testSetMessageRef(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	s := open()
	for _, state := range allStates {
		a := reach(t, s, "ref-"+string(state), state)
		if err := s.SetMessageRef(ctx, a.ID, "1700000000.000200"); err != nil {
			t.Fatalf("SetMessageRef in state %s: %v", state, err)
		}
		want := *a
		want.MessageRef = "1700000000.000200"
		if diff := cmp.Diff(&want, get(t, open(), a.ID), approvalOpts); diff != "" {
			t.Errorf("after SetMessageRef in state %s (-want +got):\n%s", state, diff)
		}
	}
}

func sampleTurn(id string, pending ...string) *approval.Turn {
	return &approval.Turn{
		ID:           id,
		Conversation: approval.Conversation{Platform: "slack", Channel: "C1", Thread: "T1"},
		Pending:      pending,
		State:        json.RawMessage(`{"messages":[{"role":"user","content":"clean the cache"}],"calls":["call-1","call-2"]}`),
		CreatedAt:    t0,
	}
}

var turnOpts = cmp.Options{
	cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) }),
	cmp.Comparer(func(a, b json.RawMessage) bool { return approval.ArgsHash(a) == approval.ArgsHash(b) }),
}

func testTurn(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	s := open()
	in := sampleTurn("turn-1", "a1", "a2", "a3")
	if err := s.SaveTurn(ctx, in); err != nil {
		t.Fatalf("SaveTurn: %v", err)
	}
	got, err := open().GetTurn(ctx, "turn-1")
	if err != nil {
		t.Fatalf("GetTurn: %v", err)
	}
	if diff := cmp.Diff(in, got, turnOpts); diff != "" {
		t.Errorf("GetTurn (-want +got):\n%s", diff)
	}
	if _, err := s.Resolve(ctx, "turn-1", "a2"); err != nil {
		t.Fatal(err)
	}
	got, err = s.GetTurn(ctx, "turn-1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a1", "a3"}, got.Pending); diff != "" {
		t.Errorf("Pending after resolving a2 (-want +got):\n%s", diff)
	}
	if err := s.SaveTurn(ctx, &approval.Turn{}); !errors.Is(err, approval.ErrInvalid) {
		t.Errorf("SaveTurn without an id = %v, want ErrInvalid", err)
	}
	if err := s.DeleteTurn(ctx, "turn-1"); err != nil {
		t.Fatalf("DeleteTurn: %v", err)
	}
	if _, err := open().GetTurn(ctx, "turn-1"); !errors.Is(err, approval.ErrNotFound) {
		t.Errorf("GetTurn after DeleteTurn = %v, want ErrNotFound", err)
	}
	if _, err := s.Resolve(ctx, "turn-1", "a1"); !errors.Is(err, approval.ErrNotFound) {
		t.Errorf("Resolve after DeleteTurn = %v, want ErrNotFound", err)
	}
}

func testResolve(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	s := open()
	if err := s.SaveTurn(ctx, sampleTurn("turn-1", "a1", "a2")); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		id   string
		last bool
	}{
		{"a1", false},
		{"a1", false}, // twice: still not last
		{"zz", false}, // never pending
		{"a2", true},  // empties it
		{"a2", false}, // again: already resumed
		{"a1", false},
	}
	for i, st := range steps {
		last, err := open().Resolve(ctx, "turn-1", st.id)
		if err != nil {
			t.Fatalf("step %d: Resolve(%s): %v", i, st.id, err)
		}
		if last != st.last {
			t.Errorf("step %d: Resolve(%s) last = %v, want %v", i, st.id, last, st.last)
		}
	}
	// A turn saved again with its last approval pending resumes once more:
	// SaveTurn starts a new suspension.
	if err := s.SaveTurn(ctx, sampleTurn("turn-1", "b1")); err != nil {
		t.Fatal(err)
	}
	if last, err := s.Resolve(ctx, "turn-1", "b1"); err != nil || !last {
		t.Errorf("Resolve after SaveTurn again = %v, %v; want true", last, err)
	}
}

func testResolveRace(t *testing.T, open func() approval.Store) {
	const (
		pending  = 8
		perID    = 4
		rounds   = 20
		nClients = 8
	)
	ctx := context.Background()
	stores := make([]approval.Store, nClients)
	for i := range stores {
		stores[i] = open()
	}
	for round := range rounds {
		id := fmt.Sprint("turn-", round)
		var ids []string
		for i := range pending {
			ids = append(ids, fmt.Sprint("a", i))
		}
		if err := stores[0].SaveTurn(ctx, sampleTurn(id, ids...)); err != nil {
			t.Fatal(err)
		}
		var (
			wg    sync.WaitGroup
			lasts atomic.Int32
			fails atomic.Int32
			start = make(chan struct{})
		)
		for i := range pending * perID {
			wg.Go(func() {
				<-start
				last, err := stores[i%nClients].Resolve(ctx, id, ids[i%pending])
				if err != nil {
					fails.Add(1)
				}
				if last {
					lasts.Add(1)
				}
			})
		}
		close(start)
		wg.Wait()
		if fails.Load() != 0 {
			t.Fatalf("round %d: %d Resolve calls failed", round, fails.Load())
		}
		if lasts.Load() != 1 {
			t.Fatalf("round %d: %d resolvers got last=true, want exactly 1", round, lasts.Load())
		}
	}
}

func testConversation(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	s := open()
	key := approval.Conversation{Platform: "slack", Channel: "C1", Thread: "T1"}.Key()
	if got, err := s.LoadConversation(ctx, key); err != nil || got != nil {
		t.Errorf("LoadConversation of a new key = %q, %v; want nil, nil", got, err)
	}
	for _, data := range []string{`[{"role":"user","content":"hi"}]`, `[]`} {
		if err := s.SaveConversation(ctx, key, []byte(data), time.Hour); err != nil {
			t.Fatalf("SaveConversation: %v", err)
		}
		got, err := open().LoadConversation(ctx, key)
		if err != nil || string(got) != data {
			t.Errorf("LoadConversation = %q, %v; want %q", got, err, data)
		}
	}
	if err := s.SaveConversation(ctx, key, []byte("x"), 0); !errors.Is(err, approval.ErrInvalid) {
		t.Errorf("SaveConversation with ttl 0 = %v, want ErrInvalid", err)
	}
	// The TTL is real time: the conversation is gone after it.
	short := key + "-short"
	if err := s.SaveConversation(ctx, short, []byte("soon gone"), 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.LoadConversation(ctx, short); string(got) != "soon gone" {
		t.Errorf("LoadConversation within its TTL = %q", got)
	}
	time.Sleep(250 * time.Millisecond)
	if got, err := s.LoadConversation(ctx, short); err != nil || got != nil {
		t.Errorf("LoadConversation after its TTL = %q, %v; want nil, nil", got, err)
	}
	if got, _ := s.LoadConversation(ctx, key); string(got) != "[]" {
		t.Errorf("the long-lived conversation = %q, want []", got)
	}
}

func testAudit(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	s := open()
	if got, err := s.AuditLog(ctx, 10); err != nil || len(got) != 0 {
		t.Errorf("AuditLog of a new store = %v, %v; want none", got, err)
	}
	events := []approval.Event{
		{At: t0, Kind: "assessment", Actor: "U1", Tool: "shell", Operation: "rm -rf /tmp/x", Rule: "shell.rm", Decision: "confirm", Channel: "slack:C1"},
		{At: t0.Add(time.Second), Kind: "card", ApprovalID: "a1", Channel: "slack:C1"},
		{At: t0.Add(2 * time.Second), Kind: "click", Actor: "U2", ApprovalID: "a1", Decision: "approved"},
		{At: t0.Add(3 * time.Second), Kind: "execution", ApprovalID: "a1", Outcome: "ok", Detail: "exit 0 in 12ms"},
	}
	for _, e := range events {
		if err := s.Audit(ctx, e); err != nil {
			t.Fatalf("Audit(%s): %v", e.Kind, err)
		}
	}
	eventOpts := cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })
	tests := []struct {
		n    int
		want []approval.Event
	}{
		{0, nil},
		{1, events[3:]},
		{2, events[2:]},
		{4, events},
		{100, events},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint("last ", tc.n), func(t *testing.T) {
			got, err := open().AuditLog(ctx, tc.n)
			if err != nil {
				t.Fatalf("AuditLog: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, eventOpts, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("AuditLog(%d) (-want +got):\n%s", tc.n, diff)
			}
		})
	}
	before := time.Now().Add(-time.Second)
	if err := s.Audit(ctx, approval.Event{Kind: "expiry", ApprovalID: "a2"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.AuditLog(ctx, 1)
	if err != nil || len(got) != 1 {
		t.Fatalf("AuditLog(1) = %v, %v", got, err)
	}
	if got[0].At.Before(before) {
		t.Errorf("an event without a time was stored at %v, want about now", got[0].At)
	}
}

// testReopen: a client opened after another was closed sees everything it
// stored, the way a restarted bot sees what the old process left.
func testReopen(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	old := open()
	a := create(t, old, Sample("call-1"))
	b := create(t, old, Sample("call-2"))
	if err := old.SaveTurn(ctx, sampleTurn("turn-1", a.ID, b.ID)); err != nil {
		t.Fatal(err)
	}
	d, err := old.Decide(ctx, a.ID, approval.Approved, alice, "", t0.Add(time.Minute))
	if err != nil || !d.Won {
		t.Fatalf("Decide = %+v, %v", d, err)
	}
	if last, err := old.Resolve(ctx, "turn-1", a.ID); err != nil || last {
		t.Fatalf("Resolve(a) = %v, %v; want false", last, err)
	}
	if err := old.Audit(ctx, approval.Event{At: t0, Kind: "click", ApprovalID: a.ID}); err != nil {
		t.Fatal(err)
	}

	s := open()
	if got := get(t, s, a.ID); got.State != approval.Approved || got.DecidedBy == nil || *got.DecidedBy != alice {
		t.Errorf("after reopening, approval a = %+v, want approved by alice", got)
	}
	if got, err := s.ListPending(ctx, "slack", "C1", 0); err != nil || len(got) != 1 || got[0].ID != b.ID {
		t.Errorf("after reopening, ListPending = %v, %v; want just b", got, err)
	}
	turn, err := s.GetTurn(ctx, "turn-1")
	if err != nil {
		t.Fatalf("after reopening, GetTurn: %v", err)
	}
	if diff := cmp.Diff([]string{b.ID}, turn.Pending); diff != "" {
		t.Errorf("after reopening, turn pending (-want +got):\n%s", diff)
	}
	if _, err := s.Decide(ctx, b.ID, approval.Cancelled, bob, "not now", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if last, err := s.Resolve(ctx, "turn-1", b.ID); err != nil || !last {
		t.Errorf("after reopening, Resolve(b) = %v, %v; want last", last, err)
	}
	if last, err := open().Resolve(ctx, "turn-1", b.ID); err != nil || last {
		t.Errorf("a second resume = %v, %v; want false", last, err)
	}
	if got, err := s.AuditLog(ctx, 10); err != nil || len(got) != 1 || got[0].ApprovalID != a.ID {
		t.Errorf("after reopening, AuditLog = %v, %v", got, err)
	}
}

// ids returns the ids of records, in order.
func ids(recs []*approval.Approval) []string {
	out := make([]string, len(recs))
	for i, a := range recs {
		out[i] = a.ID
	}
	return out
}

// testUnsettled: every decided state is listed once its last life is at or
// before the cutoff for its kind, pending never, oldest first, up to limit,
// and across clients.
func testUnsettled(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	s, other := open(), open()
	at := t0.Add(time.Minute) // reach's time
	recs := map[approval.State]*approval.Approval{}
	for _, st := range allStates {
		recs[st] = reach(t, s, "unsettled-"+string(st), st)
	}
	far := t0.Add(time.Hour)
	tests := []struct {
		name                         string
		decidedBefore, runningBefore time.Time
		limit                        int
		want                         []approval.State
	}{
		{"nothing old enough", at.Add(-time.Millisecond), at.Add(-time.Millisecond), 0, nil},
		{"decided only", at, at.Add(-time.Millisecond), 0,
			[]approval.State{approval.Approved, approval.Done, approval.Failed, approval.Cancelled, approval.Expired}},
		{"running only", at.Add(-time.Millisecond), at, 0, []approval.State{approval.Running}},
		{"all decided", far, far, 0,
			[]approval.State{approval.Approved, approval.Running, approval.Done, approval.Failed, approval.Cancelled, approval.Expired}},
		{"limit", far, far, 2, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := other.Unsettled(ctx, tc.decidedBefore, tc.runningBefore, tc.limit)
			if err != nil {
				t.Fatalf("Unsettled: %v", err)
			}
			if tc.limit > 0 {
				if len(got) != tc.limit {
					t.Errorf("Unsettled(limit %d) = %d records", tc.limit, len(got))
				}
				return
			}
			want := make([]string, 0, len(tc.want))
			for _, st := range tc.want {
				want = append(want, recs[st].ID)
			}
			if diff := cmp.Diff(want, ids(got), cmpopts.SortSlices(func(a, b string) bool { return a < b }), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Unsettled ids (-want +got):\n%s", diff)
			}
			for _, a := range got {
				if a.State == approval.Pending {
					t.Errorf("Unsettled listed pending %s", a.ID)
				}
			}
		})
	}
}

// testUnsettledLifecycle follows one approval: the claim, a heartbeat and
// the finish each move its last life on; Settle takes a final one off the
// list, and does nothing to one still running.
func testUnsettledLifecycle(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	s, other := open(), open()
	a := create(t, s, Sample("lifecycle"))
	listed := func(decidedBefore, runningBefore time.Time) bool {
		t.Helper()
		got, err := other.Unsettled(ctx, decidedBefore, runningBefore, 0)
		if err != nil {
			t.Fatalf("Unsettled: %v", err)
		}
		for _, g := range got {
			if g.ID == a.ID {
				return true
			}
		}
		return false
	}
	step := func(name string, fn func() error) {
		t.Helper()
		if err := fn(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	far := t0.Add(time.Hour)
	minute := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }
	if listed(far, far) {
		t.Fatal("a pending approval is listed")
	}
	step("Heartbeat of a pending approval", func() error { return s.Heartbeat(ctx, a.ID, minute(1)) })
	if listed(far, far) {
		t.Fatal("a heartbeat made a pending approval unsettled")
	}
	step("Decide", func() error { _, err := s.Decide(ctx, a.ID, approval.Approved, alice, "", minute(1)); return err })
	step("Settle while approved", func() error { return s.Settle(ctx, a.ID) })
	if !listed(minute(1), minute(0)) {
		t.Fatal("an approved, unclaimed approval is not listed after Settle: Settle must ignore approvals that are not final")
	}
	step("Claim", func() error { _, _, err := s.Claim(ctx, a.ID, minute(2)); return err })
	if listed(far, minute(2).Add(-time.Millisecond)) {
		t.Error("a running approval is listed before its run's cutoff")
	}
	if !listed(minute(0), minute(2)) {
		t.Error("a running approval is not listed at its run's cutoff")
	}
	step("Heartbeat", func() error { return s.Heartbeat(ctx, a.ID, minute(5)) })
	if listed(far, minute(4)) {
		t.Error("a heartbeat did not move the running approval's last life on")
	}
	if !listed(far, minute(5)) {
		t.Error("a running approval is not listed at its last heartbeat")
	}
	step("Settle while running", func() error { return s.Settle(ctx, a.ID) })
	if !listed(far, minute(5)) {
		t.Error("Settle took a running approval off the list")
	}
	step("Finish", func() error { _, err := s.Finish(ctx, a.ID, approval.Failed, okRes, minute(6)); return err })
	if listed(minute(5), far) {
		t.Error("a finished approval is listed before the cutoff after its finish")
	}
	if !listed(minute(6), minute(0)) {
		t.Error("a finished, unsettled approval is not listed")
	}
	step("Heartbeat after the finish", func() error { return s.Heartbeat(ctx, a.ID, minute(9)) })
	if !listed(minute(6), minute(0)) {
		t.Error("a heartbeat after the finish moved the record's last life")
	}
	step("Settle", func() error { return other.Settle(ctx, a.ID) })
	if listed(far, far) {
		t.Error("a settled approval is still listed")
	}
	step("Settle again", func() error { return s.Settle(ctx, a.ID) })
	step("Settle of a missing approval", func() error { return s.Settle(ctx, "no-such-approval") })
	if got := get(t, s, a.ID); got.State != approval.Failed {
		t.Errorf("state after settling = %s, want failed", got.State)
	}
}

// testSettledStaysSettled: two replicas recover the same approved call;
// one claims, finishes and settles it, and only then does the other's
// Claim (or a late click's Decide, or a vote) arrive and lose. The loser
// changes nothing, so the record stays settled: Unsettled never lists it
// again (the interleaving behind TestRecoveryAfterACrash's "Unsettled
// after recovery = 1 records").
func testSettledStaysSettled(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	later := t0.Add(2 * time.Minute)
	far := t0.Add(time.Hour)
	tests := []struct {
		name string
		lose func(s approval.Store, id string) error
	}{
		{"a losing Claim", func(s approval.Store, id string) error {
			_, ok, err := s.Claim(ctx, id, later)
			if ok {
				return errors.New("a Claim of a finished approval won")
			}
			return err
		}},
		{"a losing Decide", func(s approval.Store, id string) error {
			d, err := s.Decide(ctx, id, approval.Cancelled, bob, "late", later)
			if d.Won {
				return errors.New("a Decide of a finished approval won")
			}
			return err
		}},
		{"a losing Finish", func(s approval.Store, id string) error {
			_, err := s.Finish(ctx, id, approval.Done, okRes, later)
			if !errors.Is(err, approval.ErrConflict) {
				return fmt.Errorf("a Finish of a finished approval = %v, want ErrConflict", err)
			}
			return nil
		}},
		{"a losing vote", func(s approval.Store, id string) error {
			r, err := s.Approve(ctx, id, approval.Vote{By: bob, At: later, Need: 1})
			if r.Won {
				return errors.New("a vote on a finished approval won")
			}
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, other := open(), open()
			a := reach(t, s, "settled-"+randHex(4), approval.Failed)
			if err := s.Settle(ctx, a.ID); err != nil {
				t.Fatalf("Settle: %v", err)
			}
			if err := tc.lose(other, a.ID); err != nil {
				t.Fatal(err)
			}
			got, err := other.Unsettled(ctx, far, far, 0)
			if err != nil {
				t.Fatalf("Unsettled: %v", err)
			}
			for _, g := range got {
				if g.ID == a.ID {
					t.Fatalf("a settled approval is listed as unsettled again after %s", tc.name)
				}
			}
		})
	}
}

// testOwnOutcomeWins: a run whose process could not reach the store for a
// while is ended by recovery as interrupted; its own outcome, arriving a
// moment later, replaces that guess (once), on any client; a record a
// person or the run itself ended is never replaced.
func testOwnOutcomeWins(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	s, sweeper := open(), open()
	minute := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }
	interrupted := tools.Result{Status: tools.StatusError, Executed: true, Error: "interrupted"}
	own := tools.Result{Status: tools.StatusOK, Executed: true, Stdout: "the run's own output"}
	a := reach(t, s, "own-outcome", approval.Running)
	if _, err := sweeper.FinishAbandoned(ctx, a.ID, approval.Failed, interrupted, minute(5), minute(4)); err != nil {
		t.Fatalf("FinishAbandoned: %v", err)
	}
	got, err := s.Finish(ctx, a.ID, approval.Done, own, minute(5).Add(10*time.Millisecond))
	if err != nil {
		t.Fatalf("the run's own Finish after recovery's guess = %v; want it to win", err)
	}
	if got.State != approval.Done || got.Result == nil || got.Result.Stdout != own.Stdout {
		t.Errorf("after the run's own Finish: %s, %+v; want done with its own result", got.State, got.Result)
	}
	if r := get(t, sweeper, a.ID); r.State != approval.Done || r.Result == nil || r.Result.Stdout != own.Stdout {
		t.Errorf("another client reads %s, %+v; want done with the run's own result", r.State, r.Result)
	}
	if _, err := s.Finish(ctx, a.ID, approval.Failed, interrupted, minute(6)); !errors.Is(err, approval.ErrConflict) {
		t.Errorf("a second Finish = %v; want ErrConflict (the own outcome is final)", err)
	}
	for _, st := range []approval.State{approval.Failed, approval.Cancelled, approval.Expired} {
		b := reach(t, s, "not-guessed-"+string(st), st)
		if _, err := s.Finish(ctx, b.ID, approval.Done, own, minute(6)); !errors.Is(err, approval.ErrConflict) {
			t.Errorf("Finish of a %s record nobody guessed = %v; want ErrConflict", st, err)
		}
	}
}

// testFinishAbandoned: recovery ends a run only if, when it asks, the run
// is still running and its last life (claim or latest heartbeat) is at or
// before the cutoff, however old the record the caller judged it by. A
// call claimed or beaten after the cutoff, or not running, is refused and
// left as it is.
func testFinishAbandoned(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	s, other := open(), open()
	minute := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }
	interrupted := tools.Result{Status: tools.StatusError, Executed: true, Error: "interrupted"}
	refused := func(t *testing.T, id string, cutoff time.Time, want approval.State) {
		t.Helper()
		before := get(t, s, id)
		if got, err := other.FinishAbandoned(ctx, id, approval.Failed, interrupted, minute(10), cutoff); !errors.Is(err, approval.ErrConflict) {
			t.Errorf("FinishAbandoned(cutoff %s) = %+v, %v; want ErrConflict", cutoff.Format(time.TimeOnly), got, err)
		}
		after := get(t, s, id)
		if after.State != want {
			t.Errorf("after a refused FinishAbandoned the approval is %s, want %s", after.State, want)
		}
		if diff := cmp.Diff(before, after, approvalOpts); diff != "" {
			t.Errorf("a refused FinishAbandoned changed the record (-before +after):\n%s", diff)
		}
	}

	t.Run("claimed after the cutoff", func(t *testing.T) {
		// A sweep read this approved call as stranded (decided at minute
		// 1); before it acts, another replica claims it at minute 4.
		a := reach(t, s, "abandoned-claimed", approval.Approved)
		if _, ok, err := s.Claim(ctx, a.ID, minute(4)); err != nil || !ok {
			t.Fatalf("Claim = %v, %v", ok, err)
		}
		refused(t, a.ID, minute(3), approval.Running)
		refused(t, a.ID, minute(4).Add(-time.Millisecond), approval.Running)
	})
	t.Run("heartbeat after the cutoff", func(t *testing.T) {
		a := reach(t, s, "abandoned-beating", approval.Running) // claimed at minute 1
		if err := s.Heartbeat(ctx, a.ID, minute(5)); err != nil {
			t.Fatal(err)
		}
		refused(t, a.ID, minute(4), approval.Running)
	})
	t.Run("not running", func(t *testing.T) {
		for _, st := range []approval.State{approval.Pending, approval.Approved, approval.Done, approval.Cancelled} {
			a := reach(t, s, "abandoned-"+string(st), st)
			refused(t, a.ID, minute(60), st)
		}
	})
	t.Run("invalid end state", func(t *testing.T) {
		a := reach(t, s, "abandoned-invalid", approval.Running)
		if _, err := other.FinishAbandoned(ctx, a.ID, approval.Cancelled, interrupted, minute(10), minute(60)); !errors.Is(err, approval.ErrInvalid) {
			t.Errorf("FinishAbandoned(cancelled) = %v, want ErrInvalid", err)
		}
	})
	t.Run("silent since the cutoff", func(t *testing.T) {
		a := reach(t, s, "abandoned-silent", approval.Running) // claimed at minute 1
		if err := s.Heartbeat(ctx, a.ID, minute(3)); err != nil {
			t.Fatal(err)
		}
		// At the cutoff counts as silent, as in Unsettled.
		got, err := other.FinishAbandoned(ctx, a.ID, approval.Failed, interrupted, minute(10), minute(3))
		if err != nil {
			t.Fatalf("FinishAbandoned: %v", err)
		}
		if got.State != approval.Failed || got.Result == nil || got.Result.Error != "interrupted" || !got.EndedAt.Equal(minute(10)) {
			t.Errorf("FinishAbandoned returned %s, %+v, ended %s; want failed, the result, ended at minute 10", got.State, got.Result, got.EndedAt)
		}
		if diff := cmp.Diff(got, get(t, s, a.ID), approvalOpts); diff != "" {
			t.Errorf("stored record differs from the returned one (-returned +stored):\n%s", diff)
		}
		// Ended: the finish is its last life, and a second sweep is refused.
		listed := func(decidedBefore time.Time) bool {
			t.Helper()
			recs, err := other.Unsettled(ctx, decidedBefore, minute(0), 0)
			if err != nil {
				t.Fatalf("Unsettled: %v", err)
			}
			return slices.Contains(ids(recs), a.ID)
		}
		if listed(minute(10).Add(-time.Millisecond)) {
			t.Error("an abandoned run ended by recovery is listed before the cutoff after its finish")
		}
		if !listed(minute(10)) {
			t.Error("an abandoned run ended by recovery is not listed at the cutoff after its finish")
		}
		refused(t, a.ID, minute(60), approval.Failed)
	})
}

// testSetPreview: a pending approval's preview can be replaced (the card
// asks again when the blast radius changed); a decided one's cannot.
func testSetPreview(t *testing.T, open func() approval.Store) {
	ctx := context.Background()
	s, other := open(), open()
	a := create(t, s, Sample("preview-pending"))
	fresh := &tools.Preview{Summary: "3 paths match", Items: []string{"a", "b", "c"}, Total: 3}
	got, err := other.SetPreview(ctx, a.ID, fresh)
	if err != nil {
		t.Fatalf("SetPreview on a pending approval: %v", err)
	}
	if diff := cmp.Diff(fresh, got.Preview); diff != "" {
		t.Errorf("SetPreview returned the preview (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(fresh, get(t, s, a.ID).Preview); diff != "" {
		t.Errorf("Get after SetPreview shows the preview (-want +got):\n%s", diff)
	}
	if got := get(t, s, a.ID); got.State != approval.Pending || got.ArgsHash != a.ArgsHash {
		t.Errorf("SetPreview changed more than the preview: %+v", got)
	}
	d := reach(t, s, "preview-approved", approval.Approved)
	if _, err := other.SetPreview(ctx, d.ID, fresh); !errors.Is(err, approval.ErrConflict) {
		t.Errorf("SetPreview on an approved approval = %v, want ErrConflict", err)
	}
	if got := get(t, s, d.ID); cmp.Diff(d.Preview, got.Preview) != "" {
		t.Errorf("a refused SetPreview changed the preview to %+v", got.Preview)
	}
}
