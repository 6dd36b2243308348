package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/countersign/countersign/approval"
)

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
