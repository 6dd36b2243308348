package bot

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/rules"
	"github.com/countersign/countersign/tools"
)

// stamp is how cards write a time.
const stamp = "15:04:05 UTC"

// maskedNote is the reason a card gives when its operation hides secrets.
const maskedNote = "secret values (credentials in headers and the URL) are shown as " + tools.Mask +
	"; what runs is the call as it was asked for"

// A card is drawn in two steps: the bot gathers what the card shows
// (cardFacts: the tool's words, the rules, the votes counted, which may
// be read from the store), and drawCard, a pure function, turns the
// record and the facts into the platform-neutral card. Sending it,
// reminders, the copy in an approval channel and the App Home are the
// bot's steps after it (sink.go: cardSent). The facts' readers
// (requirement, progress, deadEnd, mention, directOf) are at the end of
// this file, so that a card is read in one place.

// cardFacts is what a card shows besides the record.
type cardFacts struct {
	now       time.Time
	outputCap int
	title     string          // the tool's question ("Run this command?")
	op        tools.Operation // the operation as the tool shows it
	req       rules.Requirement
	votes     approval.Progress // the approvals counted so far
	editable  bool              // the tool has a direct command: the card offers Edit
	deadEnd   bool              // nobody else sees the conversation
	mention   rules.Mention
	progress  *tools.Progress // a running call's live progress, or nil
	onCallOut string          // a pending card's on-call services that could not say (oncall.go), in words
}

// card draws a's card; p is the live progress of a running call, or nil.
func (b *Bot) card(a *approval.Approval, p *tools.Progress) adapters.Card {
	return drawCard(a, b.facts(a, p))
}

// facts gathers what a's card shows. The votes are read only where the
// card shows them (a pending card, or who approved a call that needed
// more than one).
func (b *Bot) facts(a *approval.Approval, p *tools.Progress) cardFacts {
	f := cardFacts{
		now: b.now(), outputCap: b.cfg.CardOutput, progress: p,
		title: "Run " + a.Tool + "?", op: tools.Operation{Text: string(a.Args)},
		req: b.requirement(a), deadEnd: b.deadEnd(a), mention: b.mention(a.Conversation.Platform),
	}
	if b.tools != nil {
		f.title, f.op = b.tools.Title(a.Tool), b.tools.Operation(a.Tool, a.Args)
	}
	_, f.editable = b.directOf(a.Tool)
	if a.State == approval.Pending {
		_, down := b.withOnCall(a.Conversation.Platform, f.req.Approvers)
		f.onCallOut = onCallFellBack(f.req.Approvers, down)
	}
	if a.State == approval.Pending || (a.Requirement.Need > 1 && a.State != approval.Cancelled && a.State != approval.Expired) {
		f.votes = b.progress(a)
	}
	return f
}

// drawCard is a's card as f shows it; it does no I/O.
func drawCard(a *approval.Approval, f cardFacts) adapters.Card {
	now, outputCap, p := f.now, f.outputCap, f.progress
	title, op := f.title, f.op
	c := adapters.Card{
		ApprovalID:   a.ID,
		Title:        title,
		Requester:    who(a.Requester),
		Conversation: a.Conversation.Channel,
		Tool:         a.Tool,
		Operation:    op.Text,
		Risk:         string(a.Verdict.Risk),
		Reasons:      a.Verdict.Reasons,
		LLMLevel:     string(a.Verdict.LLMLevel),
		ExpiresAt:    a.ExpiresAt,
		State:        string(a.State),
	}
	if c.Risk == "" {
		c.Risk = "unknown"
	}
	if op.Masked {
		c.Reasons = append(c.Reasons[:len(c.Reasons):len(c.Reasons)], maskedNote)
	}
	if pv := a.Preview; pv != nil {
		c.Preview = &adapters.Preview{Summary: pv.Summary, Items: pv.Items, Err: pv.Err}
		if pv.Total > len(pv.Items) {
			c.Preview.More = pv.Total - len(pv.Items)
		}
		if pv.Truncated && c.Preview.More == 0 && pv.Err == "" {
			c.Preview.Summary = strings.TrimSpace(c.Preview.Summary + " (list cut short)")
		}
	}

	decided := ""
	if a.DecidedBy != nil {
		decided = " by " + who(*a.DecidedBy)
	}
	at := ""
	if !a.DecidedAt.IsZero() {
		at = " at " + a.DecidedAt.UTC().Format(stamp)
	}
	approvedBy := decided
	if a.Requirement.Need > 1 && a.State != approval.Pending && a.State != approval.Cancelled && a.State != approval.Expired {
		// Everyone whose approval counted, in order.
		if f.votes.Have() > 1 {
			approvedBy = " by " + approvers(a.DecidedBy, f.votes)
		}
	}
	if a.Reason != "" && a.State != approval.Cancelled {
		approvedBy += " (" + a.Reason + ")"
	}
	c.Title = headline(a, c.Title, f.votes)
	switch a.State {
	case approval.Pending:
		req := f.req
		c.StateLine = "waiting for a decision · " + rules.Card(req, f.votes, f.mention)
		if f.onCallOut != "" {
			c.StateLine += " " + f.onCallOut
		}
		c.Buttons = []adapters.Button{
			{Label: "Approve", Approve: true, Value: a.ID, Reason: req.ReasonRequired(rules.Approve)},
			{Label: "Cancel", Value: a.ID, Reason: req.ReasonRequired(rules.Cancel)},
		}
		if f.editable {
			c.Buttons = append(c.Buttons, adapters.Button{Label: "Edit", Edit: true, Value: a.ID})
		}
		if f.deadEnd {
			// Nobody else sees this conversation, and the requester's own
			// approval does not count: say where it can be decided, and
			// offer only what the requester can do.
			c.StateLine = "waiting · " + rules.DeadEnd(req, f.mention)
			c.Buttons = c.Buttons[1:]
		}
	case approval.Approved:
		c.StateLine = "approved" + approvedBy + at + " · starting"
	case approval.Running:
		c.StateLine = "approved" + approvedBy + at + " · running"
		c.Buttons = []adapters.Button{{Label: "Stop", Stop: true, Value: a.ID}}
		var elapsed time.Duration
		if p != nil {
			elapsed = time.Duration(p.ElapsedMS) * time.Millisecond
			c.Output, c.Note = capOutput(p.Tail, outputCap, "")
		} else if !a.StartedAt.IsZero() {
			elapsed = now.Sub(a.StartedAt)
		}
		if elapsed > 0 {
			c.StateLine += " for " + elapsed.Round(time.Second).String()
		}
	case approval.Done, approval.Failed:
		c.StateLine = "approved" + approvedBy + at + " · " + outcome(a)
		if a.Result != nil {
			full := a.Result.Output()
			c.Output, c.Note = capOutput(full, outputCap, a.Result.Note)
			if len(c.Output) < len(full) {
				c.FullOutput = full
			}
		}
	case approval.Cancelled:
		c.StateLine = "cancelled" + decided + at
		if a.Reason != "" {
			c.StateLine += ": " + a.Reason
		}
	case approval.Expired:
		c.StateLine = "expired" + at + ": nobody decided in time"
	default:
		c.StateLine = string(a.State)
	}
	return c
}

// headline is a card's title: the tool's question while the card waits
// ("Run this command?"), and what happened once something did (ran,
// failed, stopped, cancelled, expired, by whom: every approver whose
// approval counted), so that a finished card never still asks.
func headline(a *approval.Approval, question string, votes approval.Progress) string {
	by := ""
	if a.DecidedBy != nil {
		by = " by " + a.DecidedBy.Display()
	}
	if a.State != approval.Cancelled && a.State != approval.Expired {
		if names := approvers(a.DecidedBy, votes); names != "" {
			by = " by " + names
		}
	}
	switch a.State {
	case approval.Approved:
		return "Approved" + by + ": starting"
	case approval.Running:
		return "Running: approved" + by
	case approval.Done:
		if r := a.Result; r != nil && !r.Executed {
			// Another agent's call to decide (gateway /v1/decide, a hook):
			// approved here, run by the agent itself.
			return "Approved" + by + ": the agent runs it"
		}
		return "Ran: approved" + by
	case approval.Failed:
		if r := a.Result; r != nil && strings.HasPrefix(r.Error, "stopped by ") {
			return "Stopped " + strings.TrimSuffix(strings.TrimPrefix(r.Error, "stopped "), " while it ran")
		}
		if r := a.Result; r != nil && !r.Executed {
			return "Did not run: approved" + by
		}
		return "Failed: approved" + by
	case approval.Cancelled:
		if strings.HasPrefix(a.Reason, replacedPrefix) && a.DecidedBy != nil {
			return "Replaced by " + a.DecidedBy.Display() + "'s edit"
		}
		return "Cancelled" + by
	case approval.Expired:
		return "Expired: nobody decided in time"
	}
	return question
}

// who names a person on a card by name ("alice"), never by the
// platform's id (the id only when no name is known); a card that must
// reach someone pings them through Content.Mentions, not its text.
func who(u approval.User) string { return u.Display() }

// approvers names everyone whose approval counted, in order ("bob and
// carol"); by alone when one approval was needed or the votes are not
// known.
func approvers(by *approval.User, votes approval.Progress) string {
	if votes.Have() > 1 {
		names := make([]string, 0, votes.Have())
		for _, v := range votes.Votes {
			names = append(names, who(v.By))
		}
		return and(names)
	}
	if by == nil {
		return ""
	}
	return who(*by)
}

// and joins names as a sentence does: "a", "a and b", "a, b and c".
func and(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// outcome says how a finished run ended: "done: exit code 0 in 12ms".
func outcome(a *approval.Approval) string {
	word := "done"
	if a.State == approval.Failed {
		word = "failed"
	}
	r := a.Result
	if r == nil {
		return word
	}
	s := word
	if o := r.OutcomeWithError(); o != "" {
		s += ": " + o // the words the chat uses too (tools.Result.Outcome)
	}
	d := time.Duration(r.DurationMS) * time.Millisecond
	if d == 0 && r.Executed && a.State == approval.Failed && !a.StartedAt.IsZero() && !a.EndedAt.IsZero() {
		// A run cut off or lost (its replica died): the tool never said how
		// long it ran, and the time until it was recorded is not its run
		// time. Show what is known.
		return s + " · started " + a.StartedAt.UTC().Format(stamp) + ", recorded " + a.EndedAt.UTC().Format(stamp)
	}
	if d == 0 && !a.StartedAt.IsZero() && !a.EndedAt.IsZero() {
		d = a.EndedAt.Sub(a.StartedAt)
	}
	return s + " in " + d.String()
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// capOutput cuts s to limit bytes at a line or rune boundary and says so;
// toolNote is the tool's own note about its cap, kept.
func capOutput(s string, limit int, toolNote string) (shown, note string) {
	shown, cut := tools.CapText(s, limit)
	var notes []string
	if toolNote != "" {
		notes = append(notes, toolNote)
	}
	if cut {
		notes = append(notes, fmt.Sprintf("output cut to the first %d of %d bytes on this card", len(shown), len(s)))
	}
	return shown, strings.Join(notes, "; ")
}

// requirement is what approval a needs as it stands now: the requirement
// stored with it (the channel's approvers and one approval for a record
// made before rules), escalated once its escalation time has passed.
func (b *Bot) requirement(a *approval.Approval) rules.Requirement {
	p := b.cfg.policy(a.Conversation.Platform, a.Conversation.Channel)
	return rules.FromRecord(a.Requirement, a.CreatedAt, p.Approvers).At(a.CreatedAt, b.now())
}

// progress reads how far approval a is towards its count; a store that
// fails to say gives none, which only costs the picture, as does a bot
// with no store (a test of how cards are drawn).
func (b *Bot) progress(a *approval.Approval) approval.Progress {
	if a == nil || b.store == nil {
		return approval.Progress{}
	}
	ctx, cancel := context.WithTimeout(b.work, checkTimeout)
	defer cancel()
	p, err := b.store.Progress(ctx, a.ID)
	if err != nil {
		b.log.Warn("read the approvals counted so far", "err", err, "approval", a.ID)
		return approval.Progress{}
	}
	return p
}

// mention writes an approver entry as the platform of a conversation
// shows it. Every platform gets the plain form for now ("@dba").
func (b *Bot) mention(string) rules.Mention { return rules.Plain }

// deadEnd reports whether approval a waits in a direct conversation where
// nobody but its requester sees the card and the requester's own approval
// does not count (require_second_person): nobody could approve it there.
func (b *Bot) deadEnd(a *approval.Approval) bool {
	return a.Conversation.Direct && b.cfg.policy(a.Conversation.Platform, a.Conversation.Channel).secondPerson()
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
