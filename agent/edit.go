package agent

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/tools"
)

// Edit before approve (issue 19, issue 24): a person who may decide a
// waiting card changes its operation before it runs. An edit is not an
// approval. The edited call goes through the gate as a person's call
// (admit.go, fromEdit): judged afresh with no risk_level, and always a new
// card, whose requester is the editor and which needs its own approvals
// under the channel's rules. The old card ends as replaced.
//
// The model's call waits for the new card: the turn keeps waiting under
// the old approval's id (the call's place in approval.Turn's pending set),
// the old approval's end does not resolve it, and the new approval's end
// does, in its place (Approval.ReplacesCall). On resume the call gets one
// result that names the edit, who made it, what was asked for instead and
// how that ended (callResult). All of it is in the store, so any replica
// carries it through, after a restart too. The new approval's id is
// derived from the old one's (replacementID): from a replaced approval,
// any replica finds what replaced it, with no index to keep.

// ReplacedPrefix starts the reason of an approval ended by an edit; the
// card's title reads it.
const ReplacedPrefix = "replaced by an edit: "

// EditResult is what Edit reports.
type EditResult struct {
	// Old is the edited approval as it stands after the call.
	Old *approval.Approval
	// Won: the edit replaced Old, which was waiting. False with no Result:
	// Old was decided first (Old says how it ended).
	Won bool
	// New is the new card's approval, when one was made.
	New *approval.Approval
	// Result is what the gate said of an edited call that got no card
	// (blocked, too large, invalid, not stored): nothing changed then, and
	// Old still waits, unless Won.
	Result *tools.Result
}

// Edit replaces the operation of waiting approval id with a call of the
// same tool with args, asked for by editor (the caller has checked that
// editor may decide on it). The edited call is judged at the gate; one the
// policy blocks, or that is too large, changes nothing and comes back in
// Result. Otherwise the old approval is cancelled as replaced, and the new
// one's card posted.
func (a *Agent) Edit(ctx context.Context, id string, editor approval.User, args json.RawMessage) (EditResult, error) {
	a.busy.add()
	defer a.busy.done()
	old, err := a.store.Get(ctx, id)
	if err != nil {
		return EditResult{}, fmt.Errorf("read approval %s to edit it: %w", id, err)
	}
	if old.State != approval.Pending {
		return EditResult{Old: old}, nil
	}
	cs := a.admit(ctx, entry{
		from: fromEdit, requester: editor, conv: old.Conversation, tool: old.Tool, args: string(args),
		callID: old.ToolCallID + "/edit", turnID: old.TurnID, replaces: old,
	})
	out := EditResult{Old: old, Result: cs.Result}
	if cs.replaced {
		out.Won = true
		// The old card shows it was replaced; its end leaves its turn
		// waiting for the new one (resolve), or, when the new card could
		// not be made, tells the turn.
		if cur, err := a.store.Get(ctx, id); err == nil {
			out.Old = a.carryOut(ctx, cur, nil)
		} else {
			a.log.ErrorContext(ctx, "reading a replaced approval back", "approval", id, "error", err)
		}
	} else if cur, err := a.store.Get(ctx, id); err == nil && cur.State != approval.Pending {
		out.Old, out.Result = cur, nil // decided before the edit
		return out, nil
	}
	if cs.approval != nil {
		out.New, out.Result = cs.approval, nil
		a.post(ctx, nil, cs.approval)
	}
	return out, nil
}

// replace ends the waiting approval old as replaced by the edit e, whose
// operation is op, before the new card is made: exactly one decision
// wins, so an edit and an approval of the same card never both go on.
func (a *Agent) replace(ctx context.Context, e entry, op string) error {
	reason := ReplacedPrefix + op + " (judged again and shown on a new card)"
	dec, err := a.store.Decide(ctx, e.replaces.ID, approval.Cancelled, e.requester, reason, a.now())
	if err != nil {
		return fmt.Errorf("replace approval %s: %w", e.replaces.ID, err)
	}
	outcome, detail := approval.Outcome(approval.Cancelled), reason
	if !dec.Won {
		outcome, detail = approval.OutcomeLost, "already "+string(dec.Approval.State)
	}
	_ = a.audit(ctx, approval.Event{
		Kind: approval.KindClick, Actor: e.requester.ID, ApprovalID: e.replaces.ID, Tool: e.tool, Operation: a.operation(e.tool, e.replaces.Args),
		Decision: approval.DecisionCancel, Outcome: outcome, Channel: e.conv.Channel, Detail: detail,
	})
	if !dec.Won {
		return errDecidedFirst
	}
	return nil
}

// errDecidedFirst: the card an edit would replace was decided first.
var errDecidedFirst = errors.New("the card was decided before the edit")

// replacementID is the id of the approval that replaces approval id by an
// edit: derived, so that any replica finds it from the replaced one.
func replacementID(id string) string {
	sum := sha256.Sum256([]byte("countersign: the edit of approval " + id))
	return idEncoding.EncodeToString(sum[:16])
}

// idEncoding is approval.NewID's alphabet.
var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// callOf is the approval id under which rec's turn waits for rec: its
// own, or for an edit the first approval of the call it replaced.
func callOf(rec *approval.Approval) string {
	if rec.ReplacesCall != "" {
		return rec.ReplacesCall
	}
	return rec.ID
}

// replacement returns the approval that replaced rec by an edit, or nil
// when nothing did (a cancellation, or an edit whose new card was never
// made). An error means the store could not say.
func (a *Agent) replacement(ctx context.Context, rec *approval.Approval) (*approval.Approval, error) {
	if rec.State != approval.Cancelled || !strings.HasPrefix(rec.Reason, ReplacedPrefix) {
		return nil, nil
	}
	n, err := a.store.Get(ctx, replacementID(rec.ID))
	if errors.Is(err, approval.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the replacement of approval %s: %w", rec.ID, err)
	}
	if n.Replaces != rec.ID {
		return nil, nil
	}
	return n, nil
}

// callResult is the result of a turn's call that waited for approval id,
// following the edits that replaced it to the call that was decided in
// the end. last is the approval whose end completed the turn, as its
// carrier knows it. It also returns that final approval (nil when it
// could not be read).
func (a *Agent) callResult(ctx context.Context, id string, last *approval.Approval) (tools.Result, *approval.Approval) {
	read := func(id string) *approval.Approval {
		if last != nil && last.ID == id && last.State.Final() {
			return last
		}
		rec, err := a.store.Get(ctx, id)
		if err != nil {
			a.log.ErrorContext(ctx, "reading a decided approval", "approval", id, "error", err)
			return nil
		}
		return rec
	}
	rec := read(id)
	if rec == nil {
		return tools.NotRun(tools.StatusError, "Countersign could not read this call's approval"), nil
	}
	var edits []*approval.Approval
	for range maxEdits {
		n, err := a.replacement(ctx, rec)
		if err != nil {
			a.log.ErrorContext(ctx, "following an edited call", append(logAttrs(rec), "error", err)...)
			return tools.NotRun(tools.StatusError, "Countersign could not read the card that replaced this call"), nil
		}
		if n == nil {
			break
		}
		if n = read(n.ID); n == nil {
			return tools.NotRun(tools.StatusError, "Countersign could not read the card that replaced this call"), nil
		}
		edits = append(edits, n)
		rec = n
	}
	res := a.recordResult(ctx, rec)
	if len(edits) == 0 {
		return res, rec
	}
	return a.editedResult(edits, res), rec
}

// maxEdits bounds how far callResult follows a chain of edits.
const maxEdits = 32

// recordResult is the tool result approval rec ended with, as the model
// sees it.
func (a *Agent) recordResult(ctx context.Context, rec *approval.Approval) tools.Result {
	if rec.State.Final() {
		return resultOfRecord(rec)
	}
	if rec.State == approval.Running {
		// It may be running still, or have run: never say it did not.
		a.log.ErrorContext(ctx, "resuming a turn with a call still running", logAttrs(rec)...)
		return interruptedRun()
	}
	a.log.ErrorContext(ctx, "resuming a turn with an undecided call", append(logAttrs(rec), "state", string(rec.State))...)
	return tools.NotRun(tools.StatusError, "Countersign lost track of this call's approval")
}

// editedResult is the one result of a call that people replaced by edits
// (edits, in order): who edited it, what was asked for instead, and then
// how that edited call ended (res, its own result, output and all).
func (a *Agent) editedResult(edits []*approval.Approval, res tools.Result) tools.Result {
	var b strings.Builder
	for i, n := range edits {
		if i == 0 {
			b.WriteString("This call did not run as written: " + n.Requester.Display() + " edited it before it was approved")
		} else {
			b.WriteString(", then " + n.Requester.Display() + " edited that")
		}
	}
	n := edits[len(edits)-1]
	b.WriteString(", and what was asked for instead, on a new card, was `" + a.operation(n.Tool, n.Args) + "`. ")
	switch n.State {
	case approval.Done, approval.Failed:
		b.WriteString("That edited call was approved")
		if n.DecidedBy != nil {
			b.WriteString(" by " + n.DecidedBy.Display())
		}
		if res.Executed {
			b.WriteString(" and ran; this is its result.")
		} else {
			b.WriteString(", and did not run.")
		}
	case approval.Cancelled:
		b.WriteString("That edited call was cancelled and did not run.")
	case approval.Expired:
		b.WriteString("Nobody approved that edited call in time; it did not run.")
	default:
		b.WriteString("That edited call is " + string(n.State) + ".")
	}
	if res.Message != "" {
		b.WriteString(" " + res.Message)
	}
	res.Message = b.String()
	return res
}

// resultOfRecord is the tool result a final approval ended with.
func resultOfRecord(rec *approval.Approval) tools.Result {
	switch rec.State {
	case approval.Cancelled:
		by := ""
		if rec.DecidedBy != nil {
			by = rec.DecidedBy.Display()
		}
		return tools.Cancelled(by, rec.Reason)
	case approval.Expired:
		return tools.Expired()
	}
	if rec.Result != nil {
		return *rec.Result
	}
	return tools.Failed(errors.New("the outcome of the operation was not recorded"))
}
