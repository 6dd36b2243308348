package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/tools"
)

// Sweep batches: Sweep expires due approvals sweepBatch at a time until
// none is due or it has spent sweepBudget (it then reports more, and the
// caller sweeps again at once; see SweepMore). Recovery reads at most
// sweepBatches batches per call.
const (
	sweepBatch   = 100
	sweepBatches = 10
	// sweepParallel bounds the expiries carried out at once.
	sweepParallel = 16
)

// sweepBudget bounds the time one sweep spends expiring, so that a storm
// of deadlines never holds recovery back for long and the store stays
// free for clicks between sweeps. A variable only so that a test can set
// it.
var sweepBudget = 2 * time.Second

// expiredReason is the reason an expired approval records.
const expiredReason = "nobody decided before the approval expired"

// Recovery (see Sweep). A decision is carried through in steps: decide,
// claim, run, finish, resolve the turn. A process that dies between them
// leaves an approval the store still lists as unsettled; Sweep, on any
// replica, finishes the job once the carrier has been silent for longer
// than these (Config):
//
//   - RecoveryGrace: an approved call not claimed this long after its
//     decision, or a final one whose turn was not told this long after it
//     ended. Live carriers take milliseconds to a few seconds.
//   - RunLease: a running call whose run has sent no heartbeat for this
//     long. A live run beats every quarter of the lease.

// heartbeatEvery, when set, replaces RunLease/4; only a test sets it.
var heartbeatEvery time.Duration

// beatEvery is how often a live run tells the store it is alive.
func (a *Agent) beatEvery() time.Duration {
	if heartbeatEvery > 0 {
		return heartbeatEvery
	}
	return a.cfg.RunLease / 4
}

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

// Sweep expires overdue pending approvals (updating each card, telling
// the LLM) and resumes turns; see SweepMore, whose more it drops.
func (a *Agent) Sweep(ctx context.Context) error {
	_, err := a.SweepMore(ctx)
	return err
}

// SweepMore expires overdue pending approvals, a batch at a time, until
// none is due or it has spent sweepBudget; then it recovers the decisions
// whose carrier died (see recover). more reports that approvals were
// still due when the budget ran out: the caller should sweep again at
// once rather than wait for its next tick. Safe to run on every replica
// at once: the store lets exactly one of them expire each approval.
func (a *Agent) SweepMore(ctx context.Context) (more bool, err error) {
	a.busy.add()
	defer a.busy.done()
	var errs []error
	// Each expiry is carried out (card, turn told, turn resumed: a model
	// call) beside the others, a few at a time: one after another, the
	// hundredth card of a crashed replica would be shown expired a
	// hundred model calls late.
	var carried sync.WaitGroup
	defer carried.Wait()
	slots := make(chan struct{}, sweepParallel)
	start := time.Now() // the budget is real time, whatever a.now says
	for {
		now := a.now()
		ids, err := a.store.Due(ctx, now, sweepBatch)
		if err != nil {
			return false, errors.Join(append(errs, fmt.Errorf("list due approvals: %w", err))...)
		}
		mine, moved := 0, 0
		for _, id := range ids {
			if !a.mine(ctx, id) {
				continue
			}
			mine++
			dec, err := a.store.Decide(ctx, id, approval.Expired, systemUser, expiredReason, now)
			if err != nil {
				errs = append(errs, fmt.Errorf("expire approval %s: %w", id, err))
				continue
			}
			moved++ // no longer pending, whoever expired it
			if !dec.Won {
				continue
			}
			a.auditExpiry(ctx, dec.Approval)
			slots <- struct{}{}
			carried.Add(1)
			go func() {
				defer carried.Done()
				defer func() { <-slots }()
				a.carryOut(ctx, dec.Approval, nil)
			}()
		}
		if len(ids) < sweepBatch || mine == 0 || moved == 0 || ctx.Err() != nil {
			// Nothing more is due; or the rest are another replica's to
			// expire; or this batch failed, and the next tick tries again.
			break
		}
		if time.Since(start) >= sweepBudget {
			more = true
			break
		}
	}
	if err := a.recover(ctx); err != nil {
		errs = append(errs, err)
	}
	return more, errors.Join(errs...)
}

// mine reports whether this process serves the platform of approval id,
// so that it may expire it. When every platform is served, nothing is
// read; a record that cannot be read is left for the next sweep.
func (a *Agent) mine(ctx context.Context, id string) bool {
	if a.servesAll {
		return true
	}
	rec, err := a.store.Get(ctx, id)
	if err != nil {
		return false
	}
	return a.serves(rec.Conversation.Platform)
}

// recover finishes the decisions whose carrier died (see RecoveryGrace):
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
		recs, err := a.store.Unsettled(ctx, now.Add(-a.cfg.RecoveryGrace), now.Add(-a.cfg.RunLease), sweepBatch)
		if err != nil {
			return errors.Join(append(errs, fmt.Errorf("list unsettled approvals: %w", err))...)
		}
		for _, rec := range recs {
			if !a.serves(rec.Conversation.Platform) {
				continue // a replica that serves its platform recovers it
			}
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

// recoverOne ends one unsettled approval of recover's list and tells its
// turn; another replica ending it first is not an error.
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
		res := notRunAfterCrash()
		rec = a.finish(rctx, claimed, res)
		a.auditRecovery(rctx, rec, res)
	case approval.Running:
		// rec may be older than the record: the store ends the run only if
		// it is still running and silent since the lease's cutoff, judged
		// in the same step.
		res := interruptedRun()
		res.Note = "The process running it stopped answering: no heartbeat for over " + a.cfg.RunLease.String() +
			" when another replica recorded it as interrupted; it may have ended, or may still be running."
		now := a.now()
		fin, err := a.store.FinishAbandoned(ctx, rec.ID, approval.Failed, res, now, now.Add(-a.cfg.RunLease))
		if errors.Is(err, approval.ErrConflict) {
			return nil // the run ended or beat after all, or another replica ended it
		}
		if err != nil {
			return fmt.Errorf("end interrupted approval %s: %w", rec.ID, err)
		}
		a.log.WarnContext(ctx, "a run stopped without an outcome: ended it as interrupted", logAttrs(fin)...)
		a.auditRecovery(ctx, fin, res)
		a.updateCard(ctx, fin, nil)
		rec = fin
	}
	if !rec.State.Final() {
		return nil
	}
	return a.resolve(ctx, rec, nil)
}

// auditRecovery records what recovery did to a call. Nothing runs, so a
// failure is only logged.
func (a *Agent) auditRecovery(ctx context.Context, rec *approval.Approval, res tools.Result) {
	_ = a.audit(ctx, approval.Event{
		Kind: approval.KindExecution, Actor: systemUser.ID, ApprovalID: rec.ID, Tool: rec.Tool,
		Operation: a.operation(rec.Tool, rec.Args), Decision: approval.DecisionRecovered, Outcome: approval.Outcome(res.Status),
		Channel: rec.Conversation.Channel, Detail: strings.TrimSpace(res.Error + " " + res.Message),
	})
}

// auditExpiry records that rec expired. Nothing runs, so a failure is
// only logged.
func (a *Agent) auditExpiry(ctx context.Context, rec *approval.Approval) {
	_ = a.audit(ctx, approval.Event{
		Kind: approval.KindExpiry, Actor: systemUser.ID, ApprovalID: rec.ID, Tool: rec.Tool,
		Operation: a.operation(rec.Tool, rec.Args), Outcome: approval.Outcome(approval.Expired),
		Channel: rec.Conversation.Channel, Detail: "expired at " + rec.ExpiresAt.UTC().String(),
	})
}
