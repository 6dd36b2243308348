package bot

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/tools"
)

// Edit before approve (issue 19): an approver of a waiting card, or its
// requester, changes its operation before it runs. An edit is not an
// approval: the old card ends as replaced (by whom, and with what), and
// the edited call is a new call, through the same path as a direct
// command: judged again (an absurd one is still blocked), previewed again,
// posted as a new card whose requester is the editor (for the
// second-person rule). The model's turn learns that a person replaced its
// call, and with what; what the new call did follows in the conversation.

// replacedPrefix starts the reason of an approval ended by an edit; the
// card's title reads it.
const replacedPrefix = "replaced by an edit: "

// typedEdit turns typed "edit <id> <operation>" into the bot's !edit
// command; ok is false for any other text.
func typedEdit(text string) (string, bool) {
	verb, rest, _ := strings.Cut(strings.TrimSpace(text), " ")
	if !strings.EqualFold(verb, "edit") || strings.TrimSpace(rest) == "" {
		return text, false
	}
	return "!edit " + strings.TrimSpace(rest), true
}

// edit replaces the operation of a waiting card (!edit <id> <operation>).
func (b *Bot) edit(ctx context.Context, in inbound, rest string) {
	id, op, _ := strings.Cut(strings.TrimSpace(rest), " ")
	op = strings.TrimSpace(op)
	if id == "" || op == "" {
		b.notify(in, "Usage: edit <id> <the operation as it should run>. Nothing changed.")
		return
	}
	d := adapters.Decision{ApprovalID: strings.ToLower(id)}
	if !approval.ValidID(d.ApprovalID) {
		full, why := b.resolveID(in, d)
		if full == "" {
			b.notify(in, why)
			return
		}
		d.ApprovalID = full
	}
	rctx, cancel := context.WithTimeout(ctx, checkTimeout)
	a, err := b.store.Get(rctx, d.ApprovalID)
	cancel()
	if err != nil {
		b.notify(in, "There is no approval "+d.ApprovalID+" to edit; nothing changed.")
		return
	}
	if why, notice := b.refusal(in, a, approval.DecisionCancel); why != "" {
		b.refuseClick(in, a, "edit", why, strings.Replace(notice, "You cannot cancel", "You cannot edit", 1))
		return
	}
	if a.State != approval.Pending {
		b.notify(in, alreadyDecided(a))
		return
	}
	direct, ok := b.directOf(a.Tool)
	if !ok {
		b.notify(in, "A "+a.Tool+" call cannot be edited here (the tool has no command form); cancel it and ask again. Nothing changed.")
		return
	}
	parsed, usage := direct.Parse(op)
	if usage != "" {
		b.notify(in, usage+" Nothing changed.")
		return
	}
	// What the edit does not say is kept (a command's folder, a query's
	// connection).
	args := map[string]any{}
	_ = json.Unmarshal(a.Args, &args)
	for k, v := range parsed {
		args[k] = v
	}
	raw, err := json.Marshal(args)
	if err != nil {
		b.notify(in, "I could not read that operation; nothing changed.")
		return
	}
	by := approval.User{ID: in.User.ID, Name: in.User.Display()}
	reason := replacedPrefix + op + " (the edited call is judged again and shown on a new card)"
	res, err := b.agent.Decide(b.work, a.ID, by, false, reason)
	if err != nil {
		b.failPrivate(in, "I could not replace "+a.ID+", so nothing changed; try again in a moment", err)
		return
	}
	if !res.Won {
		if res.Approval != nil {
			b.notify(in, alreadyDecided(res.Approval))
		}
		return
	}
	if err := b.agent.Direct(ctx, a.Conversation, by, a.Tool, raw); err != nil {
		b.fail(ctx, a.Conversation, "I could not run the edited call", err)
	}
}

// directOf is the direct command of tool.
func (b *Bot) directOf(tool string) (tools.NamedDirect, bool) {
	if b.tools == nil {
		return tools.NamedDirect{}, false
	}
	for _, d := range b.tools.Directs() {
		if d.Tool == tool && d.Off == "" && d.Parse != nil {
			return d, true
		}
	}
	return tools.NamedDirect{}, false
}
