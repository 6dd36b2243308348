package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/countersign/countersign/agent/approval"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
)

// Sweep batches: Sweep expires at most sweepBatch × sweepBatches
// approvals per call; the next call takes the rest.
const (
	sweepBatch   = 100
	sweepBatches = 10
)

// ErrNotStarted is wrapped by Decide's error when a person's approval was
// recorded but the call could not be started (the store failed to claim or
// to refuse it): it did not run, and a sweep later ends it as not run.
var ErrNotStarted = errors.New("the approved call could not be started")

// expiredReason is the reason an expired approval records.
const expiredReason = "nobody decided before the approval expired"

// Recovery (see Sweep). A decision is carried through in steps: decide,
// claim, run, finish, resolve the turn. A process that dies between them
// leaves an approval the store still lists as unsettled; Sweep, on any
// replica, finishes the job once the carrier has been silent for longer
// than these:
//
//   - claimGrace: an approved call not claimed this long after its
//     decision, or a final one whose turn was not told this long after it
//     ended. Live carriers take milliseconds to a few seconds.
//   - runLease: a running call whose run has sent no heartbeat for this
//     long. A live run beats every heartbeatEvery.
const (
	claimGrace = 2 * time.Minute
	runLease   = 2 * time.Minute
)

// heartbeatEvery is a variable only so that a test can make it short.
var heartbeatEvery = runLease / 4

// notRunAfterCrash is the result of an approved call that Countersign
// stopped before running. Recovery does not run it late: the person
// approved it in a moment that has passed, and the world may have moved on
// (fail closed); they can ask again.
func notRunAfterCrash() tools.Result {
	return tools.NotRun(tools.StatusError, "Interrupted before it ran: Countersign stopped after this call was approved and before it started it")
}

// interruptedRun is the result of a call whose run was cut off by the bot
// stopping: it may have done part of its work, so it is never run again.
func interruptedRun() tools.Result {
	r := tools.Failed(errors.New("interrupted: the bot stopped while this ran; the outcome is unknown"))
	r.Message = "The operation started but Countersign stopped before it ended, so it may have taken effect in part or in full. " +
		"Do not run it again unless the user asks; check its effect first."
	return r
}

// suspend stores the turn with its pending approvals and posts their
// cards. From here on any replica can resume the turn.
func (a *Agent) suspend(ctx context.Context, conv approval.Conversation, turnID string, st turnState, cards []*approval.Approval) error {
	state, err := json.Marshal(st)
	if err != nil {
		a.cancelAll(ctx, cards, "the turn could not be saved")
		return a.fail(ctx, conv, storeErrorText, fmt.Errorf("encode turn %s: %w", turnID, err))
	}
	t := &approval.Turn{ID: turnID, Conversation: conv, State: state, CreatedAt: a.now()}
	for _, ap := range cards {
		t.Pending = append(t.Pending, ap.ID)
	}
	if err := a.store.SaveTurn(ctx, t); err != nil {
		a.cancelAll(ctx, cards, "the turn could not be saved")
		return a.fail(ctx, conv, storeErrorText, fmt.Errorf("save turn %s: %w", turnID, err))
	}
	for _, ap := range cards {
		a.post(ctx, ap)
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
			if err := a.resolve(ctx, cur); err != nil {
				a.log.ErrorContext(ctx, "telling a turn of an early decision", append(logAttrs(cur), "error", err)...)
			}
		}
	}
	return nil
}

// post posts the card of a new approval and records its reference. An
// approval whose card cannot be posted is cancelled: nobody could see it.
func (a *Agent) post(ctx context.Context, ap *approval.Approval) {
	ref, err := a.sink.PostCard(ctx, ap)
	if err != nil {
		a.log.ErrorContext(ctx, "posting an approval card", append(logAttrs(ap), "error", err)...)
		dec, derr := a.store.Decide(ctx, ap.ID, approval.Cancelled, systemUser, "the approval card could not be posted", a.now())
		if derr != nil {
			a.log.ErrorContext(ctx, "cancelling an approval without a card", append(logAttrs(ap), "error", derr)...)
			return
		}
		if dec.Won {
			a.settle(ctx, dec.Approval)
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

// Decide records a person's decision (the caller has already checked that
// this person may decide). Approve: claims and runs the call exactly once
// (updating the card: running with progress, then done/failed), then, when
// it was the last pending call of a suspended turn, resumes that turn.
// Cancel: the LLM gets a cancelled result. A second or late decision
// changes nothing and returns Won=false with the winner's record. An
// approval past its deadline expires instead of being approved. It can take
// as long as the tool runs: call it off the click handler.
func (a *Agent) Decide(ctx context.Context, id string, by approval.User, approve bool, reason string) (approval.Decision, error) {
	a.busy.add()
	defer a.busy.done()
	to, verb := approval.Cancelled, "cancel"
	if approve {
		to, verb = approval.Approved, "approve"
	}
	dec, err := a.store.Decide(ctx, id, to, by, reason, a.now())
	if err != nil {
		return approval.Decision{}, fmt.Errorf("decide approval %s: %w", id, err)
	}
	rec := dec.Approval
	outcome := string(rec.State)
	if !dec.Won {
		outcome = "lost: already " + string(rec.State)
		if rec.DecidedBy != nil {
			outcome += " by " + rec.DecidedBy.ID
		}
	}
	auditErr := a.audit(ctx, approval.Event{
		Kind: approval.EventClick, Actor: by.ID, ApprovalID: id, Tool: rec.Tool, Operation: operation(rec.Tool, rec.Args),
		Decision: verb, Outcome: outcome, Channel: rec.Conversation.Channel, Detail: reason,
	})
	if !dec.Won {
		return dec, nil
	}
	switch {
	case rec.State == approval.Expired:
		a.auditExpiry(ctx, rec)
	case rec.State == approval.Approved && auditErr != nil:
		rec = a.refuse(ctx, rec, auditFailed())
		if rec.State == approval.Approved {
			// Not even refused (the store failed too): it must not run
			// here. It stays unsettled, and a sweep ends it as not run.
			return approval.Decision{Approval: rec, Won: true}, fmt.Errorf("approval %s: %w", id, ErrNotStarted)
		}
	}
	rec = a.settle(ctx, rec)
	if rec.State == approval.Approved {
		// Approved, but the claim failed: nothing ran (see recover).
		return approval.Decision{Approval: rec, Won: true}, fmt.Errorf("approval %s: %w", id, ErrNotStarted)
	}
	return approval.Decision{Approval: rec, Won: true}, nil
}

// Sweep expires every overdue pending approval (updating its card, telling
// the LLM) and resumes turns. Safe to run on every replica at once: the
// store lets exactly one of them expire each approval.
func (a *Agent) Sweep(ctx context.Context) error {
	a.busy.add()
	defer a.busy.done()
	var errs []error
	for range sweepBatches {
		now := a.now()
		ids, err := a.store.Due(ctx, now, sweepBatch)
		if err != nil {
			return errors.Join(append(errs, fmt.Errorf("list due approvals: %w", err))...)
		}
		for _, id := range ids {
			dec, err := a.store.Decide(ctx, id, approval.Expired, systemUser, expiredReason, now)
			if err != nil {
				errs = append(errs, fmt.Errorf("expire approval %s: %w", id, err))
				continue
			}
			if !dec.Won {
				continue
			}
			a.auditExpiry(ctx, dec.Approval)
			a.settle(ctx, dec.Approval)
		}
		if len(ids) < sweepBatch {
			break
		}
	}
	if err := a.recover(ctx); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// recover finishes the decisions whose carrier died (see claimGrace):
//
//   - approved, never claimed: claimed here and ended as not run
//     (notRunAfterCrash), never run late;
//   - running without a heartbeat: ended as failed, outcome unknown
//     (interruptedRun), never run again;
//   - final, turn never told: the turn is told.
//
// Then its turn learns of it and resumes when it was the last. The store's
// Claim and Finish let exactly one replica end each call, and Resolve lets
// exactly one resume the turn, so every replica may recover at once.
func (a *Agent) recover(ctx context.Context) error {
	var errs []error
	for range sweepBatches {
		now := a.now()
		recs, err := a.store.Unsettled(ctx, now.Add(-claimGrace), now.Add(-runLease), sweepBatch)
		if err != nil {
			return errors.Join(append(errs, fmt.Errorf("list unsettled approvals: %w", err))...)
		}
		for _, rec := range recs {
			if err := a.recoverOne(ctx, rec); err != nil {
				errs = append(errs, err)
			}
		}
		if len(recs) < sweepBatch || len(errs) > 0 {
			break
		}
	}
	return errors.Join(errs...)
}

func (a *Agent) recoverOne(ctx context.Context, rec *approval.Approval) error {
	switch rec.State {
	case approval.Approved:
		claimed, ok, err := a.store.Claim(ctx, rec.ID, a.now())
		if err != nil {
			return fmt.Errorf("claim stranded approval %s: %w", rec.ID, err)
		}
		if !ok {
			return nil // someone else carries it on
		}
		a.log.WarnContext(ctx, "an approved call was never run: ending it as not run", logAttrs(claimed)...)
		// Claimed: the outcome must be recorded even if a shutdown
		// cancels ctx now, or the record would look like a run cut off.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
		defer cancel()
		rec = a.endStranded(rctx, claimed, notRunAfterCrash())
	case approval.Running:
		a.log.WarnContext(ctx, "a run stopped without an outcome: ending it as interrupted", logAttrs(rec)...)
		res := interruptedRun()
		fin, err := a.store.Finish(ctx, rec.ID, approval.Failed, res, a.now())
		if errors.Is(err, approval.ErrConflict) {
			return nil // the run ended after all, or another replica ended it
		}
		if err != nil {
			return fmt.Errorf("end interrupted approval %s: %w", rec.ID, err)
		}
		a.auditRecovery(ctx, fin, res)
		a.updateCard(ctx, fin, nil)
		rec = fin
	}
	if !rec.State.Final() {
		return nil
	}
	return a.resolve(ctx, rec)
}

// endStranded records res as the outcome of a claimed call that did not
// run, audits it and shows it.
func (a *Agent) endStranded(ctx context.Context, claimed *approval.Approval, res tools.Result) *approval.Approval {
	fin := a.finish(ctx, claimed, res)
	a.auditRecovery(ctx, fin, res)
	return fin
}

// auditRecovery records what recovery did to a call. Nothing runs, so a
// failure is only logged.
func (a *Agent) auditRecovery(ctx context.Context, rec *approval.Approval, res tools.Result) {
	_ = a.audit(ctx, approval.Event{
		Kind: approval.EventExecution, Actor: systemUser.ID, ApprovalID: rec.ID, Tool: rec.Tool,
		Operation: operation(rec.Tool, rec.Args), Decision: "recovered", Outcome: string(res.Status),
		Channel: rec.Conversation.Channel, Detail: strings.TrimSpace(res.Error + " " + res.Message),
	})
}

func (a *Agent) auditExpiry(ctx context.Context, rec *approval.Approval) {
	_ = a.audit(ctx, approval.Event{
		Kind: approval.EventExpiry, Actor: systemUser.ID, ApprovalID: rec.ID, Tool: rec.Tool,
		Operation: operation(rec.Tool, rec.Args), Outcome: string(approval.Expired),
		Channel: rec.Conversation.Channel, Detail: "expired at " + rec.ExpiresAt.UTC().String(),
	})
}

// settle carries a decision this agent won through: the card shows it, an
// approved call runs, and the turn learns of it, resuming when this was its
// last pending call. It returns the record as it ends up.
func (a *Agent) settle(ctx context.Context, rec *approval.Approval) *approval.Approval {
	if rec.State != approval.Approved {
		a.updateCard(ctx, rec, nil)
	} else {
		// Claimed before the card is redrawn: a slow chat platform must
		// not hold the run back past the time a sweep would take it for
		// abandoned (claimGrace).
		var ran bool
		rec, ran = a.execute(ctx, rec)
		if !ran {
			return rec // the claimant resolves the turn when it finishes
		}
	}
	if err := a.resolve(ctx, rec); err != nil {
		a.log.ErrorContext(ctx, "telling a turn of a decision", append(logAttrs(rec), "error", err)...)
	}
	return rec
}

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
	a.updateCard(ctx, claimed, nil)
	res := func() tools.Result {
		// Deferred: a panic that escapes the run must also stop the
		// heartbeat, or the record would look alive for good.
		stop := a.heartbeat(ctx, claimed)
		defer stop()
		return a.runApproved(ctx, claimed)
	}()
	// A shutdown may have cancelled ctx to interrupt the run; the outcome
	// must still be recorded, or the record would stay running for good.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	by := systemUser
	if claimed.DecidedBy != nil {
		by = *claimed.DecidedBy
	}
	a.auditExecution(rctx, by, claimed.ID, claimed.Conversation.Channel, claimed.Tool, operation(claimed.Tool, claimed.Args), "approved", res)
	return a.finish(rctx, claimed, res), true
}

// heartbeat tells the store, every heartbeatEvery until stop is called,
// that the run of rec is alive, so that no sweep takes it for interrupted.
func (a *Agent) heartbeat(ctx context.Context, rec *approval.Approval) (stop func()) {
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(heartbeatEvery)
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

// refuse ends an approved call without running it.
func (a *Agent) refuse(ctx context.Context, rec *approval.Approval, res tools.Result) *approval.Approval {
	claimed, ok, err := a.store.Claim(ctx, rec.ID, a.now())
	if err != nil || !ok {
		a.log.ErrorContext(ctx, "claiming an approved call to refuse it", append(logAttrs(rec), "claimed", ok, "error", err)...)
		return rec
	}
	return a.finish(ctx, claimed, res)
}

// finish records the outcome of a claimed call and shows it on the card.
func (a *Agent) finish(ctx context.Context, claimed *approval.Approval, res tools.Result) *approval.Approval {
	to := approval.Failed
	if res.Status == tools.StatusOK {
		to = approval.Done
	}
	fin, err := a.store.Finish(ctx, claimed.ID, to, res, a.now())
	if err != nil {
		a.log.ErrorContext(ctx, "recording a call's outcome", append(logAttrs(claimed), "error", err)...)
		c := *claimed
		c.State, c.Result, c.EndedAt = to, &res, a.now()
		fin = &c
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

// resolve tells the turn that the final rec is decided, resumes it when
// this was its last pending call, and settles rec in the store. An error
// means the turn may not have been told; rec then stays unsettled and a
// later sweep tells it (Resolve is idempotent).
func (a *Agent) resolve(ctx context.Context, rec *approval.Approval) error {
	last := false
	if rec.TurnID != "" {
		var err error
		last, err = a.store.Resolve(ctx, rec.TurnID, rec.ID)
		switch {
		case errors.Is(err, approval.ErrNotFound):
			a.log.InfoContext(ctx, "no suspended turn to resolve", append(logAttrs(rec), "turn", rec.TurnID)...)
		case err != nil:
			return fmt.Errorf("resolve turn %s with approval %s: %w", rec.TurnID, rec.ID, err)
		}
	}
	// The turn knows: settled, before a resume that may take minutes.
	if err := a.store.Settle(ctx, rec.ID); err != nil {
		a.log.WarnContext(ctx, "settling an approval", append(logAttrs(rec), "error", err)...)
	}
	if last {
		if err := a.resume(ctx, rec.TurnID, rec); err != nil {
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
// store failed to record still reaches the model as it happened.
func (a *Agent) resume(ctx context.Context, turnID string, last *approval.Approval) error {
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
		return a.fail(ctx, t.Conversation, storeErrorText, fmt.Errorf("decode turn %s: %w", turnID, err))
	}
	for i, c := range st.Calls {
		if c.Result != nil {
			continue
		}
		var res tools.Result
		if last != nil && c.ApprovalID == last.ID && last.State.Final() {
			res = resultOfRecord(last)
		} else {
			res = a.resultOf(ctx, c.ApprovalID)
		}
		st.Calls[i].Result = &res
	}
	if st.Kind == kindDirect {
		var errs []error
		for _, c := range st.Calls {
			if err := a.reply(ctx, t.Conversation, render(c.Tool, c.Args, *c.Result)); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
	if st.Assistant == nil {
		return a.fail(ctx, t.Conversation, storeErrorText, fmt.Errorf("turn %s has no assistant message", turnID))
	}
	// A message in the same thread may be in a turn right now: wait for
	// it, or one of the two saves would overwrite the other.
	ctx, unlock := a.lockConversation(ctx, t.Conversation.Key())
	defer unlock()
	msgs, err := a.loadConversation(ctx, t.Conversation)
	if err != nil {
		return a.fail(ctx, t.Conversation, storeErrorText, err)
	}
	msgs = append(msgs, *st.Assistant)
	msgs = append(msgs, toolMessages(st.Calls)...)
	if a.model == nil {
		// The model went away (a restart without one): keep the results
		// and show them as direct results.
		if err := a.saveConversation(ctx, t.Conversation, msgs); err != nil {
			a.log.ErrorContext(ctx, "saving a conversation", "conversation", t.Conversation.Key(), "error", err)
		}
		for _, c := range st.Calls {
			if err := a.reply(ctx, t.Conversation, render(c.Tool, c.Args, *c.Result)); err != nil {
				return err
			}
		}
		return nil
	}
	return a.loop(ctx, t.Conversation, st.Requester, msgs, st.RoundTrips)
}

// resultOf is the tool result an approval ended with, as the model sees it.
func (a *Agent) resultOf(ctx context.Context, id string) tools.Result {
	rec, err := a.store.Get(ctx, id)
	if err != nil {
		a.log.ErrorContext(ctx, "reading a decided approval", "approval", id, "error", err)
		return tools.NotRun(tools.StatusError, "Countersign could not read this call's approval")
	}
	if rec.State.Final() {
		return resultOfRecord(rec)
	}
	switch rec.State {
	case approval.Running:
		// It may be running still, or have run: never say it did not.
		a.log.ErrorContext(ctx, "resuming a turn with a call still running", logAttrs(rec)...)
		return interruptedRun()
	}
	a.log.ErrorContext(ctx, "resuming a turn with an undecided call", append(logAttrs(rec), "state", string(rec.State))...)
	return tools.NotRun(tools.StatusError, "Countersign lost track of this call's approval")
}

// resultOfRecord is the tool result a final approval ended with.
func resultOfRecord(rec *approval.Approval) tools.Result {
	switch rec.State {
	case approval.Cancelled:
		return tools.Cancelled(userName(rec.DecidedBy), rec.Reason)
	case approval.Expired:
		return tools.Expired()
	}
	if rec.Result != nil {
		return *rec.Result
	}
	return tools.Failed(errors.New("the outcome of the operation was not recorded"))
}

// userName is how a person is named in a result.
func userName(u *approval.User) string {
	switch {
	case u == nil:
		return ""
	case u.Name != "":
		return u.Name
	}
	return u.ID
}
