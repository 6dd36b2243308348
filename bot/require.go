package bot

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/rules"
)

// This file is what a call needs before it runs (issue 19): the bot's
// channels and bot.rules resolved for a call when its card is made
// (approval/rules; the agent stores the result with the approval), and
// who may decide it, for every click and every refusal. The card reads
// the requirement back with its other facts (card.go).

// require resolves what a call with facts f needs: the settings of its
// channel (bot.default with the channel's entry over it), with the first
// rule of bot.rules that matches over them. It is the agent's Require.
func (b *Bot) require(f rules.Facts) rules.Requirement {
	p := b.cfg.policy(f.Platform, f.Channel)
	return b.rules.Resolve(rules.Channel{Approvers: p.Approvers, Settings: p.Settings}, f)
}

// mayDecide reports whether u is among approvers (the bot's syntax; empty
// is anyone). Users match by id only, exactly; surrounding white space in
// an entry is ignored.
func mayDecide(approvers []string, u adapters.User) bool {
	if len(approvers) == 0 {
		return true
	}
	for _, a := range approvers {
		a = strings.TrimSpace(a)
		kind, name, found := strings.Cut(a, ":")
		if !found {
			kind, name = "user", a
		}
		name = strings.TrimSpace(name)
		switch {
		case a == "*":
			return true
		case name == "":
		case kind == "user" && name == u.ID:
			return true
		case kind == "group" && slices.Contains(u.Groups, name):
			return true
		case kind == "role" && slices.Contains(u.Roles, name):
			return true
		}
	}
	return false
}

// refusalFor says why u may not make this decision on a call that needs
// req, or "" when they may; kind says which refusal it is, for the words
// that name who can (rules.Refusal).
func (p Policy) refusalFor(req rules.Requirement, u adapters.User, requester string, approve bool) (string, rules.Why) {
	if strings.TrimSpace(u.ID) == "" {
		return "the platform did not say who you are", rules.NotApprover
	}
	own := u.ID == requester
	if !approve {
		if own || mayDecide(req.Approvers, u) {
			return "", 0
		}
		return "only the requester or an approver of this call can cancel it", rules.NotCanceller
	}
	if own && p.secondPerson() {
		return "you asked for this call, and it needs a second person to approve it; you can still cancel it", rules.Requester
	}
	if !mayDecide(req.Approvers, u) {
		return "you are not among the approvers of this call", rules.NotApprover
	}
	return "", 0
}

// pendingFor answers, privately, with the cards of the channel that wait
// for in.User's decision: those they may approve, with the operation, its
// age and how far its count is (Discord's /countersign pending).
func (b *Bot) pendingFor(ctx context.Context, in inbound) {
	list, err := b.store.ListPending(ctx, in.platform, in.Place.Channel, 0)
	if err != nil {
		b.log.Error("list the pending approvals for a person", "err", err)
		b.notify(in, waitingUnlisted())
		return
	}
	now := b.now()
	var lines []string
	for _, a := range list {
		if why, _ := b.refusal(in, a, approval.DecisionApprove); why != "" {
			continue
		}
		op, _, more := strings.Cut(b.operation(a.Tool, a.Args), "\n")
		if shown, cut := cutRunes(op, 80); cut || more {
			op = shown + " …"
		}
		lines = append(lines, "  "+a.ID+"  "+op+" (asked by "+a.Requester.Display()+", "+
			now.Sub(a.CreatedAt).Round(time.Second).String()+" ago; "+rules.Card(b.requirement(a), b.progress(a), b.mention(in.platform))+")")
	}
	if len(lines) == 0 {
		b.notify(in, nothingWaitsForYou())
		return
	}
	b.notify(in, waitingForYou(lines))
}
