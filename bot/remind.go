package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/rules"
)

// This file nudges (issue 19): at a card's remind time (posted +
// remind_after) the approvers who have not decided are mentioned once in
// its thread; at its escalation time (posted + escalate_after) the people
// of escalate_to join the approvers, the card says so, and they are
// mentioned. Once across replicas: the first replica to claim
// "remind:<id>" (or "escalate:<id>") in the store's dedupe says it. The
// times are stored on the approval (its Requirement), so a card drawn
// before a restart, or by another replica, is still nudged: the sweep
// reads the store's pending approvals (its due index, scan) at start and
// every nudgeScan, and the record of each id it has not read before; the
// cards this process drew come with their times (Bot.drew: the listing
// holds only the cardsMax that end first), watched at the next sweep
// without a read. Between scans it looks at the cards known to have a
// nudge to come (nudges), so each check costs one read of a record that
// is due. Nothing registers a card here: the store's pending records, and
// the cards the card step queued, are the list.

// nudges are the cards this process showed with a reminder or an
// escalation still to come: approval id → the record's requirement times.
type nudges struct {
	mu sync.Mutex
	m  map[string]nudge
	// read holds the pending ids whose record the last scans read (with
	// a nudge or none); scanned is when the store was last scanned.
	read    map[string]bool
	scanned time.Time
}

// nudgeScan is how often the sweep reads the store's pending approvals
// when this process drew no card since (one another replica drew may
// have a nudge).
const nudgeScan = 30 * time.Second

// scanNudges watches the cards this process drew since the last sweep
// (Bot.drew, their times in hand: the store's listing, holding only the
// cardsMax that end first, may not reach them), and every nudgeScan reads
// the store's pending approvals (the cards another replica drew, or this
// one before a restart), watching the ones not read before that have a
// nudge to come.
func (b *Bot) scanNudges(ctx context.Context, now time.Time) {
	n := &b.nudges
	refused := 0
	for _, d := range drained(b.drew) {
		if !n.watch(d) {
			refused++
			b.again(d) // watched at a later sweep, when a slot may be free
			continue
		}
		n.mu.Lock()
		if n.read == nil {
			n.read = map[string]bool{}
		}
		n.read[d.id] = true
		n.mu.Unlock()
	}
	defer func() {
		if refused > 0 {
			b.log.Warn("too many cards wait for a reminder; these are tried again at a later sweep", "cards", refused, "max", cardsMax)
		}
	}()
	n.mu.Lock()
	full := n.scanned.IsZero() || now.Sub(n.scanned) >= nudgeScan
	if full {
		n.scanned = now
	}
	n.mu.Unlock()
	if !full {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	// Every pending approval is in the due index; its farthest end lists them all.
	ids, err := b.store.Due(ctx, time.Unix(1<<40, 0), cardsMax)
	if err != nil {
		b.log.Warn("list the pending approvals for their reminders; trying at the next scan", "err", err)
		n.mu.Lock()
		n.scanned = time.Time{}
		n.mu.Unlock()
		return
	}
	n.mu.Lock()
	read := make(map[string]bool, len(ids)) // the listing says which are still pending
	var fresh []string
	for _, id := range ids {
		if n.read[id] {
			read[id] = true
		} else {
			fresh = append(fresh, id)
		}
	}
	n.read = read
	n.mu.Unlock()
	for _, id := range fresh {
		if ctx.Err() != nil {
			return // the ids not read are listed again at the next scan
		}
		a, err := b.store.Get(ctx, id)
		if err != nil {
			continue // gone, or the store failed: the next scan lists it again
		}
		if a.State != approval.Pending {
			continue
		}
		if !n.watch(nudgeCardOf(a)) {
			refused++ // not marked read: the next scan tries it again
			continue
		}
		n.mu.Lock()
		n.read[id] = true
		n.mu.Unlock()
	}
}

// nudgeCard is what the reminders need of a pending card: its id and the
// times of its nudges.
type nudgeCard struct {
	id                   string
	remindAt, escalateAt time.Time
}

func nudgeCardOf(a *approval.Approval) nudgeCard {
	return nudgeCard{id: a.ID, remindAt: a.Requirement.RemindAt, escalateAt: a.Requirement.EscalateAt}
}

type nudge struct {
	remindAt, escalateAt time.Time
	reminded, escalated  bool
}

// watch remembers a waiting card's nudges; it reports false when the card
// has a nudge to come but cardsMax cards are watched already.
func (n *nudges) watch(d nudgeCard) bool {
	if d.remindAt.IsZero() && d.escalateAt.IsZero() {
		return true
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.m == nil {
		n.m = map[string]nudge{}
	}
	if _, ok := n.m[d.id]; ok {
		return true
	}
	if len(n.m) >= cardsMax {
		return false
	}
	n.m[d.id] = nudge{remindAt: d.remindAt, escalateAt: d.escalateAt}
	return true
}

// again puts d back in Bot.drew for a later sweep; when it is full, the
// store's listing is what finds the card, which is said.
func (b *Bot) again(d nudgeCard) {
	select {
	case b.drew <- d:
	default:
		b.log.Warn("too many new cards wait for their reminders; this one is reminded only if the store lists it", "approval", d.id)
	}
}

// drained is what waits in ds, without waiting for more.
func drained(ds chan nudgeCard) []nudgeCard {
	var out []nudgeCard
	for {
		select {
		case d := <-ds:
			out = append(out, d)
		default:
			return out
		}
	}
}

// due returns the ids with a nudge due at now.
func (n *nudges) due(now time.Time) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var ids []string
	for id, g := range n.m {
		if !g.reminded && !g.remindAt.IsZero() && !now.Before(g.remindAt) ||
			!g.escalated && !g.escalateAt.IsZero() && !now.Before(g.escalateAt) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// done marks what was said of id; gone forgets it.
func (n *nudges) done(id string, reminded, escalated bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	g, ok := n.m[id]
	if !ok {
		return
	}
	g.reminded = g.reminded || reminded
	g.escalated = g.escalated || escalated
	if (g.reminded || g.remindAt.IsZero()) && (g.escalated || g.escalateAt.IsZero()) {
		delete(n.m, id)
		return
	}
	n.m[id] = g
}

func (n *nudges) gone(id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.m, id)
}

// remind says the nudges that are due (the bot's sweep calls it).
func (b *Bot) remind(ctx context.Context) {
	now := b.now()
	b.scanNudges(ctx, now)
	for _, id := range b.nudges.due(now) {
		if ctx.Err() != nil {
			return
		}
		b.nudge(ctx, id, now)
	}
}

// nudge says the reminder or escalation of one card that is due, once
// across replicas.
func (b *Bot) nudge(ctx context.Context, id string, now time.Time) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	a, err := b.store.Get(ctx, id)
	switch {
	case errors.Is(err, approval.ErrNotFound) || err == nil && a.State != approval.Pending:
		b.nudges.gone(id)
		return
	case err != nil:
		b.log.Warn("read a card for its reminder; trying at the next sweep", "err", err, "approval", id)
		return
	}
	r := a.Requirement
	escalate := !r.EscalateAt.IsZero() && !now.Before(r.EscalateAt)
	remind := !r.RemindAt.IsZero() && !now.Before(r.RemindAt)
	key, word := "remind:"+id, "remind"
	if escalate {
		// An escalation says what a reminder would, and more.
		key, word = "escalate:"+id, "escalate"
	}
	first, err := b.store.FirstDelivery(ctx, key, time.Until(a.ExpiresAt)+time.Hour)
	if err != nil {
		b.log.Warn("could not claim a card's "+word+"; trying at the next sweep", "err", err, "approval", id)
		return
	}
	b.nudges.done(id, remind || escalate, escalate)
	if !first {
		return // another replica said it
	}
	req := b.requirement(a)
	// Whoever is on call now is pinged by name (oncall.go); an on-call
	// entry itself pings nobody.
	req.Approvers, _ = b.withOnCall(a.Conversation.Platform, req.Approvers)
	req.EscalateTo, _ = b.withOnCall(a.Conversation.Platform, req.EscalateTo)
	p := b.progress(a)
	text, mentions := nudgeText(a, b.operation(a.Tool, a.Args), req, p, b.mention(a.Conversation.Platform), escalate)
	if escalate {
		if err := b.UpdateCard(ctx, a, nil); err != nil {
			b.log.Warn("redraw an escalated card", "err", err, "approval", id)
		}
	}
	if err := b.replyMentioning(ctx, a.Conversation, text, mentions); err != nil {
		b.log.Warn("post a card's "+word, "err", err, "approval", id)
	}
	ev := approval.Event{At: now, Kind: approval.KindCard, Actor: "countersign", ApprovalID: id, Tool: a.Tool,
		Channel: a.Conversation.Channel, Outcome: approval.Outcome(word), Detail: text}
	if err := b.store.Audit(ctx, ev); err != nil {
		b.log.Error("audit a card's "+word, "err", err, "approval", id)
	}
}

// undecided are the approvers who have not decided: people who have not
// voted, and every group (its other members may).
func undecided(req rules.Requirement, p approval.Progress) []string {
	var left []string
	for _, e := range req.Approvers {
		user := strings.TrimPrefix(strings.TrimSpace(e), "user:")
		if strings.Contains(user, ":") || !p.Approved(user) {
			left = append(left, e)
		}
	}
	return left
}

// nudgeText is what a reminder or an escalation of a says, and whom it
// pings (Content.Mentions, which the adapter renders ahead of the text:
// "@oncall Reminder: …"). It pings only those who may still decide: the
// people who have not voted, and each group (its other members may);
// an escalation pings escalate_to first. The text names nobody the ping
// names already; an escalation names escalate_to, who are new to the
// card. It does no I/O.
func nudgeText(a *approval.Approval, op string, req rules.Requirement, p approval.Progress, mention rules.Mention, escalate bool) (string, []string) {
	left := undecided(req, p)
	head := "approval " + a.ID + " (" + oneLine(op, 80) + ")"
	if !escalate {
		return "Reminder: " + head + " still waits for a decision (" + counted(req, p) + "): approve or cancel it.", left
	}
	mentions := slices.Clone(req.EscalateTo)
	for _, e := range left {
		if !slices.Contains(mentions, e) {
			mentions = append(mentions, e)
		}
	}
	return "Escalated: " + head + " has waited since " + a.CreatedAt.UTC().Format(stamp) + "; " +
		rules.Who(req.EscalateTo, mention) + " may now decide it too (" + counted(req, p) + ").", mentions
}

// counted says how far a card's count is: "no approval yet, 1 needed",
// "1 of 2 approvals".
func counted(req rules.Requirement, p approval.Progress) string {
	need := max(req.Need, p.Need, 1)
	if p.Have() == 0 {
		return fmt.Sprintf("no approval yet, %d needed", need)
	}
	return fmt.Sprintf("%d of %d approvals", p.Have(), need)
}

// replyMentioning posts text into a conversation with mentions of the
// approver entries, which the adapter renders (adapters.Content.Mentions).
func (b *Bot) replyMentioning(ctx context.Context, conv approval.Conversation, text string, mentions []string) error {
	ad, err := b.adapter(ctx, conv.Platform, "")
	if err != nil {
		return err
	}
	if _, err := ad.Post(ctx, place(conv), adapters.Content{Text: text, Mentions: mentions}); err != nil {
		return fmt.Errorf("post in %s: %w", conv.Key(), err)
	}
	return nil
}
