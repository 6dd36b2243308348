package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
)

// This file is the life of an approval with its card, in the order it
// happens; the turn waits on its cards (suspend), a cancellation enters
// at Cancel (first in the file, with won, which both share), an approval
// at Approve, an edit at Edit (edit.go), the sweeper's expiry at Sweep
// (sweep.go):
//
//	suspend    the turn is stored with its pending approvals, and their
//	           cards are posted; any replica can resume it from here
//	Approve    a person's vote (the bot has checked they may give it)
//	reask      the blast radius again (run.go: rebind, preview);
//	           changed → the card asks again
//	store      Approve counts the vote; the one that reaches the count
//	           moves pending → approved, exactly once (Cancel: pending →
//	           cancelled; expiry: → expired); each is audited (run.go: audit)
//	carryOut   the winner carries it through:
//	execute      store Claim: approved → running, exactly once
//	runApproved  the tool runs the stored call (run.go; Stop can cut it
//	             short); the run is audited
//	finish       store Finish: running → done | failed; the card shows it
//	resolve    the turn learns the result and resumes on its last decision
//	           (resolve, resume, at the end), on whichever replica
//	           recorded it
//
// A process that dies between two steps leaves the approval unsettled;
// Sweep (sweep.go) finishes the job on any replica, never running a call
// late or twice.

// suspend stores the turn with its pending approvals and posts their
// cards. From here on any replica can resume the turn. h is the caller's
// hold on conv (a model turn's; nil for a direct command).
func (a *Agent) suspend(ctx context.Context, h *hold, conv approval.Conversation, turnID string, st turnState, cards []*approval.Approval) error {
	state, err := json.Marshal(st)
	if err != nil {
		a.cancelAll(ctx, cards, "the turn could not be saved")
		return a.fail(ctx, a.out(h), conv, storeErrorText, fmt.Errorf("encode turn %s: %w", turnID, err))
	}
	t := &approval.Turn{ID: turnID, Conversation: conv, State: state, CreatedAt: a.now()}
	for _, ap := range cards {
		t.Pending = append(t.Pending, ap.ID)
	}
	if err := a.store.SaveTurn(ctx, t); err != nil {
		a.cancelAll(ctx, cards, "the turn could not be saved")
		return a.fail(ctx, a.out(h), conv, storeErrorText, fmt.Errorf("save turn %s: %w", turnID, err))
	}
	for _, ap := range cards {
		a.post(ctx, h, ap)
	}
	// A decision made between Create and SaveTurn (someone quick with
	// !pending) found no turn to resolve; resolve it here. Resolve is
	// idempotent, so a decision that did resolve loses nothing.
	for _, ap := range cards {
		cur, err := a.store.Get(ctx, ap.ID)
		if err != nil {
			a.log.ErrorContext(ctx, "reading a new approval back", append(logAttrs(ap), "error", err)...)
			continue
		}
		if cur.State.Final() {
			if err := a.resolve(ctx, cur, h); err != nil {
				a.log.ErrorContext(ctx, "telling a turn of an early decision", append(logAttrs(cur), "error", err)...)
			}
		}
	}
	return nil
}

// post posts the card of a new approval and records its reference. An
// approval whose card cannot be posted is cancelled: nobody could see it.
// h is the hold of the turn whose card it is.
func (a *Agent) post(ctx context.Context, h *hold, ap *approval.Approval) {
	ref, err := a.sink.PostCard(ctx, ap)
	if err != nil {
		a.log.ErrorContext(ctx, "posting an approval card", append(logAttrs(ap), "error", err)...)
		dec, derr := a.store.Decide(ctx, ap.ID, approval.Cancelled, systemUser, "the approval card could not be posted", a.now())
		if derr != nil {
			a.log.ErrorContext(ctx, "cancelling an approval without a card", append(logAttrs(ap), "error", derr)...)
			return
		}
		if dec.Won {
			a.carryOut(ctx, dec.Approval, h)
		}
		return
	}
	if err := a.store.SetMessageRef(ctx, ap.ID, ref); err != nil {
		a.log.ErrorContext(ctx, "recording a card's reference", append(logAttrs(ap), "ref", ref, "error", err)...)
	}
	ap.MessageRef = ref
}

// cancelAll cancels approvals whose turn could not be kept; nothing will
// resume them, so nothing may run them.
func (a *Agent) cancelAll(ctx context.Context, aps []*approval.Approval, reason string) {
	for _, ap := range aps {
		if _, err := a.store.Decide(ctx, ap.ID, approval.Cancelled, systemUser, reason, a.now()); err != nil {
			a.log.ErrorContext(ctx, "cancelling an orphaned approval", append(logAttrs(ap), "error", err)...)
		}
	}
}

// ErrNotStarted is wrapped by Approve's error when a person's approval was
// recorded but the call could not be started (the store failed to claim or
// to refuse it): it did not run, and a sweep later ends it as not run.
var ErrNotStarted = errors.New("the approved call could not be started")

// Cancel records a person's cancellation of a waiting call (the caller
// has already checked that this person may cancel it): the card shows it,
// and the turn learns it (the model gets a cancelled result), resuming
// when it was the last pending call. A second or late decision changes
// nothing and returns Won=false with the winner's record. An approval past
// its deadline expires instead. Every approval goes through Approve.
func (a *Agent) Cancel(ctx context.Context, id string, by approval.User, reason string) (approval.DecideResult, error) {
	a.busy.add()
	defer a.busy.done()
	dec, err := a.store.Decide(ctx, id, approval.Cancelled, by, reason, a.now())
	if err != nil {
		return approval.DecideResult{}, fmt.Errorf("cancel approval %s: %w", id, err)
	}
	rec := dec.Approval
	outcome, detail := approval.Outcome(rec.State), reason
	if !dec.Won {
		outcome, detail = approval.OutcomeLost, "already "+string(rec.State)
		if rec.DecidedBy != nil {
			detail += " by " + rec.DecidedBy.ID
		}
	}
	auditErr := a.audit(ctx, approval.Event{
		Kind: approval.KindClick, Actor: by.ID, ApprovalID: id, Tool: rec.Tool, Operation: a.operation(rec.Tool, rec.Args),
		Decision: approval.DecisionCancel, Outcome: outcome, Channel: rec.Conversation.Channel, Detail: detail,
	})
	if !dec.Won {
		return dec, nil
	}
	return a.won(ctx, rec, auditErr)
}

// won carries through a decision this agent won (a Cancel, or the last
// vote of an Approve): an expiry is audited, an approval whose click could
// not be audited ends unrun, and the rest is carryOut.
func (a *Agent) won(ctx context.Context, rec *approval.Approval, auditErr error) (approval.DecideResult, error) {
	ctx, span := a.traceDecision(ctx, rec) // trace.go: joins the card's turn
	defer span.End()
	id := rec.ID
	switch {
	case rec.State == approval.Expired:
		a.auditExpiry(ctx, rec)
	case rec.State == approval.Approved && auditErr != nil:
		rec = a.endUnrun(ctx, rec, auditFailed())
		if rec.State == approval.Approved {
			// Not even refused (the store failed too): it must not run
			// here. It stays unsettled, and a sweep ends it as not run.
			return approval.DecideResult{Approval: rec, Won: true}, fmt.Errorf("approval %s: %w", id, ErrNotStarted)
		}
	}
	rec = a.carryOut(ctx, rec, nil)
	if rec.State == approval.Approved {
		// Approved, but the claim failed: nothing ran (see recover).
		return approval.DecideResult{Approval: rec, Won: true}, fmt.Errorf("approval %s: %w", id, ErrNotStarted)
	}
	return approval.DecideResult{Approval: rec, Won: true}, nil
}

// ApproveResult is what Approve reports: the decision (Won, Reasked, the
// record), and the vote's count.
type ApproveResult struct {
	approval.DecideResult
	// Counted: the vote was recorded; Progress is the count after it.
	Counted  bool
	Progress approval.Progress
	// Refused says why the vote did not count (approval.Refused…).
	Refused approval.Refusal
	// Reset is how many earlier approvals were forgotten because the
	// blast radius changed under the card (with Reasked).
	Reset int
}

// Approve counts one person's approval of a pending call (the caller has
// checked that this person may approve it). Every approval goes through
// the store's count (approval.Quorum), one needed or several: the vote
// that reaches the count wins and carries the call through (claims and
// runs it exactly once, updating the card: running with progress, then
// done or failed; then, when it was the last pending call of a suspended
// turn, resumes that turn); an earlier one is counted and the card redrawn with
// the progress; a refused one (the requester, a repeat, too late) changes
// nothing. Before every vote the blast radius is computed again; when it
// changed, the card shows the new one, the votes so far are forgotten
// (they approved another radius), and nothing is counted. Each vote is
// audited with who and when.
func (a *Agent) Approve(ctx context.Context, id string, v approval.Vote) (ApproveResult, error) {
	a.busy.add()
	defer a.busy.done()
	q := a.store // the count of approvals is part of every approval.Store
	if v.At.IsZero() {
		v.At = a.now()
	}
	v.Need = max(v.Need, 1)
	res, err := a.reask(ctx, id, v.By)
	if err != nil {
		return ApproveResult{}, err
	}
	if res.Reasked {
		out := ApproveResult{DecideResult: res}
		n, err := q.ResetVotes(ctx, id)
		if err != nil && !errors.Is(err, approval.ErrConflict) {
			a.log.ErrorContext(ctx, "forgetting the votes of an approval whose blast radius changed", "approval", id, "error", err)
			return out, fmt.Errorf("reset the votes of approval %s: %w", id, err)
		}
		out.Reset = n
		if n > 0 {
			a.updateCard(ctx, res.Approval, nil) // the count on the card starts again
		}
		return out, nil
	}
	r, err := q.Approve(ctx, id, v)
	if err != nil {
		return ApproveResult{}, fmt.Errorf("approve approval %s: %w", id, err)
	}
	out := ApproveResult{
		DecideResult: approval.DecideResult{Approval: r.Approval, Won: r.Won},
		Counted:      r.Counted, Progress: r.Progress, Refused: r.Refused,
	}
	op := ""
	if r.Approval != nil {
		op = a.operation(r.Approval.Tool, r.Approval.Args)
	}
	auditErr := a.audit(ctx, approval.VoteEvent(r, v, op))
	switch {
	case r.Won:
		dec, err := a.won(ctx, r.Approval, auditErr)
		out.DecideResult = dec
		return out, err
	case r.Counted:
		a.updateCard(ctx, r.Approval, nil) // the progress, in place
	}
	return out, nil
}

// reask computes the blast radius of pending approval id again before
// anyone may approve it. When it changed, nothing is decided: the card
// shows the new preview and waits again, and the click is audited as
// reasked.
func (a *Agent) reask(ctx context.Context, id string, by approval.User) (approval.DecideResult, error) {
	rec, err := a.store.Get(ctx, id)
	if err != nil {
		return approval.DecideResult{}, fmt.Errorf("read approval %s: %w", id, err)
	}
	if rec.State != approval.Pending {
		return approval.DecideResult{}, nil // Decide tells who was first
	}
	updated, why, err := a.rebind(ctx, rec)
	if err != nil {
		// Fail closed: what the person saw may no longer hold, and it
		// cannot be shown again; nothing is decided.
		return approval.DecideResult{}, err
	}
	if why == "" {
		return approval.DecideResult{}, nil
	}
	_ = a.audit(ctx, approval.Event{
		Kind: approval.KindClick, Actor: by.ID, ApprovalID: id, Tool: rec.Tool, Operation: a.operation(rec.Tool, rec.Args),
		Decision: approval.DecisionApprove, Outcome: approval.OutcomeReasked, Channel: rec.Conversation.Channel, Detail: why,
	})
	a.updateCard(ctx, updated, nil)
	return approval.DecideResult{Approval: updated, Reasked: true, Changed: why}, nil
}

// carryOut carries a decision this agent won through: the card shows it, an
// approved call runs, and the turn learns of it, resuming when this was its
// last pending call. It returns the record as it ends up. h is the
// caller's hold on the turn's conversation: a turn's own (post, a card
// that could not be posted), or nil (a click, a sweep).
func (a *Agent) carryOut(ctx context.Context, rec *approval.Approval, h *hold) *approval.Approval {
	if rec.State != approval.Approved {
		a.updateCard(ctx, rec, nil)
	} else {
		// Claimed before the card is redrawn: a slow chat platform must
		// not hold the run back past the time a sweep would take it for
		// abandoned (RecoveryGrace).
		var ran bool
		rec, ran = a.execute(ctx, rec)
		if !ran {
			return rec // the claimant resolves the turn when it finishes
		}
		if !rec.State.Final() {
			return rec // its outcome is not recorded: a sweep ends it
		}
	}
	// The turn is told even when a shutdown cancelled ctx to interrupt
	// the run: otherwise the model and the thread would learn nothing
	// until another replica swept, or never with one replica.
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tellTimeout)
	defer cancel()
	if err := a.resolve(tctx, rec, h); err != nil {
		a.log.ErrorContext(ctx, "telling a turn of a decision", append(logAttrs(rec), "error", err)...)
	}
	return rec
}

// tellTimeout bounds telling a turn of its decision (and the model's
// answer to it) once the work's own context has ended.
const tellTimeout = 30 * time.Second

// recordTimeout bounds the writes that record a run's outcome after the
// run's own context has ended.
const recordTimeout = 10 * time.Second

// execute claims an approved call and runs it. ran is false when someone
// else holds the claim or the store failed; the call then did not run here.
func (a *Agent) execute(ctx context.Context, rec *approval.Approval) (*approval.Approval, bool) {
	claimed, ok, err := a.store.Claim(ctx, rec.ID, a.now())
	if err != nil {
		a.log.ErrorContext(ctx, "claiming an approved call", append(logAttrs(rec), "error", err)...)
		a.updateCard(ctx, rec, nil) // decided: the buttons go
		return rec, false
	}
	if !ok {
		return claimed, false
	}
	a.runs.recording.add()
	defer a.runs.recording.done()
	// The lease's clock started at the claim: the heartbeat starts with
	// it, before anything that may take time (the card's update may wait
	// out a platform's rate limits), and beats until the outcome is
	// recorded, so that no sweep takes this run for dead while it runs or
	// while its outcome waits for the store.
	stop := a.heartbeat(context.WithoutCancel(ctx), claimed)
	defer stop()
	a.updateCard(ctx, claimed, nil)
	res := func() tools.Result {
		runCtx, done := a.runs.start(ctx, claimed)
		defer done()
		// At most MaxRuns at once; this one waits its turn, claimed and
		// beating, and can be stopped while it waits.
		leave, err := a.runGate.Enter(runCtx, 0, nil)
		if err != nil {
			if by, stopped := stoppedBy(runCtx); stopped {
				return tools.NotRun(tools.StatusError, "Stopped by "+by.Display()+" while it waited for a free place to run, before it started")
			}
			return tools.NotRun(tools.StatusError, "Countersign was stopping before a place to run it came free, so it did not start")
		}
		defer leave()
		// Immediately before the process starts: is the claim still
		// this run's? A replica that judged it dead has ended it, and
		// then it must not start at all.
		if err := a.stillClaimed(ctx, claimed); err != nil {
			a.log.ErrorContext(ctx, "a claimed call is no longer this run's: not starting it", append(logAttrs(claimed), "error", err)...)
			return claimLost(err)
		}
		res := a.runApproved(runCtx, claimed)
		if by, stopped := stoppedBy(runCtx); stopped {
			res = stoppedRun(by, res)
		}
		return res
	}()
	res = withApproverReason(claimed, res)
	// A shutdown may have cancelled ctx to interrupt the run; the outcome
	// must still be recorded, or the record would stay running for good.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	by := systemUser
	if claimed.DecidedBy != nil {
		by = *claimed.DecidedBy
	}
	a.auditExecution(rctx, by, claimed.ID, claimed.Conversation.Channel, claimed.Tool, a.operation(claimed.Tool, claimed.Args), approval.DecisionApproved, res)
	return a.finishRetrying(ctx, claimed, res), true
}

// errClaimLost: the record of a claimed call is no longer running.
var errClaimLost = errors.New("the call's record is no longer running")

// stillClaimed reads the record of a claimed call and reports an error
// unless it is still running: another replica may have ended it as
// interrupted, or the store cannot say (fail closed: it does not start).
func (a *Agent) stillClaimed(ctx context.Context, claimed *approval.Approval) error {
	ctx, cancel := context.WithTimeout(ctx, recordTimeout)
	defer cancel()
	cur, err := a.store.Get(ctx, claimed.ID)
	if err != nil {
		return fmt.Errorf("read approval %s before its run: %w", claimed.ID, err)
	}
	if cur.State != approval.Running || !cur.EndedAt.IsZero() {
		return fmt.Errorf("approval %s is %s: %w", claimed.ID, cur.State, errClaimLost)
	}
	return nil
}

// claimLost is the result of a claimed call that was not started because
// its claim could not be confirmed.
func claimLost(err error) tools.Result {
	r := tools.NotRun(tools.StatusError, "Countersign did not start the operation: just before it would have, it could not confirm that this run still held the call (another replica may have taken it for dead, or the state store did not answer)")
	if errors.Is(err, errClaimLost) {
		r.Error = "the call was ended elsewhere before it started"
	} else {
		r.Error = "the state store did not answer"
	}
	return r
}

// finishRetry bounds the pause between two tries of recording an outcome.
var finishRetry = struct{ first, most time.Duration }{time.Second, 10 * time.Second}

// finishRetrying records the outcome of a run that happened, trying again
// while the store fails, until it is recorded, another replica has ended
// the record, or ctx (the bot's work) is over; the heartbeat goes on
// meanwhile (the caller's). A run that ended while the store was down is
// thus recorded, by its own process, with its own result, once the store
// is back; nothing is made up in its place.
func (a *Agent) finishRetrying(ctx context.Context, claimed *approval.Approval, res tools.Result) *approval.Approval {
	pause := finishRetry.first
	for {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
		fin, err := a.record(rctx, claimed, res)
		if err == nil {
			a.updateCard(rctx, fin, nil)
			cancel()
			return fin
		}
		cancel()
		if ctx.Err() != nil {
			a.log.ErrorContext(ctx, "gave up recording a run's outcome: the bot is stopping; a sweep will end it as interrupted",
				append(logAttrs(claimed), "status", string(res.Status), "error", err)...)
			return claimed
		}
		a.log.WarnContext(ctx, "recording a run's outcome failed; trying again", append(logAttrs(claimed), "error", err, "in", pause)...)
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
		pause = min(2*pause, finishRetry.most)
	}
}

// record writes the outcome of a claimed call once; a record another
// replica ended first is read back and returned as it stands.
func (a *Agent) record(ctx context.Context, claimed *approval.Approval, res tools.Result) (*approval.Approval, error) {
	to := approval.Failed
	if res.Status == tools.StatusOK {
		to = approval.Done
	}
	fin, err := a.store.Finish(ctx, claimed.ID, to, res, a.now())
	if errors.Is(err, approval.ErrConflict) {
		a.log.WarnContext(ctx, "a run's outcome came after another replica ended its record", append(logAttrs(claimed), "status", string(res.Status))...)
		return a.store.Get(ctx, claimed.ID)
	}
	return fin, err
}

// heartbeat tells the store, every beatEvery until stop is called,
// that the run of rec is alive, so that no sweep takes it for interrupted.
func (a *Agent) heartbeat(ctx context.Context, rec *approval.Approval) (stop func()) {
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(a.beatEvery())
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if err := a.store.Heartbeat(ctx, rec.ID, a.now()); err != nil {
					a.log.WarnContext(ctx, "recording a run's heartbeat", append(logAttrs(rec), "error", err)...)
				}
			}
		}
	}()
	return func() { close(done); <-ended }
}

// runApproved runs the call exactly as it was shown. It checks that the
// arguments are still the approved ones and that the policy does not now
// refuse them; the tool runs with its approved (not auto-run) fences.
func (a *Agent) runApproved(ctx context.Context, rec *approval.Approval) tools.Result {
	if decideOnly(rec) {
		return approvedUnrun(rec) // another agent runs it itself (call.go)
	}
	t, ok := a.tools.Lookup(rec.Tool)
	if !ok {
		return tools.NotStarted(fmt.Errorf("the tool %q is no longer configured", rec.Tool))
	}
	if approval.ArgsHash(rec.Args) != rec.ArgsHash {
		a.log.ErrorContext(ctx, "approved arguments changed in the store", logAttrs(rec)...)
		return tools.Denied(errors.New("the stored operation does not match the one that was approved"))
	}
	if v := a.policy.Assess(risk.Call{Tool: rec.Tool, Args: rec.Args, Channel: rec.Conversation.Channel}); v.Decision == risk.Block {
		return tools.Blocked(v.Reasons...)
	}
	progress := func(p tools.Progress) { a.updateCard(ctx, rec, &p) }
	return a.run(ctx, t, rec.Args, tools.RunOptions{Progress: progress})
}

// endUnrun ends an approved call without running it.
func (a *Agent) endUnrun(ctx context.Context, rec *approval.Approval, res tools.Result) *approval.Approval {
	claimed, ok, err := a.store.Claim(ctx, rec.ID, a.now())
	if err != nil || !ok {
		a.log.ErrorContext(ctx, "claiming an approved call to refuse it", append(logAttrs(rec), "claimed", ok, "error", err)...)
		return rec
	}
	return a.finish(ctx, claimed, res)
}

// finish records the outcome of a claimed call that did not run (nothing
// happened, so one try is enough: a failure leaves it to a sweep) and
// shows it on the card. A record that could not be written is shown as it
// stands, never as an outcome nobody recorded.
func (a *Agent) finish(ctx context.Context, claimed *approval.Approval, res tools.Result) *approval.Approval {
	fin, err := a.record(ctx, claimed, res)
	if err != nil {
		a.log.ErrorContext(ctx, "recording a call's outcome", append(logAttrs(claimed), "error", err)...)
		return claimed
	}
	a.updateCard(ctx, fin, nil)
	return fin
}

// updateCard redraws a card; a failure only costs the picture.
func (a *Agent) updateCard(ctx context.Context, rec *approval.Approval, p *tools.Progress) {
	if err := a.sink.UpdateCard(ctx, rec, p); err != nil {
		a.log.WarnContext(ctx, "updating an approval card", append(logAttrs(rec), "state", string(rec.State), "error", err)...)
	}
}

// withApproverReason tells the model the reason the approver gave, when
// one was asked for: it is part of what the person decided.
func withApproverReason(rec *approval.Approval, res tools.Result) tools.Result {
	if rec.Reason == "" || rec.DecidedBy == nil {
		return res
	}
	note := rec.DecidedBy.Display() + " approved it with the reason: " + rec.Reason
	if res.Message == "" {
		res.Message = note
	} else {
		res.Message += " " + note
	}
	return res
}

// resolve tells the turn that the final rec is decided, resumes it when
// this was its last pending call, and settles rec in the store. An error
// means the turn may not have been told; rec then stays unsettled and a
// later sweep tells it (Resolve is idempotent). h is the caller's hold on
// the turn's conversation, if it has one.
//
// An edit changes whose end tells the turn (edit.go): an approval
// replaced by an edit tells it nothing, since the call now waits for the
// new card; the new card's end resolves the call in the old one's place.
func (a *Agent) resolve(ctx context.Context, rec *approval.Approval, h *hold) error {
	last := false
	if rec.TurnID != "" {
		next, err := a.replacement(ctx, rec)
		if err != nil {
			return err
		}
		if next == nil {
			last, err = a.store.Resolve(ctx, rec.TurnID, callOf(rec))
			switch {
			case errors.Is(err, approval.ErrNotFound):
				a.log.InfoContext(ctx, "no suspended turn to resolve", append(logAttrs(rec), "turn", rec.TurnID)...)
			case err != nil:
				return fmt.Errorf("resolve turn %s with approval %s: %w", rec.TurnID, rec.ID, err)
			}
		}
	}
	// The turn knows: settled, before a resume that may take minutes.
	if err := a.store.Settle(ctx, rec.ID); err != nil {
		a.log.WarnContext(ctx, "settling an approval", append(logAttrs(rec), "error", err)...)
	}
	if last {
		if err := a.resume(ctx, rec.TurnID, rec, h); err != nil {
			a.log.ErrorContext(ctx, "resuming a turn", "turn", rec.TurnID, "error", err)
		}
	}
	return nil
}

// resume continues a turn whose calls are all decided: every result goes
// back in the original order, then the model loop goes on (or, for a
// direct command, the result is replied). The store's Resolve makes sure
// only one caller gets here; the turn is deleted first so nothing resumes
// it twice.
//
// last is the approval whose decision completed the turn, as its carrier
// knows it: its outcome is taken from there, so a run whose outcome the
// store failed to record still reaches the model as it happened. h is the
// caller's hold on the turn's conversation, if it has one: resuming from
// inside Handle, it does not wait for its own lock, and the words go where
// Handle's go.
func (a *Agent) resume(ctx context.Context, turnID string, last *approval.Approval, h *hold) error {
	t, err := a.store.GetTurn(ctx, turnID)
	if errors.Is(err, approval.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("load turn %s: %w", turnID, err)
	}
	if err := a.store.DeleteTurn(ctx, turnID); err != nil {
		a.log.WarnContext(ctx, "deleting a resumed turn", "turn", turnID, "error", err)
	}
	var st turnState
	if err := json.Unmarshal(t.State, &st); err != nil {
		return a.fail(ctx, a.out(h), t.Conversation, storeErrorText, fmt.Errorf("decode turn %s: %w", turnID, err))
	}
	for i, c := range st.Calls {
		if c.Result != nil {
			continue
		}
		res, final := a.callResult(ctx, c.ApprovalID, last) // edit.go: an edited call's result is its edit's
		st.Calls[i].Result = &res
		if final != nil && final.ID != c.ApprovalID {
			// Shown as what was asked for in the end; the model's own
			// message keeps what it wrote.
			st.Calls[i].Tool, st.Calls[i].Args = final.Tool, final.Args
		}
	}
	if st.Kind == kindCall {
		return nil // the agent that called reads its outcome (call.go)
	}
	if st.Kind == kindDirect {
		return a.replyResults(ctx, a.out(h), t.Conversation, st.Calls)
	}
	if st.Assistant == nil {
		return a.fail(ctx, a.out(h), t.Conversation, storeErrorText, fmt.Errorf("turn %s has no assistant message", turnID))
	}
	// A message in the same thread may be in a turn right now: wait for
	// it, or one of the two saves would overwrite the other.
	h, unlock := a.lockConversation(h, t.Conversation.Key())
	defer unlock()
	msgs, err := a.loadConversation(ctx, t.Conversation)
	if err != nil {
		return a.fail(ctx, h.out, t.Conversation, storeErrorText, err)
	}
	msgs = append(msgs, *st.Assistant)
	msgs = append(msgs, toolMessages(st.Calls)...)
	if a.model == nil {
		// The model went away (a restart without one): keep the results
		// and show them as direct results.
		a.keepConversation(ctx, t.Conversation, msgs)
		return a.replyResults(ctx, h.out, t.Conversation, st.Calls)
	}
	return a.loop(ctx, h, t.Conversation, st.Requester, msgs, st.RoundTrips, spend{tokens: st.Tokens, unrecorded: st.Unrecorded})
}

// replyResults replies the result of each call, in order, the way a direct
// command shows it, through out.
func (a *Agent) replyResults(ctx context.Context, out Replier, conv approval.Conversation, calls []callState) error {
	var errs []error
	for _, c := range calls {
		if err := a.replyResult(ctx, out, conv, a.render(c.Tool, c.Args, *c.Result), *c.Result); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
