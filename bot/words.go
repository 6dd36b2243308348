package bot

// The sentences a person reads: private notices (notify, failPrivate,
// refuseClick) and messages in the conversation (say, fail). Each is
// composed here, by a pure function named for what it says, so that the
// wording lives in one place; the call sites only choose which to send.
// Tests match many of these sentences byte for byte.

import (
	"strconv"
	"strings"
	"time"

	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/oncall"
	"github.com/countersign/countersign/approval/rules"
	"github.com/countersign/countersign/tools"
)

// ----- Decisions (approve, cancel, by click or typed) -----

// noApproval says a decision named an id no approval has (any more).
func noApproval(id string) string {
	return "There is no approval " + id + " (it may have been cleaned up)."
}

// decisionUncheckable says the store could not be read for a decision.
func decisionUncheckable() string {
	return "I could not check that decision just now, so nothing changed; try again in a moment"
}

// otherChannel says the approval belongs to another channel.
func otherChannel() string {
	return "That approval belongs to another channel; decide on it there. Nothing changed."
}

// groupUnchecked is why a decision needing unchecked groups g is refused.
func groupUnchecked(g string) string {
	return "I could not check whether you are in the user group " + g + ", so a decision that needs that group is refused until the platform answers; try again in a minute"
}

// cannotJustNow says a decision is refused for now, and why.
func cannotJustNow(verb approval.AuditDecision, id, why string) string {
	return "You cannot " + string(verb) + " " + id + " just now: " + why + ". Nothing changed."
}

// stopNotAllowed is why a person may not stop a call.
func stopNotAllowed() string {
	return "only the person who asked for it or an approver of this call can stop it"
}

// cannotStop says a person may not stop id, and who may.
func cannotStop(id, why, who string) string {
	return "You cannot stop " + id + ": " + why + " (" + who + "). Nothing changed."
}

// cannot says a decision is refused, and why.
func cannot(verb approval.AuditDecision, id, why string) string {
	return "You cannot " + string(verb) + " " + id + ": " + why + ". Nothing changed."
}

// cannotBy says a decision is refused, in the words of the card's rules.
func cannotBy(verb approval.AuditDecision, id, refusal string) string {
	return "You cannot " + string(verb) + " " + id + ": " + refusal + " Nothing changed."
}

// onCallFellBack says, on a card and after a refusal, that the services
// of the on-call entries down could not say who is on call, so the other
// approvers of the list decide, or, when it has none, nobody can approve
// until they answer; "" when none is down.
func onCallFellBack(approvers []string, down []oncall.Entry) string {
	if len(down) == 0 {
		return ""
	}
	names := make([]string, len(down))
	for i, e := range down {
		names[i] = e.Title() + " (schedule " + e.Schedule + ")"
	}
	s := strings.Join(names, " and ") + " could not say who is on call just now"
	if len(approvers) > len(down) {
		return s + ", so the other approvers listed decide until it answers."
	}
	return s + ", so nobody can approve this until it answers; the requester can still cancel it."
}

// cannotInConsole says a console decision is refused, and where to decide.
func cannotInConsole(verb approval.AuditDecision, id, why string) string {
	return "You cannot " + string(verb) + " " + id + " here: " + why + ". Decide in the channel, or type !login there. Nothing changed."
}

// needReason tells a person whose decision needs a reason how to give one.
func needReason(id string, approve bool) string {
	verb := "cancel"
	if approve {
		verb = "approve"
	}
	return "A reason is required to " + verb + " " + id + ": type `" + verb + " " + id + " <reason>` (or give one in the box the button opens). Nothing changed."
}

// approvalNotStarted says an approval is recorded but its call did not start.
func approvalNotStarted(id string) string {
	return "Your approval of " + id + " is recorded, but I could not start the operation just now, so it did not run; " +
		"its card will say so shortly, and it can be asked for again"
}

// approvalUnrecorded says an approval may have been lost, and nothing ran.
func approvalUnrecorded(id string) string {
	return "Your approval of " + id + " may not have been recorded, and nothing ran; look at its card again in a moment"
}

// decisionUnrecorded says a cancellation may have been lost, and nothing ran.
func decisionUnrecorded(id string) string {
	return "Your decision on " + id + " may not have been recorded, and nothing ran; look at its card again in a moment"
}

// reasked says nothing ran because what the call touches changed, and how
// many earlier approvals (reset) no longer count.
func reasked(changed string, reset int) string {
	s := "Nothing ran: since the card was posted, " + changed + "."
	if reset > 0 {
		verb := " no longer count, since they approved"
		if reset == 1 {
			verb = " no longer counts, since it approved"
		}
		s += " The " + plural(reset, "approval") + " given before" + verb + " what the card showed then."
	}
	return s + " The card shows what the call would touch now; look again, and approve or cancel it."
}

// requesterRefused says the requester's own approval does not count.
func requesterRefused(req rules.Requirement, p approval.Progress, mention rules.Mention) string {
	return rules.Refusal(req, p, rules.Requester, mention) + " Nothing changed."
}

// repeatRefused says a person's second approval does not count again.
func repeatRefused(req rules.Requirement, p approval.Progress, mention rules.Mention) string {
	return rules.Refusal(req, p, rules.Repeat, mention)
}

// expiredBeforeApproval says the approval expired before the click arrived.
func expiredBeforeApproval(id string) string {
	return "Approval " + id + " expired before your approval arrived, so it did not run."
}

// approvalCounted says an approval counted, and how far the count is.
func approvalCounted(id string, req rules.Requirement, p approval.Progress, mention rules.Mention) string {
	return "Your approval of " + id + " is counted: " + rules.Card(req, p, mention)
}

// alreadyDecided says a is decided already (by whom, when), so nothing changed.
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

// ----- Typed decisions without a full id -----

// nothingWaitsHere says a bare approve or cancel found no card for this person.
func nothingWaitsHere() string {
	return "No card in this conversation waits for your decision; nothing changed."
}

// severalWaitForYou says a bare approve or cancel matched several cards.
func severalWaitForYou(ids []string) string {
	return "Several cards wait for you here (" + strings.Join(ids, ", ") + "); name one: approve <id> or cancel <id> [reason]. Nothing changed."
}

// waitingUnfound says the waiting cards could not be looked up.
func waitingUnfound() string {
	return "I could not look up the waiting cards just now, so nothing changed; try again in a moment, or give the card's full id."
}

// noWaitingID says no approval waiting in the channel has the (short) id.
func noWaitingID(id string) string {
	return "There is no approval " + oneLine(id, 40) + " waiting in this channel. Copy the id from the card; nothing changed."
}

// ambiguousID says a shortened id starts several ids.
func ambiguousID(id string, ids []string) string {
	return "\"" + id + "\" starts several ids (" + strings.Join(ids, ", ") + "); give more of it. Nothing changed."
}

// ----- Edits (edit <id> <operation>) -----

// editUsage says how to type an edit.
func editUsage() string {
	return "Usage: edit <id> <the operation as it should run>. Nothing changed."
}

// noApprovalToEdit says an edit named an id no approval has.
func noApprovalToEdit(id string) string {
	return "There is no approval " + id + " to edit; nothing changed."
}

// cannotEdit turns a refusal to cancel into the same refusal to edit.
func cannotEdit(notice string) string {
	return strings.Replace(notice, "You cannot cancel", "You cannot edit", 1)
}

// notEditable says a tool's calls have no command form to edit.
func notEditable(tool string) string {
	return "A " + tool + " call cannot be edited here (the tool has no command form); cancel it and ask again. Nothing changed."
}

// editMisread is the tool's usage for an edited operation it cannot parse.
func editMisread(usage string) string {
	return usage + " Nothing changed."
}

// unreadableOperation says an edited operation could not be encoded.
func unreadableOperation() string {
	return "I could not read that operation; nothing changed."
}

// editFailed says an edit could not be made.
func editFailed(id string) string {
	return "I could not edit " + id + ", so nothing changed; try again in a moment"
}

// editRefused tells an editor why the gate refused their edited call.
func editRefused(id string, r tools.Result) string {
	why := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(r.Message), tools.DidNotRun))
	if r.Status == tools.StatusBlocked {
		why = "the edited operation is blocked by policy"
		if r.Reason != "" {
			why += ": " + r.Reason
		}
	} else if r.Error != "" {
		why = strings.TrimSuffix(why, ".") + ": " + r.Error
	}
	return "Your edit of " + id + " was refused, so nothing changed and the card still waits as it was: " + strings.TrimSuffix(why, ".") + "."
}

// editLostCard says an edit replaced a card but its new card is missing.
func editLostCard(id string) string {
	return "Approval " + id + " is replaced by your edit, but the new card could not be made, so nothing will run; ask again in a moment."
}

// ----- Commands (!verb, !cancel, !pending, pending for me, !login) -----

// unknownCommand says a typed !verb is no command.
func unknownCommand(verb string) string {
	return "I do not know " + verb + ". !help lists the commands."
}

// unreadableCommand says a command's arguments could not be encoded.
func unreadableCommand() string {
	return "I could not read that command"
}

// cannotRunCommand says a command could not be run.
func cannotRunCommand(verb string) string {
	return "I could not run " + verb
}

// noTurn says !cancel found no model turn to cancel.
func noTurn() string {
	return "No turn of the model is in flight in this conversation; nothing to cancel."
}

// turnCancelled says who cancelled the model's turn, and what stays.
func turnCancelled(by string) string {
	return "Cancelled the model's turn, as " + by + " asked; a command it was running is stopped, and the audit log records it. Cards it posted stay until decided or expired."
}

// pendingUnlisted says the pending approvals could not be listed.
func pendingUnlisted() string {
	return "I could not list the pending approvals"
}

// pendingUncounted says the pending approvals could not be counted.
func pendingUncounted() string {
	return "I could not count the pending approvals"
}

// noPending says no approval waits in the channel.
func noPending() string {
	return "No approvals are waiting in this channel."
}

// waitingUnlisted says a person's waiting cards could not be listed.
func waitingUnlisted() string {
	return "I could not list the waiting cards just now; try again in a moment."
}

// nothingWaitsForYou says no card of the channel waits for this person.
func nothingWaitsForYou() string {
	return "No card in this channel waits for your decision."
}

// waitingForYou lists the cards of the channel that wait for this person.
func waitingForYou(lines []string) string {
	verb := " wait"
	if len(lines) == 1 {
		verb = " waits"
	}
	return plural(len(lines), "card") + " in this channel" + verb + " for your decision:\n" + strings.Join(lines, "\n")
}

// consoleOff says !login has no web console to sign in to.
func consoleOff() string {
	return "The web console is not configured here (console.listen); nothing to sign in to."
}

// loginUnmade says a sign-in link could not be made.
func loginUnmade() string {
	return "I could not make a sign-in link just now"
}

// loginLink gives a person their one-time sign-in link, and whom it signs in.
func loginLink(link, user, platform string) string {
	return "Your sign-in link for the web console, valid for 5 minutes and once: " + link + "\n" +
		"It signs you in as " + user + " of " + platform + "; do not share it."
}

// ----- The model's budget (llm.budget, !usage) -----

// budgetTime is when a limit resets, in words.
func budgetTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// overBudget says why a turn stopped before its model call: which limit
// of llm.budget it reached and when that resets, or that the spend could
// not be checked. Each message still gets its answer this way.
func overBudget(o agent.OverBudget) string {
	if o.Unchecked {
		return "I could not check the model's spend budget just now (reference " + o.Ref + "), so I did not ask the model; " +
			"try again in a minute. Direct commands such as `!run` and `!sql` still work."
	}
	spent, limit := strconv.FormatInt(o.Spent, 10), strconv.FormatInt(o.Max, 10)
	switch o.Limit {
	case agent.LimitPerTurn:
		return "I stopped this turn before asking the model again: it has spent " + spent + " tokens, and a turn may spend " + limit +
			" (llm.budget.per_turn). Send a message to go on: each message starts a new turn."
	case agent.LimitPerConversation:
		s := "I stopped before asking the model: this conversation has spent " + spent + " tokens of its " + limit +
			" (llm.budget.per_conversation). Start a new thread to go on"
		if !o.Resets.IsZero() {
			s += ", or wait until " + budgetTime(o.Resets) + ", when this one's count is forgotten (agent.conversation_ttl after its last spend)"
		}
		return s + ". Direct commands such as `!run` and `!sql` still work."
	}
	return "I stopped before asking the model: this channel has spent " + spent + " tokens today, and its limit is " + limit +
		" a day (llm.budget.per_channel_per_day). It resets at midnight UTC, " + budgetTime(o.Resets) +
		". Direct commands such as `!run` and `!sql` still work."
}

// spendUnread says !usage could not read the spend.
func spendUnread() string {
	return "I could not read the model's spend just now"
}

// spending is !usage: the model's spend in this channel today and in this
// conversation, against the limits, with when each resets.
func spending(s agent.Spending) string {
	limit := func(n int64, key string) string {
		if n <= 0 {
			return " (no limit)"
		}
		return " of " + strconv.FormatInt(n, 10) + " (llm.budget." + key + ")"
	}
	var b strings.Builder
	b.WriteString("The model's spend, in tokens as the model reports them:\n")
	b.WriteString("  this channel today: " + strconv.FormatInt(s.Today, 10) + limit(s.Budget.PerChannelPerDay, agent.LimitPerChannelPerDay) +
		"; resets at midnight UTC, " + budgetTime(s.DayResets) + "\n")
	b.WriteString("  this conversation: " + strconv.FormatInt(s.Conversation, 10) + limit(s.Budget.PerConversation, agent.LimitPerConversation))
	if !s.ConversationResets.IsZero() {
		b.WriteString("; forgotten at " + budgetTime(s.ConversationResets) + " unless more is spent (agent.conversation_ttl after its last spend)")
	}
	turn := "no limit"
	if s.Budget.PerTurn > 0 {
		turn = "at most " + strconv.FormatInt(s.Budget.PerTurn, 10) + " (llm.budget.per_turn)"
	}
	b.WriteString("\n  each turn (a message and the model calls it leads to): " + turn)
	return b.String()
}

// ----- Stops (!stop, the Stop button) -----

// severalRunning says !stop matched several running calls.
func severalRunning(ids []string) string {
	return "Several calls run here (" + strings.Join(ids, ", ") + "); name one: !stop <id>. Nothing changed."
}

// nothingToStopHere says no call of this conversation runs.
func nothingToStopHere() string {
	return "No call of this conversation is running here; nothing to stop. Give its id: !stop <id>."
}

// runsElsewhere says id runs on another replica.
func runsElsewhere(id string) string {
	return "Approval " + id + " is running on another replica of the bot; ask there, or try again (the platform may send your request to it)."
}

// notRunningNow says id is in state, not running.
func notRunningNow(id string, state approval.State) string {
	return "Approval " + id + " is " + string(state) + ", not running; nothing to stop."
}

// noRunningID says no running call here has the id.
func noRunningID(id string) string {
	return "No running call here has the id " + oneLine(id, 40) + "; nothing to stop."
}

// justFinished says the call ended before the stop reached it.
func justFinished(id string) string {
	return "Approval " + id + " has just finished; there was nothing left to stop."
}

// stoppingAuto says an automatic call (op) is being stopped; its result follows.
func stoppingAuto(id, op string) string {
	return "Stopping " + id + " (" + oneLine(op, 60) + "): its processes are being killed. Its result follows in the conversation."
}

// stopping says a carded call is being stopped; its card will tell.
func stopping(id string) string {
	return "Stopping " + id + ": its processes are being killed. The card will show how it ended."
}

// ----- The platform's Stop (stopTurn) -----

// runOf names a run that Stop ended or could not end.
func runOf(id, op string) string {
	return "the run of " + id + " (" + oneLine(op, 60) + ")"
}

// stopped says who pressed Stop, what it stopped and what it could not.
func stopped(by string, did, failed []string) string {
	var text strings.Builder
	if len(did) == 0 {
		text.WriteString(by + " pressed Stop; nothing of mine was working here.")
	} else {
		text.WriteString(by + " stopped " + strings.Join(did, " and ") + ".")
	}
	if len(failed) > 0 {
		text.WriteString(" I could not stop " + strings.Join(failed, " or ") + "; the details are in the log.")
	}
	return text.String()
}

// ----- The inbox (queues, repeats, failures) -----

// stillWorking says the conversation's queue is full.
func stillWorking() string {
	return "I am still working on your earlier messages here; send this again in a moment."
}

// shuttingDown says a queued message was dropped at shutdown.
func shuttingDown(text string) string {
	return "I am shutting down, so I did not act on your message \"" + oneLine(text, 60) + "\"; send it again once I am back."
}

// waitingAhead says how many requests wait ahead of text.
func waitingAhead(text string, ahead int) string {
	return "Many requests are being handled just now: " + strconv.Itoa(ahead) + " more wait ahead of your \"" +
		oneLine(text, 40) + "\" (it is number " + strconv.Itoa(ahead+1) + " in line). I will answer it in turn."
}

// stoppedBeforeStart says the bot stopped before acting on text.
func stoppedBeforeStart(text string) string {
	return "I stopped before I could start on your message \"" + oneLine(text, 60) + "\", so I did not act on it; send it again once I am back."
}

// deliveryUncheckable says a message was not acted on for want of a check.
func deliveryUncheckable() string {
	return "I could not check whether this message was already being handled, so I did not act on it; if no answer follows, send it again"
}

// alreadyReceived says an event id was seen before, so it was not acted on.
func alreadyReceived(id string) string {
	return "I had already received an event with this id (" + id + "), so I did not act on it a second time; " +
		"if you see no answer to it, send it again."
}

// somethingWentWrong is what a panic while handling an event says.
func somethingWentWrong() string {
	return "Something went wrong handling that"
}

// failed ends a failure's sentence with the log reference of its details.
func failed(what, ref string) string {
	return what + "; the details are in the log (ref " + ref + ")."
}

// ----- Recovery after a restart -----

// interrupted tells a sender their message (accepted at) was cut short by a
// restart or a crash.
func interrupted(at, text string) string {
	return "I stopped (a restart or a crash) before I finished your message of " + at + " \"" + oneLine(text, 60) +
		"\", so it was not acted on, or only in part. Check what it would have done, and send it again if you still want it."
}
