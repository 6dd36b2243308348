package bot

import (
	"context"
	"errors"
	"strings"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval"
)

// decision checks a decision against the channel's policy at once (the
// platform waits for Handle) and hands an allowed one to decide in the
// background.
func (b *Bot) decision(e adapters.Event) {
	ctx := b.work
	d := *e.Decision
	d.ApprovalID = strings.ToLower(d.ApprovalID) // ids are lower case; a shouted one is the same id
	verb := "cancel"
	if d.Approve {
		verb = "approve"
	}
	if !approval.ValidID(d.ApprovalID) {
		b.refuse(ctx, e, nil, verb, "no approval has that id", "There is no approval "+d.ApprovalID+". Copy the id from the card.")
		return
	}
	a, err := b.store.Get(ctx, d.ApprovalID)
	if errors.Is(err, approval.ErrNotFound) {
		b.refuse(ctx, e, nil, verb, "no approval has that id", "There is no approval "+d.ApprovalID+" (it may have been cleaned up).")
		return
	}
	if err != nil {
		b.failPrivate(e.Place, e.User, "I could not read that approval just now; nothing changed. Try again in a moment", err)
		return
	}
	if a.Conversation.Platform != b.ad.Name() || a.Conversation.Channel != e.Place.Channel {
		b.refuse(ctx, e, a, verb, "decision from another channel", "That approval belongs to another channel; decide on it there. Nothing changed.")
		return
	}
	if a.State != approval.Pending {
		// Too late: nothing changes, but the click is audited like any.
		b.audit(ctx, e, a, approval.EventClick, verb, "lost: already "+string(a.State), "")
		b.notify(e.Place, e.User, alreadyDecided(a))
		return
	}
	if why := b.cfg.policy(a.Conversation.Platform, a.Conversation.Channel).refusal(e.User, a.Requester.ID, d.Approve); why != "" {
		b.refuse(ctx, e, a, verb, why, "You cannot "+verb+" "+a.ID+": "+why+". Nothing changed.")
		return
	}
	b.inflight.Add(1)
	go b.safely(e.Place, func() {
		defer b.inflight.Done()
		b.decide(ctx, e, d)
	})
}

// decide hands an allowed decision to the agent, which may run the call,
// and tells the person privately when it changed nothing or failed.
func (b *Bot) decide(ctx context.Context, e adapters.Event, d adapters.Decision) {
	by := approval.User{ID: e.User.ID, Name: e.User.Display()}
	res, err := b.agent.Decide(ctx, d.ApprovalID, by, d.Approve, d.Reason)
	if errors.Is(err, agent.ErrNotStarted) {
		b.failPrivate(e.Place, e.User, "Your approval of "+d.ApprovalID+" is recorded, but I could not start the operation just now, so it did not run; "+
			"its card will say so shortly, and it can be asked for again", err)
		return
	}
	if err != nil {
		b.failPrivate(e.Place, e.User, "Your decision on "+d.ApprovalID+" may not have been recorded, and nothing ran; look at its card again in a moment", err)
		return
	}
	switch {
	case !res.Won && res.Approval != nil:
		b.notify(e.Place, e.User, alreadyDecided(res.Approval))
	case d.Approve && res.Approval != nil && res.Approval.State == approval.Expired:
		// The deadline passed between the card and the click: the
		// approval expired instead, and this person should know.
		b.notify(e.Place, e.User, "Approval "+d.ApprovalID+" expired before your approval arrived, so it did not run.")
	}
}

func alreadyDecided(a *approval.Approval) string {
	s := "Approval " + a.ID + " is already " + string(a.State)
	if a.State == approval.Expired {
		if !a.DecidedAt.IsZero() {
			s += " (at " + a.DecidedAt.UTC().Format(stamp) + ")"
		}
	} else if a.DecidedBy != nil {
		s += " (by " + a.DecidedBy.Display()
		if !a.DecidedAt.IsZero() {
			s += " at " + a.DecidedAt.UTC().Format(stamp)
		}
		s += ")"
	}
	return s + "; nothing changed."
}

// refuse tells the person privately why their decision changed nothing and
// audits the refused click.
func (b *Bot) refuse(ctx context.Context, e adapters.Event, a *approval.Approval, verb, why, notice string) {
	b.audit(ctx, e, a, approval.EventRefusedClick, verb, "refused", why)
	b.notify(e.Place, e.User, notice)
}

// audit records a click that changed nothing; a failure is only logged,
// since nothing runs.
func (b *Bot) audit(ctx context.Context, e adapters.Event, a *approval.Approval, kind, verb, outcome, why string) {
	ev := approval.Event{
		At:         b.now(),
		Kind:       kind,
		Actor:      e.User.ID,
		ApprovalID: e.Decision.ApprovalID,
		Decision:   verb,
		Outcome:    outcome,
		Channel:    e.Place.Channel,
		Detail:     why,
	}
	if a != nil {
		ev.Tool = a.Tool
		ev.Operation = operation(a.Tool, a.Args)
		ev.Rule = string(a.Verdict.Rule)
	}
	if err := b.store.Audit(ctx, ev); err != nil {
		b.log.Error("audit a click that changed nothing", "err", err, "kind", kind, "approval", ev.ApprovalID, "actor", ev.Actor)
	}
}
