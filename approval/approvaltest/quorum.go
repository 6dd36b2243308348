package approvaltest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/countersign/countersign/approval"
)

// RunQuorum runs the contract suite of approval.Quorum (N-of-M approvals)
// against the stores open gives; each must implement approval.Quorum. A
// store's own tests call it beside Run.
func RunQuorum(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(*testing.T, func() approval.Quorum)
	}{
		{"Count", testQuorumCount},
		{"NeedFixedByFirstVote", testQuorumNeedFixed},
		{"SelfApproval", testQuorumSelf},
		{"CancelEnds", testQuorumCancel},
		{"Late", testQuorumLate},
		{"Invalid", testQuorumInvalid},
		{"Unsettled", testQuorumUnsettled},
		{"ResetVotes", testQuorumReset},
		{"Race", testQuorumRace},
		{"RaceWithCancel", testQuorumRaceCancel},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ns := "quorum-" + tc.name + "-" + randHex(6)
			tc.fn(t, func() approval.Quorum { return open(t, ns) })
		})
	}
}

// quorumStore is what the suite needs of a store: Quorum and the rest.
type quorumStore interface {
	approval.Store
	approval.Quorum
}

func qstore(t *testing.T, q approval.Quorum) quorumStore {
	t.Helper()
	s, ok := q.(quorumStore)
	if !ok {
		t.Fatalf("%T is not an approval.Store", q)
	}
	return s
}

func vote(id string, at time.Time, need int) approval.Vote {
	return approval.Vote{By: approval.User{ID: id, Name: "name-" + id}, At: at, Need: need}
}

func approve(t *testing.T, q approval.Quorum, id string, v approval.Vote) approval.ApproveResult {
	t.Helper()
	r, err := q.Approve(context.Background(), id, v)
	if err != nil {
		t.Fatalf("Approve(%s by %s): %v", id, v.By.ID, err)
	}
	if r.Approval == nil || r.Approval.ID != id {
		t.Fatalf("Approve(%s by %s): result without the record: %+v", id, v.By.ID, r)
	}
	return r
}

// voters returns the ids of p's votes in order.
func voters(p approval.Progress) []string {
	out := []string{}
	for _, v := range p.Votes {
		out = append(out, v.By.ID)
	}
	return out
}

func testQuorumCount(t *testing.T, open func() approval.Quorum) {
	ctx := context.Background()
	q := open()
	s := qstore(t, q)
	a := create(t, s, Sample("quorum-count"))
	at := t0.Add(time.Minute)

	p, err := q.Progress(ctx, a.ID)
	if err != nil {
		t.Fatalf("Progress before any vote: %v", err)
	}
	if p.Have() != 0 || p.Need != 0 {
		t.Errorf("Progress before any vote = %+v, want none", p)
	}

	// The requester (Sample's U1) never counts.
	r := approve(t, q, a.ID, vote("U1", at, 2))
	if r.Counted || r.Won || r.Refused != approval.RefusedRequester || !errors.Is(r.Err(), approval.ErrRequesterVote) {
		t.Errorf("requester's vote = counted %v won %v refused %q err %v, want refused as requester", r.Counted, r.Won, r.Refused, r.Err())
	}
	if r.Progress.Have() != 0 || r.Approval.State != approval.Pending {
		t.Errorf("after the requester's vote: %d votes, state %s; want 0, pending", r.Progress.Have(), r.Approval.State)
	}

	r = approve(t, q, a.ID, vote("bob", at, 2))
	if !r.Counted || r.Won || r.Refused != approval.RefusedNone || r.Err() != nil {
		t.Errorf("bob's vote = counted %v won %v refused %q, want counted only", r.Counted, r.Won, r.Refused)
	}
	if r.Approval.State != approval.Pending || r.Progress.Have() != 1 || r.Progress.Need != 2 || r.Progress.Left() != 1 {
		t.Errorf("after bob: state %s, progress %d of %d; want pending, 1 of 2", r.Approval.State, r.Progress.Have(), r.Progress.Need)
	}

	// The same person again, even with another name: refused, not counted.
	again := vote("bob", at.Add(time.Second), 2)
	again.By.Name = "Robert"
	r = approve(t, q, a.ID, again)
	if r.Counted || r.Won || r.Refused != approval.RefusedRepeat || !errors.Is(r.Err(), approval.ErrRepeatVote) {
		t.Errorf("bob's second vote = counted %v won %v refused %q err %v, want refused as a repeat", r.Counted, r.Won, r.Refused, r.Err())
	}
	if r.Progress.Have() != 1 {
		t.Errorf("bob's second vote made %d votes, want 1", r.Progress.Have())
	}
	if got := get(t, s, a.ID); got.State != approval.Pending {
		t.Fatalf("after one of two votes the state is %s, want pending", got.State)
	}
	if n, err := s.CountPending(ctx, a.Conversation.Platform, a.Conversation.Channel); err != nil || n != 1 {
		t.Errorf("pending count after one of two votes = %d, %v; want 1", n, err)
	}

	carol := vote("carol", at.Add(2*time.Second), 2)
	carol.Reason = "checked the migration"
	r = approve(t, q, a.ID, carol)
	if !r.Counted || !r.Won || r.Approval.State != approval.Approved {
		t.Fatalf("carol's vote = counted %v won %v state %s, want the winning vote to approved", r.Counted, r.Won, r.Approval.State)
	}
	// The winning vote leaves the pending index in the same step, as
	// Decide does: !pending and the count must not show it.
	if n, err := s.CountPending(ctx, a.Conversation.Platform, a.Conversation.Channel); err != nil || n != 0 {
		t.Errorf("pending count after the winning vote = %d, %v; want 0", n, err)
	}
	if r.Approval.DecidedBy == nil || r.Approval.DecidedBy.ID != "carol" || !r.Approval.DecidedAt.Equal(carol.At) || r.Approval.Reason != carol.Reason {
		t.Errorf("decided by %v at %v reason %q, want carol at %v with her reason", r.Approval.DecidedBy, r.Approval.DecidedAt, r.Approval.Reason, carol.At)
	}
	want := approval.Progress{Need: 2, Votes: []approval.Vote{
		{By: approval.User{ID: "bob", Name: "name-bob"}, At: at},
		{By: approval.User{ID: "carol", Name: "name-carol"}, At: carol.At, Reason: carol.Reason},
	}}
	if diff := cmp.Diff(want, r.Progress, approvalOpts); diff != "" {
		t.Errorf("winning progress (-want +got):\n%s", diff)
	}
	got, err := q.Progress(ctx, a.ID)
	if err != nil {
		t.Fatalf("Progress: %v", err)
	}
	if diff := cmp.Diff(want, got, approvalOpts); diff != "" {
		t.Errorf("Progress after the count (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(r.Approval, get(t, s, a.ID), approvalOpts); diff != "" {
		t.Errorf("Get after the winning vote differs from its record (-vote +get):\n%s", diff)
	}

	// After the count: refused as decided, nothing changes.
	r = approve(t, q, a.ID, vote("dave", at.Add(3*time.Second), 2))
	if r.Counted || r.Won || r.Refused != approval.RefusedDecided || !errors.Is(r.Err(), approval.ErrConflict) {
		t.Errorf("dave's late vote = counted %v won %v refused %q err %v, want refused as decided", r.Counted, r.Won, r.Refused, r.Err())
	}
	if r.Approval.DecidedBy == nil || r.Approval.DecidedBy.ID != "carol" || r.Progress.Have() != 2 {
		t.Errorf("dave was told decided by %v with %d votes, want carol, 2", r.Approval.DecidedBy, r.Progress.Have())
	}
	// A Decide after the count loses, as after any decision.
	d, err := s.Decide(ctx, a.ID, approval.Cancelled, approval.User{ID: "erin"}, "", at.Add(4*time.Second))
	if err != nil || d.Won {
		t.Errorf("Decide after the count: won %v err %v, want lost", d.Won, err)
	}
	// The winner carries it through as after Decide: exactly one claim.
	if _, ok, err := s.Claim(ctx, a.ID, at.Add(5*time.Second)); err != nil || !ok {
		t.Fatalf("Claim after the count: ok %v err %v", ok, err)
	}
	if _, ok, err := s.Claim(ctx, a.ID, at.Add(6*time.Second)); err != nil || ok {
		t.Errorf("second Claim: ok %v err %v, want refused", ok, err)
	}
}

func testQuorumNeedFixed(t *testing.T, open func() approval.Quorum) {
	q := open()
	s := qstore(t, q)
	a := create(t, s, Sample("quorum-need"))
	at := t0.Add(time.Minute)
	approve(t, q, a.ID, vote("bob", at, 3))
	// A later vote asking for fewer (a reload, another replica) does not
	// lower the bar; nor does one asking for more raise it.
	if r := approve(t, q, a.ID, vote("carol", at, 1)); r.Won || r.Progress.Need != 3 {
		t.Errorf("a vote asking for 1 after a first asking for 3: won %v need %d, want not won, 3", r.Won, r.Progress.Need)
	}
	if r := approve(t, q, a.ID, vote("dave", at, 9)); !r.Won || r.Approval.State != approval.Approved || r.Progress.Need != 3 {
		t.Errorf("third vote of 3: won %v state %s need %d, want the win at 3", r.Won, r.Approval.State, r.Progress.Need)
	}
}

func testQuorumSelf(t *testing.T, open func() approval.Quorum) {
	q := open()
	s := qstore(t, q)
	a := create(t, s, Sample("quorum-self"))
	v := vote("U1", t0.Add(time.Minute), 1)
	v.SelfApproval = true
	r := approve(t, q, a.ID, v)
	if !r.Won || r.Approval.State != approval.Approved || r.Approval.DecidedBy.ID != "U1" {
		t.Errorf("requester's vote with self-approval: won %v state %s, want approved by U1", r.Won, r.Approval.State)
	}
}

func testQuorumCancel(t *testing.T, open func() approval.Quorum) {
	ctx := context.Background()
	q := open()
	s := qstore(t, q)
	a := create(t, s, Sample("quorum-cancel"))
	at := t0.Add(time.Minute)
	approve(t, q, a.ID, vote("bob", at, 2))
	d, err := s.Decide(ctx, a.ID, approval.Cancelled, approval.User{ID: "carol"}, "wrong table", at.Add(time.Second))
	if err != nil || !d.Won || d.Approval.State != approval.Cancelled {
		t.Fatalf("one cancel after one of two votes: won %v state %v err %v, want it cancelled", d.Won, d.Approval, err)
	}
	r := approve(t, q, a.ID, vote("dave", at.Add(2*time.Second), 2))
	if r.Won || r.Counted || r.Refused != approval.RefusedDecided || r.Approval.State != approval.Cancelled {
		t.Errorf("a vote after the cancel: won %v counted %v refused %q state %s, want refused, cancelled", r.Won, r.Counted, r.Refused, r.Approval.State)
	}
	p, err := q.Progress(ctx, a.ID)
	if err != nil || !slices.Equal(voters(p), []string{"bob"}) {
		t.Errorf("Progress after the cancel = %v, %v; want bob's vote kept", voters(p), err)
	}
}

func testQuorumLate(t *testing.T, open func() approval.Quorum) {
	q := open()
	s := qstore(t, q)
	a := create(t, s, Sample("quorum-late"))
	approve(t, q, a.ID, vote("bob", t0.Add(time.Minute), 2))
	// At the deadline, as Decide: the approval expires, the vote does
	// not count.
	r := approve(t, q, a.ID, vote("carol", a.ExpiresAt, 2))
	if !r.Won || r.Counted || r.Approval.State != approval.Expired || r.Progress.Have() != 1 {
		t.Errorf("a vote at the deadline: won %v counted %v state %s votes %d, want it expired by this call, 1 vote", r.Won, r.Counted, r.Approval.State, r.Progress.Have())
	}
	// A late first vote also expires it; the count of a fresh one is 0.
	b := create(t, s, Sample("quorum-late-first"))
	r = approve(t, q, b.ID, vote("bob", b.ExpiresAt.Add(time.Second), 1))
	if !r.Won || r.Counted || r.Approval.State != approval.Expired || r.Progress.Have() != 0 {
		t.Errorf("a late first vote of 1: won %v counted %v state %s votes %d, want expired, 0 votes", r.Won, r.Counted, r.Approval.State, r.Progress.Have())
	}
}

func testQuorumInvalid(t *testing.T, open func() approval.Quorum) {
	ctx := context.Background()
	q := open()
	s := qstore(t, q)
	a := create(t, s, Sample("quorum-invalid"))
	at := t0.Add(time.Minute)
	for _, tc := range []struct {
		name string
		v    approval.Vote
	}{
		{"no voter", approval.Vote{At: at, Need: 1}},
		{"need 0", vote("bob", at, 0)},
		{"need negative", vote("bob", at, -2)},
		{"no time", vote("bob", time.Time{}, 1)},
	} {
		if _, err := q.Approve(ctx, a.ID, tc.v); !errors.Is(err, approval.ErrInvalid) {
			t.Errorf("%s: err %v, want ErrInvalid", tc.name, err)
		}
	}
	if p, err := q.Progress(ctx, a.ID); err != nil || p.Have() != 0 {
		t.Errorf("after invalid votes: %d votes, err %v; want none", p.Have(), err)
	}
	if _, err := q.Approve(ctx, "nope-"+randHex(4), vote("bob", at, 1)); !errors.Is(err, approval.ErrNotFound) {
		t.Errorf("Approve of a missing approval: %v, want ErrNotFound", err)
	}
	if _, err := q.Progress(ctx, "nope-"+randHex(4)); !errors.Is(err, approval.ErrNotFound) {
		t.Errorf("Progress of a missing approval: %v, want ErrNotFound", err)
	}
}

func testQuorumUnsettled(t *testing.T, open func() approval.Quorum) {
	ctx := context.Background()
	q := open()
	s := qstore(t, q)
	a := create(t, s, Sample("quorum-unsettled"))
	b := create(t, s, Sample("quorum-unsettled-half"))
	at := t0.Add(time.Minute)
	approve(t, q, a.ID, vote("bob", at, 2))
	approve(t, q, a.ID, vote("carol", at, 2))
	approve(t, q, b.ID, vote("bob", at, 2))
	// A carrier that died after the winning vote is found by recovery,
	// as after a winning Decide; a half-counted approval is not decided.
	recs, err := s.Unsettled(ctx, at, at, 0)
	if err != nil {
		t.Fatalf("Unsettled: %v", err)
	}
	if got := ids(recs); !slices.Equal(got, []string{a.ID}) {
		t.Errorf("Unsettled = %v, want only the counted approval %s", got, a.ID)
	}
}

func testQuorumReset(t *testing.T, open func() approval.Quorum) {
	ctx := context.Background()
	q := open()
	s := qstore(t, q)
	a := create(t, s, Sample("quorum-reset"))
	at := t0.Add(time.Minute)
	if n, err := q.ResetVotes(ctx, a.ID); err != nil || n != 0 {
		t.Errorf("ResetVotes with no votes = %d, %v; want 0", n, err)
	}
	approve(t, q, a.ID, vote("bob", at, 2))
	// The blast radius changed: bob saw another one; his vote goes.
	if n, err := q.ResetVotes(ctx, a.ID); err != nil || n != 1 {
		t.Fatalf("ResetVotes = %d, %v; want 1", n, err)
	}
	if p, err := q.Progress(ctx, a.ID); err != nil || p.Have() != 0 || p.Need != 2 {
		t.Errorf("Progress after ResetVotes = %+v, %v; want no votes, need 2 kept", p, err)
	}
	// bob may approve again, and it takes two again.
	if r := approve(t, q, a.ID, vote("bob", at.Add(time.Second), 2)); !r.Counted || r.Won {
		t.Errorf("bob's vote after the reset: counted %v won %v, want counted only", r.Counted, r.Won)
	}
	r := approve(t, q, a.ID, vote("carol", at.Add(2*time.Second), 1))
	if !r.Won || !slices.Equal(voters(r.Progress), []string{"bob", "carol"}) {
		t.Errorf("carol's vote: won %v votes %v, want the win with bob and carol", r.Won, voters(r.Progress))
	}
	// Decided: the votes are its audit trail and stay.
	if _, err := q.ResetVotes(ctx, a.ID); !errors.Is(err, approval.ErrConflict) {
		t.Errorf("ResetVotes of an approved approval: %v, want ErrConflict", err)
	}
	if p, err := q.Progress(ctx, a.ID); err != nil || p.Have() != 2 {
		t.Errorf("Progress after a refused reset = %d votes, %v; want 2", p.Have(), err)
	}
	if _, err := q.ResetVotes(ctx, "nope-"+randHex(4)); !errors.Is(err, approval.ErrNotFound) {
		t.Errorf("ResetVotes of a missing approval: %v, want ErrNotFound", err)
	}
}

// testQuorumRace: many people approve at once, each twice, through many
// clients (replicas): exactly the first Need distinct votes count, exactly
// one of them wins, exactly one claim runs, and every counted vote is in
// the progress with who and when.
func testQuorumRace(t *testing.T, open func() approval.Quorum) {
	const (
		clients = 16
		people  = 24
		need    = 3
		rounds  = 20
	)
	qs := make([]approval.Quorum, clients)
	for i := range qs {
		qs[i] = open()
	}
	ctx := context.Background()
	for round := range rounds {
		a := create(t, qstore(t, qs[round%clients]), Sample(fmt.Sprint("quorum-race-", round)))
		var (
			start   = make(chan struct{})
			wg      sync.WaitGroup
			mu      sync.Mutex
			wins    int
			counted = map[string]time.Time{}
			refused = map[approval.Refusal]int{}
			claims  int
			errs    []error
		)
		for i := range 2 * people {
			wg.Go(func() {
				v := vote(fmt.Sprint("P", i%people), t0.Add(time.Minute+time.Duration(i)*time.Millisecond), need)
				q := qs[i%clients]
				<-start
				r, err := q.Approve(ctx, a.ID, v)
				var ok bool
				if err == nil {
					_, ok, err = qstore(t, q).Claim(ctx, a.ID, t0.Add(2*time.Minute))
				}
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
					return
				}
				if r.Won {
					wins++
				}
				if r.Counted {
					if _, dup := counted[v.By.ID]; dup {
						errs = append(errs, fmt.Errorf("%s counted twice", v.By.ID))
					}
					counted[v.By.ID] = v.At
				} else {
					refused[r.Refused]++
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
		if wins != 1 || claims != 1 || len(counted) != need {
			t.Fatalf("round %d: %d winners, %d claims, %d counted votes; want 1, 1, %d", round, wins, claims, len(counted), need)
		}
		if refused[approval.RefusedRequester] != 0 || refused[approval.RefusedRepeat]+refused[approval.RefusedDecided] != 2*people-need {
			t.Errorf("round %d: refusals %v, want %d repeats or decided", round, refused, 2*people-need)
		}
		p, err := qs[0].Progress(ctx, a.ID)
		if err != nil {
			t.Fatalf("round %d: Progress: %v", round, err)
		}
		got := map[string]time.Time{}
		for _, v := range p.Votes {
			got[v.By.ID] = v.At
		}
		if diff := cmp.Diff(counted, got, approvalOpts); diff != "" || p.Need != need {
			t.Errorf("round %d: progress need %d, votes (-counted +stored):\n%s", round, p.Need, diff)
		}
		final := get(t, qstore(t, qs[0]), a.ID)
		if final.State != approval.Running || final.DecidedBy == nil || final.DecidedBy.ID != p.Votes[need-1].By.ID {
			t.Errorf("round %d: final %s decided by %v, want running, decided by the last counted voter %s", round, final.State, final.DecidedBy, p.Votes[need-1].By.ID)
		}
	}
}

// testQuorumRaceWithCancel: votes race one cancel; exactly one of them
// decides, and nothing is counted after the decision.
func testQuorumRaceCancel(t *testing.T, open func() approval.Quorum) {
	const (
		clients = 8
		people  = 6
		need    = 2
		rounds  = 30
	)
	qs := make([]approval.Quorum, clients)
	for i := range qs {
		qs[i] = open()
	}
	ctx := context.Background()
	outcomes := map[approval.State]int{}
	for round := range rounds {
		a := create(t, qstore(t, qs[round%clients]), Sample(fmt.Sprint("quorum-cancel-race-", round)))
		var (
			start = make(chan struct{})
			wg    sync.WaitGroup
			mu    sync.Mutex
			wins  []approval.State
			errs  []error
		)
		for i := range people + 1 {
			wg.Go(func() {
				q := qs[i%clients]
				at := t0.Add(time.Minute)
				<-start
				if i == people {
					d, err := qstore(t, q).Decide(ctx, a.ID, approval.Cancelled, approval.User{ID: "canceller"}, "", at)
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						errs = append(errs, err)
					} else if d.Won {
						wins = append(wins, d.Approval.State)
					}
					return
				}
				r, err := q.Approve(ctx, a.ID, vote(fmt.Sprint("P", i), at, need))
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
				} else if r.Won {
					wins = append(wins, r.Approval.State)
				}
			})
		}
		close(start)
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if len(wins) != 1 {
			t.Fatalf("round %d: winners %v, want exactly one", round, wins)
		}
		final := get(t, qstore(t, qs[0]), a.ID)
		p, err := qs[0].Progress(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		switch final.State {
		case approval.Approved:
			if p.Have() != need {
				t.Errorf("round %d: approved with %d votes, want %d", round, p.Have(), need)
			}
		case approval.Cancelled:
			if p.Have() >= need {
				t.Errorf("round %d: cancelled with %d votes counted, want fewer than %d", round, p.Have(), need)
			}
		default:
			t.Errorf("round %d: final state %s", round, final.State)
		}
		outcomes[final.State]++
	}
	t.Logf("%d rounds of %d votes racing a cancel: %v", rounds, people, outcomes)
}

// BenchApprove measures one vote that counts (the first of two) and one
// that wins (the second), on a fresh approval each time: the path of a
// two-person approval before its run. The approvals are created outside
// the timer. It reports the median and the 99th percentile of the two
// votes together as median-µs and p99-µs.
func BenchApprove(b *testing.B, s approval.Store) {
	benchEach(b, s, "bench-quorum", func(ctx context.Context, id string, at time.Time) {
		if r, err := s.Approve(ctx, id, vote("bob", at, 2)); err != nil || !r.Counted || r.Won {
			b.Fatalf("first vote = %+v, %v", r, err)
		}
		if r, err := s.Approve(ctx, id, vote("carol", at, 2)); err != nil || !r.Won {
			b.Fatalf("second vote = %+v, %v", r, err)
		}
	})
}
