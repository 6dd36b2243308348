package bot

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval"
)

// Edit before approve (issues 19 and 24): an approver of a waiting card,
// or its requester, changes its operation before it runs. The bot checks
// who may (as for a cancellation: the requester or an approver; anyone
// else is refused privately), reads the operation with the tool's own
// command form, and hands it to agent.Edit, which takes it through the
// gate like every call: judged afresh with no risk_level, always a new
// card whose requester is the editor, needing its own approvals; the old
// card ends as replaced, and the model's call gets one result naming the
// edit and what came of it. The Edit form on Slack and Discord submits
// the same words ("!edit <id> <operation>") and comes here too.

// replacedPrefix starts the reason of an approval ended by an edit; the
// card's title reads it.
const replacedPrefix = agent.ReplacedPrefix

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
		b.notify(in, editUsage())
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
		b.notify(in, noApprovalToEdit(d.ApprovalID))
		return
	}
	if why, notice := b.refusal(in, a, approval.DecisionCancel); why != "" {
		b.refuseClick(in, a, "edit", why, cannotEdit(notice))
		return
	}
	if a.State != approval.Pending {
		b.notify(in, alreadyDecided(a))
		return
	}
	direct, ok := b.directOf(a.Tool)
	if !ok {
		b.notify(in, notEditable(a.Tool))
		return
	}
	parsed, usage := direct.Parse(op)
	if usage != "" {
		b.notify(in, editMisread(usage))
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
		b.notify(in, unreadableOperation())
		return
	}
	by := approval.User{ID: in.User.ID, Name: in.User.Display()}
	res, err := b.agent.Edit(b.work, a.ID, by, raw)
	switch {
	case err != nil:
		b.failPrivate(in, editFailed(a.ID), err)
	case res.Result != nil && !res.Won:
		// The gate refused the edited call (blocked, too large): the
		// card still waits as it was.
		b.notify(in, editRefused(a.ID, *res.Result))
	case !res.Won && res.Old != nil:
		b.notify(in, alreadyDecided(res.Old))
	case res.Won && res.New == nil:
		b.notify(in, editLostCard(a.ID))
	}
}
