package bot

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/oncall"
	"github.com/countersign/countersign/approval/rules"
)

// checkTimeout bounds what a decision waits for before anything changes:
// reading the approval and asking whether another replica had the click.
// A store slower than this refuses the click with a notice (fail closed).
const checkTimeout = 800 * time.Millisecond

// decision checks a decision against the channel's policy and, when it is
// allowed, hands it to the agent, which may run the call. It runs in the
// background (handle returned at once); the person hears privately, through
// the event's reply handle, of every decision that changed nothing.
func (b *Bot) decision(in inbound) {
	if in.Decision.Stop {
		b.stopCall(in, in.Decision.ApprovalID)
		return
	}
	d := *in.Decision
	d.ApprovalID = strings.ToLower(d.ApprovalID) // ids are lower case; a shouted one is the same id
	verb := approval.DecisionCancel
	if d.Approve {
		verb = approval.DecisionApprove
	}
	if !approval.ValidID(d.ApprovalID) {
		id, why := b.resolveID(in, d)
		if id == "" {
			b.refuseClick(in, nil, verb, "no approval has that id", why)
			return
		}
		d.ApprovalID = id
		in.Decision = &d
	}
	a, err := b.check(in, d.ApprovalID)
	if errors.Is(err, approval.ErrNotFound) {
		b.refuseClick(in, nil, verb, "no approval has that id", noApproval(d.ApprovalID))
		return
	}
	if err != nil {
		b.failPrivate(in, decisionUncheckable(), err)
		return
	}
	if a == nil {
		b.repeat(in, "another replica")
		return
	}
	if why, notice := b.refusal(in, a, verb); why != "" {
		b.refuseClick(in, a, verb, why, notice)
		return
	}
	if a.State != approval.Pending {
		// Too late: nothing changes, but the click is audited like any.
		b.auditClick(in, a, approval.KindClick, verb, approval.OutcomeLost, "already "+string(a.State))
		b.notify(in, alreadyDecided(a))
		return
	}
	req := b.requirement(a)
	if d.Approve && req.ReasonRequired(rules.Approve) && strings.TrimSpace(d.Reason) == "" ||
		!d.Approve && req.ReasonRequired(rules.Cancel) && strings.TrimSpace(d.Reason) == "" {
		b.refuseClick(in, a, verb, "no reason given where one is required", needReason(a.ID, d.Approve))
		return
	}
	if a.MessageRef == "" && d.Ref != "" && in.Place.Channel == a.Conversation.Channel {
		b.adoptRef(in, a.ID, d.Ref)
	}
	if d.Approve {
		b.approve(in, d, a, req)
		return
	}
	b.decide(in, d)
}

// approve counts an allowed approval (agent.Approve: every approval goes
// through the store's count, one needed or several) and tells the person
// privately what came of it when the card alone does not.
func (b *Bot) approve(in inbound, d adapters.Decision, a *approval.Approval, req rules.Requirement) {
	by := approval.User{ID: in.User.ID, Name: in.User.Display()}
	pol := b.cfg.policy(a.Conversation.Platform, a.Conversation.Channel)
	res, err := b.agent.Approve(b.work, d.ApprovalID, approval.Vote{
		By: by, At: b.now(), Reason: strings.TrimSpace(d.Reason), Need: req.Need, SelfApproval: !pol.secondPerson(),
	})
	if errors.Is(err, agent.ErrNotStarted) {
		b.failPrivate(in, approvalNotStarted(d.ApprovalID), err)
		return
	}
	if err != nil {
		b.failPrivate(in, approvalUnrecorded(d.ApprovalID), err)
		return
	}
	mention := b.mention(a.Conversation.Platform)
	switch {
	case res.Reasked:
		b.notify(in, reasked(res.Changed, res.Reset))
	case res.Refused == approval.RefusedRequester:
		b.notify(in, requesterRefused(req, res.Progress, mention))
	case res.Refused == approval.RefusedRepeat:
		b.notify(in, repeatRefused(req, res.Progress, mention))
	case !res.Won && !res.Counted && res.Approval != nil:
		b.notify(in, alreadyDecided(res.Approval))
	case res.Won && res.Approval != nil && res.Approval.State == approval.Expired:
		// The deadline passed between the card and the click: the
		// approval expired instead, and this person should know.
		b.notify(in, expiredBeforeApproval(d.ApprovalID))
	case res.Counted && !res.Won:
		b.notify(in, approvalCounted(d.ApprovalID, req, res.Progress, mention))
	}
}

// refusal is the one check every decision path makes, whatever its form
// (a click, typed words, a Stop button, !stop): it says why in.User may
// not make the decision verb on a (why, for the audit log, and the notice
// that tells them), or "" when they may. The platform's own facts (the
// person's workspace, groups and roles) come in the event from the
// adapter, for typed words as for clicks.
func (b *Bot) refusal(in inbound, a *approval.Approval, verb approval.AuditDecision) (why, notice string) {
	if a.Conversation.Platform != in.platform || a.Conversation.Channel != in.Place.Channel && !decidedElsewhere(a, in) {
		return "decision from another channel", otherChannel()
	}
	req := b.requirement(a)
	now := req // with the people on call now (oncall.go)
	var down []oncall.Entry
	now.Approvers, down = b.withOnCall(a.Conversation.Platform, req.Approvers)
	kind := rules.NotApprover
	if in.User.Outsider {
		why = "you belong to another workspace or organisation than this bot's"
	} else {
		why, kind = b.cfg.policy(a.Conversation.Platform, a.Conversation.Channel).refusalFor(now, in.User, a.Requester.ID, verb == approval.DecisionApprove)
	}
	if why == "" {
		return "", ""
	}
	if g := uncheckedGroups(in.User); g != "" && !in.User.Outsider {
		// The platform could not say whether they are in a group that
		// might allow it: one notice says so (the adapter sends none).
		why = groupUnchecked(g)
		return why, cannotJustNow(verb, a.ID, why)
	}
	if verb == approval.DecisionStop && !in.User.Outsider {
		why = stopNotAllowed()
		return why, cannotStop(a.ID, why, rules.Who(req.Approvers, b.mention(a.Conversation.Platform)))
	}
	if in.User.Outsider || strings.TrimSpace(in.User.ID) == "" {
		return why, cannot(verb, a.ID, why)
	}
	// The refusal names who can decide.
	var p approval.Progress
	if kind == rules.Requester {
		p = b.progress(a)
	}
	refusal := rules.Refusal(req, p, kind, b.mention(a.Conversation.Platform))
	if fell := onCallFellBack(req.Approvers, down); fell != "" {
		refusal += " " + fell
	}
	return why, cannotBy(verb, a.ID, refusal)
}

// adoptRef records the card a click was made on as its approval's card,
// when the record has none yet: the replica that posted it may not have
// recorded it (its post has not returned), and without it the winner of
// the decision would post a second card and leave the first one pending,
// buttons and all. The click is on the card's message, in the approval's
// own channel (checked), so it names the right one. A failure is only
// logged: the worst that follows is that second card.
func (b *Bot) adoptRef(in inbound, id, ref string) {
	ctx, cancel := context.WithTimeout(b.work, checkTimeout)
	defer cancel()
	if err := b.store.SetMessageRef(ctx, id, ref); err != nil {
		b.log.Warn("record the card a click was made on", "err", err, "approval", id, "ref", ref)
	}
}

// minPrefix is the shortest prefix of an approval id a decision may name.
const minPrefix = 4

// resolveID finds the card a typed decision means when it names no full
// id: a bare "approve" means the only card in this conversation that this
// person may decide; a shortened id, the only pending card of the channel
// whose id starts with it (found through the store's id index, however
// many are pending). It returns the id, or "" and the sentence that
// tells the person why none was found.
func (b *Bot) resolveID(in inbound, d adapters.Decision) (string, string) {
	ctx, cancel := context.WithTimeout(b.work, checkTimeout)
	defer cancel()
	if d.ApprovalID != "" && len(d.ApprovalID) < minPrefix {
		return "", "\"" + oneLine(d.ApprovalID, 40) + "\" names no card: give at least " + strconv.Itoa(minPrefix) + " characters of its id. Nothing changed."
	}
	var found []string
	if d.ApprovalID == "" {
		list, err := b.store.ListPending(ctx, in.platform, in.Place.Channel, 0)
		if err != nil {
			b.log.Error("list pending approvals for a typed decision", "err", err)
			return "", waitingUnfound()
		}
		verb := approval.DecisionCancel
		if d.Approve {
			verb = approval.DecisionApprove
		}
		for _, a := range list {
			if why, _ := b.refusal(in, a, verb); a.Conversation.Thread == in.Place.Thread && why == "" {
				found = append(found, a.ID)
			}
		}
		switch len(found) {
		case 0:
			return "", nothingWaitsHere()
		case 1:
			return found[0], ""
		}
		return "", severalWaitForYou(found)
	}
	// The store's id index: any number pending, two asked for to tell one
	// card from several (and up to five named when several match).
	list, err := b.store.FindPending(ctx, in.platform, in.Place.Channel, d.ApprovalID, 5)
	if err != nil {
		b.log.Error("find a pending approval by a shortened id", "err", err)
		return "", waitingUnfound()
	}
	for _, a := range list {
		found = append(found, a.ID)
	}
	switch len(found) {
	case 0:
		return "", noWaitingID(d.ApprovalID)
	case 1:
		return found[0], ""
	}
	return "", ambiguousID(d.ApprovalID, found)
}

// check reads the approval a decision names and asks the shared store
// whether another replica already had this click, both within
// checkTimeout. It returns a nil approval for a repeat.
func (b *Bot) check(in inbound, id string) (*approval.Approval, error) {
	ctx, cancel := context.WithTimeout(b.work, checkTimeout)
	defer cancel()
	a, err := b.store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if in.recovered {
		// Taken over from a dead process, which had recorded its delivery.
		return a, nil
	}
	first, err := b.firstDelivery(ctx, in)
	if err != nil {
		// Decide is atomic in the store: a click handled twice is told
		// "already decided", never run twice.
		b.log.Warn("could not check a decision for redelivery; handling it", "event", in.ID, "err", err)
		return a, nil
	}
	if !first {
		return nil, nil
	}
	return a, nil
}

// decide hands an allowed cancellation to the agent (every approval goes
// through approve, agent.Approve), and tells the person privately when it
// changed nothing or failed.
func (b *Bot) decide(in inbound, d adapters.Decision) {
	by := approval.User{ID: in.User.ID, Name: in.User.Display()}
	res, err := b.agent.Cancel(b.work, d.ApprovalID, by, d.Reason)
	if errors.Is(err, agent.ErrNotStarted) {
		b.failPrivate(in, approvalNotStarted(d.ApprovalID), err)
		return
	}
	if err != nil {
		b.failPrivate(in, decisionUnrecorded(d.ApprovalID), err)
		return
	}
	switch {
	case res.Reasked:
		b.notify(in, reasked(res.Changed, 0))
	case !res.Won && res.Approval != nil:
		b.notify(in, alreadyDecided(res.Approval))
	case d.Approve && res.Approval != nil && res.Approval.State == approval.Expired:
		// The deadline passed between the card and the click: the
		// approval expired instead, and this person should know.
		b.notify(in, expiredBeforeApproval(d.ApprovalID))
	}
}

// refuseClick tells the person privately why their decision changed
// nothing and audits the refused click.
func (b *Bot) refuseClick(in inbound, a *approval.Approval, verb approval.AuditDecision, why, notice string) {
	b.auditClick(in, a, approval.KindRefusedClick, verb, approval.OutcomeRefused, why)
	b.notify(in, notice)
}

// auditClick records a click that changed nothing; a failure is only
// logged, since nothing runs.
func (b *Bot) auditClick(in inbound, a *approval.Approval, kind approval.Kind, verb approval.AuditDecision, outcome approval.Outcome, why string) {
	ev := approval.Event{
		At:         b.now(),
		Kind:       kind,
		Actor:      in.User.ID,
		ApprovalID: decisionID(in, a),
		Decision:   verb,
		Outcome:    outcome,
		Channel:    in.Place.Channel,
		Detail:     why,
	}
	if a != nil {
		ev.Tool = a.Tool
		ev.Operation = b.operation(a.Tool, a.Args)
		ev.Rule = string(a.Verdict.Rule)
	}
	ctx, cancel := context.WithTimeout(b.work, checkTimeout)
	defer cancel()
	if err := b.store.Audit(ctx, ev); err != nil {
		b.log.Error("audit a click that changed nothing", "err", err, "kind", kind, "approval", ev.ApprovalID, "actor", ev.Actor)
	}
}

// decisionID is the approval a decision, a click or a typed !stop names.
func decisionID(in inbound, a *approval.Approval) string {
	switch {
	case a != nil:
		return a.ID
	case in.Decision != nil:
		return in.Decision.ApprovalID
	}
	return ""
}

// uncheckedPrefix marks, in User.Groups, a group the adapter could not
// check the person's membership of ("!unchecked:@oncall").
const uncheckedPrefix = "!unchecked:"

// uncheckedGroups names the groups u's platform could not check, or "".
func uncheckedGroups(u adapters.User) string {
	var names []string
	for _, g := range u.Groups {
		if name, ok := strings.CutPrefix(g, uncheckedPrefix); ok {
			names = append(names, name)
		}
	}
	return strings.Join(names, ", ")
}
