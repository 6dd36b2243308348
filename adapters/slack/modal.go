package slack

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/countersign/countersign/adapters"
)

// This file asks for a reason (issue 19): the card's Cancel button always
// opens a modal (ActionCancelAsk: the reason optional; ActionCancelReason:
// a rule requires it), and Approve does where a rule requires a reason
// (ActionApproveReason). A click on one opens a modal (views.open with the
// click's trigger) holding one text input, and the modal's submission
// (view_submission) is the decision, with the reason. The typed
// "cancel <id> <reason>" works as ever, and a click on a card drawn before
// (ActionCancel) still cancels at once.

// The action ids of buttons whose decision needs a reason, and the modal's
// callback id and input.
const (
	ActionApproveReason = "countersign_approve_reason"
	ActionCancelReason  = "countersign_cancel_reason"
	ActionCancelAsk     = "countersign_cancel_ask"
	reasonCallback      = "countersign_reason"
	reasonBlock         = "countersign_reason_block"
	reasonInput         = "reason"
	maxReason           = 500
)

// reasonAction is the action id of a decision button: its own when the
// decision needs a reason, and a Cancel's that asks for an optional one.
func reasonAction(action string, b adapters.Button) string {
	if !b.Reason {
		if action == ActionCancel {
			return ActionCancelAsk
		}
		return action
	}
	if action == ActionApprove {
		return ActionApproveReason
	}
	return ActionCancelReason
}

// reasonMeta is what the modal carries back (private_metadata): the
// decision it completes and where the card is.
type reasonMeta struct {
	ID          string `json:"id"`
	Approve     bool   `json:"approve,omitempty"`
	Channel     string `json:"channel"`
	Thread      string `json:"thread,omitempty"`
	Ref         string `json:"ref,omitempty"`
	ResponseURL string `json:"response_url,omitempty"`
}

// askReason opens the reason modal for a click on a button whose decision
// needs a reason, and reports whether act was such a click. A modal that
// cannot be opened is said privately: nothing was decided.
func (a *Adapter) askReason(ctx context.Context, cb slackapi.InteractionCallback, act *slackapi.BlockAction, user adapters.User, place adapters.Place, ref string, rp *reply) bool {
	if act.ActionID != ActionApproveReason && act.ActionID != ActionCancelReason && act.ActionID != ActionCancelAsk {
		return false
	}
	if !validApprovalID(act.Value) {
		a.log.Warn("ignored a click whose button carries no approval id", "action", act.ActionID, "value", act.Value)
		return true
	}
	approve := act.ActionID == ActionApproveReason
	meta, _ := json.Marshal(reasonMeta{ID: act.Value, Approve: approve, Channel: place.Channel, Thread: place.Thread, Ref: ref, ResponseURL: cb.ResponseURL})
	verb, submit := "Cancel", "Cancel it"
	if approve {
		verb, submit = "Approve", "Approve it"
	}
	input := slackapi.NewPlainTextInputBlockElement(plain("Why?"), reasonInput)
	input.Multiline = true
	input.MaxLength = maxReason
	optional := act.ActionID == ActionCancelAsk
	say := "A reason is required to " + strings.ToLower(verb) + " `" + act.Value + "`. It goes on the card, into the audit log and to the model."
	if optional {
		say = "Cancel `" + act.Value + "`? A reason is optional; given, it goes on the card, into the audit log and to the model."
	}
	field := slackapi.NewInputBlock(reasonBlock, plain("Reason"), nil, input)
	field.Optional = optional
	view := slackapi.ModalViewRequest{
		Type:       slackapi.VTModal,
		Title:      plain(cutText(verb+" "+act.Value, 24)),
		Submit:     plain(submit),
		Close:      plain("Go back"),
		CallbackID: reasonCallback,
		Blocks: slackapi.Blocks{BlockSet: []slackapi.Block{
			slackapi.NewSectionBlock(&slackapi.TextBlockObject{Type: slackapi.MarkdownType, Text: say}, nil, nil),
			field,
		}},
		PrivateMetadata: string(meta),
	}
	if _, err := a.api.OpenViewContext(ctx, cb.TriggerID, view); err != nil {
		a.log.Warn("could not open the reason form", "err", err, "approval", act.Value)
		a.notifyAsync(adapters.Notice{Place: place, User: user, Reply: rp,
			Text: "I could not open the form for your reason, so nothing changed; type `" + strings.ToLower(verb) + " " + act.Value + " <reason>` in the thread instead."})
	}
	return true
}

// fromReason turns a submitted reason form into the decision it completes.
func (a *Adapter) fromReason(ctx context.Context, cb slackapi.InteractionCallback, retried bool) []adapters.Event {
	if cb.View.CallbackID == editCallback {
		return a.fromEdit(ctx, cb, retried)
	}
	if cb.View.CallbackID != reasonCallback {
		a.log.Info("ignored a slack form that is not countersign's", "callback", cb.View.CallbackID)
		return nil
	}
	var m reasonMeta
	if err := json.Unmarshal([]byte(cb.View.PrivateMetadata), &m); err != nil || !validApprovalID(m.ID) || m.Channel == "" {
		a.log.Warn("ignored a reason form whose metadata is unreadable", "err", err)
		return nil
	}
	reason := ""
	if cb.View.State != nil {
		reason = strings.TrimSpace(cb.View.State.Values[reasonBlock][reasonInput].Value)
	}
	e := a.formEvent(ctx, cb, m, retried)
	e.Decision = &adapters.Decision{ApprovalID: m.ID, Approve: m.Approve, Reason: reason, Ref: m.Ref}
	return []adapters.Event{e}
}

// formEvent is the event of a submitted form of ours: its id (one per
// view and state, so a resubmission is a redelivery), the card's thread,
// the reply to the submitter, and the submitter checked as any decider.
func (a *Adapter) formEvent(ctx context.Context, cb slackapi.InteractionCallback, m reasonMeta, retried bool) adapters.Event {
	team := cb.Team.ID
	if team == "" {
		team = cb.User.TeamID
	}
	return adapters.Event{
		ID:          "view:" + team + ":" + cb.User.ID + ":" + cb.View.ID + ":" + cb.View.Hash,
		Redelivered: retried,
		Reply:       &reply{ResponseURL: m.ResponseURL, Channel: m.Channel, User: cb.User.ID, Thread: m.Thread},
		User:        a.decider(ctx, adapters.User{ID: cb.User.ID, Name: cb.User.Name, Team: team}),
		Place:       adapters.Place{Channel: m.Channel, Thread: m.Thread},
	}
}

// Edit before approve: the card's Edit button opens a form holding the
// operation; its submission is the typed words "!edit <id> <operation>"
// in the card's thread, which the bot judges like any edit.
const (
	ActionEdit    = "countersign_edit"
	editCallback  = "countersign_edit"
	editBlock     = "countersign_edit_block"
	editInput     = "operation"
	maxEditedText = 3000
)

// askEdit opens the edit form for a click on Edit, holding the card's
// operation, and reports whether act was such a click.
func (a *Adapter) askEdit(ctx context.Context, cb slackapi.InteractionCallback, act *slackapi.BlockAction, user adapters.User, place adapters.Place, ref string, rp *reply) bool {
	if act.ActionID != ActionEdit {
		return false
	}
	if !validApprovalID(act.Value) {
		a.log.Warn("ignored a click whose button carries no approval id", "action", act.ActionID, "value", act.Value)
		return true
	}
	meta, _ := json.Marshal(reasonMeta{ID: act.Value, Channel: place.Channel, Thread: place.Thread, Ref: ref, ResponseURL: cb.ResponseURL})
	input := slackapi.NewPlainTextInputBlockElement(plain("the operation as it should run"), editInput)
	input.Multiline = true
	input.MaxLength = maxEditedText
	input.InitialValue = cardOperation(cb.Message.Blocks)
	view := slackapi.ModalViewRequest{
		Type:       slackapi.VTModal,
		Title:      plain(cutText("Edit "+act.Value, 24)),
		Submit:     plain("Replace it"),
		Close:      plain("Go back"),
		CallbackID: editCallback,
		Blocks: slackapi.Blocks{BlockSet: []slackapi.Block{
			slackapi.NewSectionBlock(&slackapi.TextBlockObject{Type: slackapi.MarkdownType,
				Text: "The edited operation replaces `" + act.Value + "`: it is judged again and shown on a new card, which you will have asked for. An edit is not an approval."}, nil, nil),
			slackapi.NewInputBlock(editBlock, plain("Operation"), nil, input),
		}},
		PrivateMetadata: string(meta),
	}
	if _, err := a.api.OpenViewContext(ctx, cb.TriggerID, view); err != nil {
		a.log.Warn("could not open the edit form", "err", err, "approval", act.Value)
		a.notifyAsync(adapters.Notice{Place: place, User: user, Reply: rp,
			Text: "I could not open the edit form, so nothing changed; type `edit " + act.Value + " <operation>` in the thread instead."})
	}
	return true
}

// cardOperation reads the operation off a card's blocks (its first
// preformatted block), or "".
func cardOperation(bs slackapi.Blocks) string {
	for _, b := range bs.BlockSet {
		rt, ok := b.(*slackapi.RichTextBlock)
		if !ok {
			continue
		}
		for _, el := range rt.Elements {
			pre, ok := el.(*slackapi.RichTextPreformatted)
			if !ok {
				continue
			}
			var s strings.Builder
			for _, e := range pre.Elements {
				if t, ok := e.(*slackapi.RichTextSectionTextElement); ok {
					s.WriteString(t.Text)
				}
			}
			return s.String()
		}
	}
	return ""
}

// fromEdit turns a submitted edit form into the typed words of an edit.
func (a *Adapter) fromEdit(ctx context.Context, cb slackapi.InteractionCallback, retried bool) []adapters.Event {
	var m reasonMeta
	if err := json.Unmarshal([]byte(cb.View.PrivateMetadata), &m); err != nil || !validApprovalID(m.ID) || m.Channel == "" {
		a.log.Warn("ignored an edit form whose metadata is unreadable", "err", err)
		return nil
	}
	op := ""
	if cb.View.State != nil {
		op = strings.TrimSpace(cb.View.State.Values[editBlock][editInput].Value)
	}
	e := a.formEvent(ctx, cb, m, retried)
	e.Text = "!edit " + m.ID + " " + op
	return []adapters.Event{e}
}

// notifyAsync sends a private notice in the background, off the intake
// worker (a form that could not be opened): the notice waits out the
// platform's trouble like any other send, within a minute.
func (a *Adapter) notifyAsync(n adapters.Notice) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := a.Notify(ctx, n); err != nil {
			a.log.Warn("could not send a private notice", "user", n.User.ID, "err", err)
		}
	}()
}

func validApprovalID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}
