package bot

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/rules"
)

// What the web console (bot/console) asks of the bot. The console acts for
// one chat user of one platform: it lists the cards that person may see,
// and hands their decisions and edits to the bot as events of that
// platform, so that every decision goes through the one check a click in
// chat takes (decision, refusal); the console checks no permission itself.

// Login makes the one-time sign-in link of the web console for the chat
// user who typed !login; nil means no console is configured.
type Login func(ctx context.Context, who ConsoleUser) (link string, err error)

// ConsoleUser is whom the console acts for: a chat user of a platform, as
// the platform reported them when they typed !login, and the channel they
// typed it in.
type ConsoleUser struct {
	Platform string
	User     adapters.User
	// Channel is where they typed !login: the one channel the console
	// knows them to be in ("" after a sign-in through OIDC).
	Channel string
}

// consoleUnseen is why the console refuses a card of a channel whose
// policy lets anyone in it decide, for a person it does not know to be in
// that channel: in chat only its members see the card's buttons, and the
// console cannot ask the platform who they are. It is "" when the
// channel names its approvers (the list decides, in the one check), when
// the person typed !login there, or asked for the card there.
func (b *Bot) consoleUnseen(who ConsoleUser, a *approval.Approval) string {
	approvers := b.cfg.policy(a.Conversation.Platform, a.Conversation.Channel).Approvers
	open := len(approvers) == 0
	for _, e := range approvers {
		open = open || strings.TrimSpace(e) == "*"
	}
	if !open || who.User.ID == a.Requester.ID && who.User.ID != "" ||
		who.Channel != "" && (who.Channel == a.Conversation.Channel || who.Channel == approvalChannel(a)) {
		return ""
	}
	return "anyone in that channel may decide its cards, and the console does not know you are in it"
}

// consoleListMax bounds the pending approvals one console listing reads.
const consoleListMax = 500

// PendingCard is a pending approval as the console shows it: the card
// exactly as the chat draws it (the same presenter), who asked, and how far
// its count is.
type PendingCard struct {
	Card      adapters.Card
	Platform  string
	Channel   string
	Thread    string
	Requester string // the requester's id
	Asked     time.Time
	// Needs says how far the count is and who else may decide, as the
	// card's own line does.
	Needs string
	// Votes are the people whose approval counts so far.
	Votes []string
	// MayApprove and MayCancel are the one check's answer for this person
	// now; the decision is checked again when it is made.
	MayApprove, MayCancel bool
	// ReasonToApprove and ReasonToCancel: a rule wants a reason with
	// that decision.
	ReasonToApprove, ReasonToCancel bool
}

// ConsolePending lists, oldest first, the pending approvals of platform
// that u may approve or cancel, or that u asked for, across every channel,
// replica and restart (read from the store). A card of a channel u may not
// decide in and did not ask in is never listed.
func (b *Bot) ConsolePending(ctx context.Context, who ConsoleUser) ([]PendingCard, error) {
	platform, u := who.Platform, who.User
	// Every pending approval has a deadline: the due ones at the end of
	// time are all of them (remind.go reads them the same way).
	ids, err := b.store.Due(ctx, time.Unix(1<<40, 0), consoleListMax)
	if err != nil {
		return nil, err
	}
	var out []PendingCard
	for _, id := range ids {
		a, err := b.store.Get(ctx, id)
		if errors.Is(err, approval.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if a.State != approval.Pending || a.Conversation.Platform != platform || b.consoleUnseen(who, a) != "" {
			continue
		}
		in := consoleIn(platform, u, a)
		whyA, _ := b.refusal(in, a, approval.DecisionApprove)
		whyC, _ := b.refusal(in, a, approval.DecisionCancel)
		if whyA != "" && whyC != "" && a.Requester.ID != u.ID {
			continue
		}
		p, req := b.progress(a), b.requirement(a)
		var votes []string
		for _, v := range p.Votes {
			votes = append(votes, v.By.Display())
		}
		out = append(out, PendingCard{
			Card: b.card(a, nil), Platform: platform, Channel: a.Conversation.Channel, Thread: a.Conversation.Thread,
			Requester: a.Requester.ID, Asked: a.CreatedAt,
			Needs: rules.Card(req, p, b.mention(platform)), Votes: votes,
			MayApprove: whyA == "", MayCancel: whyC == "",
			ReasonToApprove: req.ReasonRequired(rules.Approve), ReasonToCancel: req.ReasonRequired(rules.Cancel),
		})
	}
	return out, nil
}

// ConsoleMayRead reports whether who may read the history of a channel:
// they are among the approvers its policy names, or it names none (anyone
// in it) and they typed !login there; and not of another workspace.
func (b *Bot) ConsoleMayRead(who ConsoleUser, channel string) bool {
	if who.User.Outsider {
		return false
	}
	approvers := b.cfg.policy(who.Platform, channel).Approvers
	if len(approvers) == 0 || slices.Contains(approvers, "*") {
		return who.Channel == channel
	}
	return mayDecide(approvers, who.User)
}

// consoleIn is the event a console user's decision on a makes: in a's own
// conversation, as that person.
func consoleIn(platform string, u adapters.User, a *approval.Approval) inbound {
	return inbound{platform: platform, Event: adapters.Event{
		ID: "console-" + newRef() + newRef(), User: u,
		Place: adapters.Place{Channel: a.Conversation.Channel, Thread: a.Conversation.Thread},
	}}
}

// ConsoleAnswer is what came of a console user's decision or edit: the
// notices the bot sent that person (a refusal, a count, "already
// decided"), in order; none when the card alone shows the outcome.
type ConsoleAnswer struct {
	Notices []string
}

// consoleReply is the reply handle of an event the console made: the
// notices answering it are collected for the browser instead of sent to
// the platform.
type consoleReply struct {
	mu      sync.Mutex
	notices []string
}

func (r *consoleReply) add(text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notices = append(r.notices, text)
}

// answer is what the notices so far say.
func (r *consoleReply) answer() ConsoleAnswer {
	r.mu.Lock()
	defer r.mu.Unlock()
	return ConsoleAnswer{Notices: append([]string(nil), r.notices...)}
}

// ConsoleDecide hands the bot u's decision d on the platform, made in the
// console, as a decision event in the approval's own conversation: the
// same check and the same path as a click or the typed words, and it
// returns when the bot is done with it. d.Stop is refused: the console
// has no Stop.
func (b *Bot) ConsoleDecide(ctx context.Context, who ConsoleUser, d adapters.Decision) (ConsoleAnswer, error) {
	if d.Stop {
		return ConsoleAnswer{}, errors.New("the console cannot stop a run; use !stop in the chat")
	}
	if err := b.consoleOpen(); err != nil {
		return ConsoleAnswer{}, err
	}
	a, err := b.consoleTarget(ctx, d.ApprovalID)
	if err != nil {
		return ConsoleAnswer{}, err
	}
	in := consoleIn(who.Platform, who.User, a)
	r := &consoleReply{}
	in.Reply = r
	in.Decision = &d
	if why := b.consoleUnseen(who, a); why != "" {
		verb := approval.DecisionCancel
		if d.Approve {
			verb = approval.DecisionApprove
		}
		b.refuseClick(in, a, verb, why, cannotInConsole(verb, a.ID, why))
		return r.answer(), nil
	}
	b.inflight.Add(1)
	func() {
		defer b.inflight.Done()
		b.safely(in, func() { b.decision(in) })
	}()
	return r.answer(), nil
}

// ConsoleEdit hands the bot u's edit of a waiting card (as "edit <id>
// <operation>" typed in its conversation): the edited call is judged
// afresh, as the editor's, and its card is posted in the conversation.
func (b *Bot) ConsoleEdit(ctx context.Context, who ConsoleUser, id, operation string) (ConsoleAnswer, error) {
	if err := b.consoleOpen(); err != nil {
		return ConsoleAnswer{}, err
	}
	a, err := b.consoleTarget(ctx, id)
	if err != nil {
		return ConsoleAnswer{}, err
	}
	in := consoleIn(who.Platform, who.User, a)
	r := &consoleReply{}
	in.Reply = r
	in.Text = "!edit " + id + " " + strings.TrimSpace(operation)
	if why := b.consoleUnseen(who, a); why != "" {
		return ConsoleAnswer{Notices: []string{"You cannot edit " + a.ID + " here: " + why + ". Edit it in the channel, or type !login there. Nothing changed."}}, nil
	}
	b.inflight.Add(1)
	func() {
		defer b.inflight.Done()
		b.safely(in, func() { b.edit(b.work, in, id+" "+strings.TrimSpace(operation)) })
	}()
	return r.answer(), nil
}

// errShutdown refuses a console decision while the bot shuts down.
var errShutdown = errors.New("this bot is shutting down, so it takes no decision now; decide again in a moment (on another replica, or once it is back)")

// consoleOpen refuses new console work once the bot is shutting down: no
// new work then, as for queued messages.
func (b *Bot) consoleOpen() error {
	if b.stopping.Load() || b.work.Err() != nil {
		return errShutdown
	}
	return nil
}

// consoleTarget reads the approval a console decision names, within
// checkTimeout: its conversation is where the decision is made.
func (b *Bot) consoleTarget(ctx context.Context, id string) (*approval.Approval, error) {
	id = strings.ToLower(strings.TrimSpace(id))
	if !approval.ValidID(id) {
		return nil, errors.New("no approval has the id " + oneLine(id, 40))
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	return b.store.Get(ctx, id)
}

// login answers !login privately with the console's one-time link.
func (b *Bot) login(in inbound) {
	if b.loginLink == nil {
		b.notify(in, consoleOff())
		return
	}
	ctx, cancel := context.WithTimeout(b.work, checkTimeout*4)
	defer cancel()
	link, err := b.loginLink(ctx, ConsoleUser{Platform: in.platform, User: in.User, Channel: in.Place.Channel})
	if err != nil {
		b.failPrivate(in, loginUnmade(), err)
		return
	}
	b.notify(in, loginLink(link, in.User.Display(), in.platform))
}
