// Package adapters is the contract every chat platform implements: receive
// messages and decisions, post messages and approval cards, update them in
// place, and send a private notice to one person. It has its own small types
// so that no chat SDK type reaches the bot, and no bot type reaches an
// adapter; adapters import only this package and their own SDK.
//
// The contract is shaped by the real constraints of Slack and Discord:
//
//   - A click must be acknowledged within 3 seconds. Handler.Handle never
//     waits on the store, the audit log, the model, a tool or a chat API: it
//     queues the event and returns. An adapter may acknowledge an event once
//     Handle returns, and the bot does the work in the background.
//   - Answers to an event go back through the event. Event.Reply is an
//     opaque value the adapter sets (a Discord interaction token, a Slack
//     response_url); the bot hands it back in Notice.Reply, so the adapter
//     can answer inside the interaction that caused it.
//   - Cards are updated in place: Post returns a message reference that
//     Update takes. Discord's interaction token lasts only 15 minutes, so
//     Update must be able to edit the bot's own message by channel and
//     reference after that.
//   - Platforms fail in ways the bot must tell apart: a message that is
//     gone (ErrGone: post a new one), a rate limit with a retry time
//     (RateLimitError) or an outage (ErrUnavailable), anything else.
//   - Chat trouble delays, never deletes: Post, Update and Notify wait
//     out rate limits and outages themselves until the send's deadline
//     (the context's; else a pending card's ExpiresAt; else
//     DefaultSendDeadline), one send at a time per place, so a caller
//     sees a RateLimitError or ErrUnavailable only once the deadline has
//     passed. A send that the next one replaces (a card's progress) asks
//     for one try with TryOnce. What is finally not delivered is counted
//     (Undeliverable) and said in its place once the platform answers.
//   - Platforms deliver an event again when unsure whether it arrived. Every
//     event carries an id that is the same on every delivery of it and
//     unique across processes and restarts for different events, and
//     Redelivered when it may be a repeat; the bot dedupes on the id.
//
// What an adapter offers beyond these methods (buttons, forms, a thread
// status, a streamed answer, a personal inbox, …) it declares in Extras,
// a value the bot reads once, at start, and logs: never a capability found
// by a type assertion, which a wrapper (metrics) would hide in silence.
// Each missing extra has its fallback; an adapter without buttons renders
// a card's buttons as the words to type ("approve <id>", "cancel <id>
// [reason]"), and ParseDecision reads them back.
package adapters

import (
	"context"
	"strings"
	"time"
	"unicode"
)

// Adapter connects the bot to one chat platform.
type Adapter interface {
	// Name is the platform's name as conversations record it: "terminal",
	// "slack", "discord".
	Name() string
	// Run receives events and calls h.Handle for each, one at a time and in
	// the order the platform delivered them, until ctx is done or the input
	// ends. It returns nil at the end of input and ctx.Err() when cancelled.
	Run(ctx context.Context, h Handler) error
	// Post posts a message or a card into a conversation and returns the
	// platform's reference to it, for Update.
	Post(ctx context.Context, to Place, c Content) (ref string, err error)
	// Update replaces a posted message in place.
	Update(ctx context.Context, to Place, ref string, c Content) error
	// Notify sends a notice that only n.User sees (Slack: an ephemeral
	// message or the click's response_url; Discord: an ephemeral answer to
	// the interaction, or a direct message). n.Reply, when set, is the
	// Reply of the event the notice answers.
	Notify(ctx context.Context, n Notice) error
	// Extras declares what the adapter offers beyond these methods. It
	// does no I/O and answers the same for the adapter's life: the bot
	// reads it once, at start. A wrapper of an adapter returns its inner
	// adapter's extras (wrapped, if it wraps them), never fewer.
	Extras() Extras
}

// Extras are what an adapter offers beyond Adapter's methods (the lesson of
// net/http's optional interfaces and its ResponseController: a capability
// found by a type assertion is lost to the first wrapper). Each is nil, or
// false, when the adapter has none, and each missing one has the fallback
// its field names; the bot logs at start which an adapter has and lacks
// (List), and config check shows it.
type Extras struct {
	// Buttons: a card's Buttons are drawn as buttons and clicks arrive as
	// events with a Decision. Without: the card shows each button's words
	// to type (Button.Words), and ParseDecision reads them back.
	Buttons bool
	// Forms: a button that needs a reason or replaces the operation
	// (Button.Reason, Button.Edit) opens a form, whose submission comes
	// as the typed words. Without: the words are typed.
	Forms bool
	// Status shows a turn's status on its thread (Slack's thread status,
	// Discord's typing indicator). Without: the bot posts what the turn
	// does as messages.
	Status TurnStatus
	// Stream streams a turn's answer into its thread, with its tool calls
	// as tasks. Without: the answer and the calls are messages.
	Stream TaskStream
	// WholeText: Stream takes only whole messages in a Stream's Text (see
	// WholeText); meaningless without Stream.
	WholeText bool
	// Home publishes a person's inbox of the cards they may decide
	// (Slack's App Home). Without: !pending lists a channel's cards.
	Home Home
	// Undelivered counts the sends the adapter gave up on, for a metric.
	// Without: the platform loses no send (the terminal), counted 0.
	Undelivered Undeliverable
	// Link says whether the adapter is connected to its platform now,
	// for readiness. Without: always connected.
	Link Link
	// Permalink gives a posted card's address on the platform, for those
	// who wait on it from elsewhere (the gateway's card_url). Without:
	// a card has no address outside the chat.
	Permalink Permalinker
	// ByEmail finds a person by e-mail address, for on-call approvers
	// (oncall:…), whom PagerDuty and Opsgenie name by address. Without:
	// an on-call entry admits nobody on the platform; the other approvers
	// of the list decide.
	ByEmail EmailFinder
}

// EmailFinder is the extra of a platform that can find a person by
// e-mail address.
type EmailFinder interface {
	// UserByEmail returns the id of the person whose address is email;
	// "" and no error when the platform knows nobody by it.
	UserByEmail(ctx context.Context, email string) (id string, err error)
}

// Link is the extra of an adapter that holds a connection to its platform
// (a Socket Mode or gateway session, an HTTP listener).
type Link interface {
	// Connected reports whether the connection is up now.
	Connected() bool
}

// Permalinker is the extra of an adapter whose messages have addresses.
type Permalinker interface {
	// Permalink returns the address of the message ref posted at to.
	Permalink(ctx context.Context, to Place, ref string) (string, error)
}

// extraNames name each extra, with the fallback the bot uses without it,
// in the order of Extras' fields: the log and config check say them.
var extraNames = []struct {
	name, without string
	has           func(Extras) bool
}{
	{"buttons", "cards show the words to type: approve <id>, cancel <id> [reason]", func(x Extras) bool { return x.Buttons }},
	{"forms", "a reason or an edit is typed after the card's id", func(x Extras) bool { return x.Forms }},
	{"status", "what a turn does is posted as messages", func(x Extras) bool { return x.Status != nil }},
	{"stream", "a turn's answer and calls are posted as messages", func(x Extras) bool { return x.Stream != nil }},
	{"home", "no personal inbox: !pending lists a channel's cards", func(x Extras) bool { return x.Home != nil }},
	{"undelivered", "no send is given up, none counted", func(x Extras) bool { return x.Undelivered != nil }},
	{"link", "counted as connected for readiness", func(x Extras) bool { return x.Link != nil }},
	{"permalink", "a card has no address outside the chat", func(x Extras) bool { return x.Permalink != nil }},
	{"by-email", "on-call approvers (oncall:…) admit nobody here: the other approvers decide", func(x Extras) bool { return x.ByEmail != nil }},
}

// List names the extras x has, and those it lacks, each lack followed by
// its fallback ("home (no personal inbox: …)").
func (x Extras) List() (has, lacks []string) {
	for _, e := range extraNames {
		if e.has(x) {
			has = append(has, e.name)
		} else {
			lacks = append(lacks, e.name+" ("+e.without+")")
		}
	}
	return has, lacks
}

// Notice is a message for one person only.
type Notice struct {
	Place Place
	User  User
	Text  string
	// Reply is the Event.Reply of the event this notice answers, handed
	// back as the adapter set it; nil for a notice no event caused.
	Reply any
}

// HasButtons reports whether a shows buttons (Extras.Buttons).
func HasButtons(a Adapter) bool { return a.Extras().Buttons }

// Handler receives events. Handle returns at once (it never waits on I/O):
// the adapter may acknowledge the event to the platform once it has
// returned, and a click not acknowledged within 3 seconds is shown to the
// person as failed.
type Handler interface {
	Handle(ctx context.Context, e Event)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, e Event)

// Handle calls f(ctx, e).
func (f HandlerFunc) Handle(ctx context.Context, e Event) { f(ctx, e) }

// User is a person on the platform.
type User struct {
	// ID is the platform's stable id (Slack U123, Discord snowflake; in the
	// terminal, the name).
	ID string
	// Name is the display name.
	Name string
	// Groups and Roles are the user groups and roles the platform reports,
	// for approver lists ("group:oncall", "role:admin").
	Groups []string
	Roles  []string
	// Team is the person's own workspace or organisation where the
	// platform says which (Slack: the user's team id, T…, which differs
	// from the bot's for a Slack Connect user of another organisation);
	// empty where the platform has no such idea (Discord, the terminal).
	// It is a fact for the adapter's own calls (Slack's streams name the
	// recipient's team); whether the person belongs to the bot's own
	// workspace is Outsider, the one thing the bot checks.
	Team string
	// Unchecked names the watched groups (as configured) whose membership
	// could not be checked for this event; each is also in Groups as
	// "!unchecked:<entry>", which matches no approver list (fail closed).
	// The adapter sends no notice about them: the bot, which knows
	// whether the decision needed the group, owns the one refusal notice
	// and can name them in it. Set on decision events (clicks and typed
	// decisions alike) and on typed "!stop".
	Unchecked []string
	// Outsider is set when the platform says the person belongs to
	// another workspace or organisation than the bot's (a Slack Connect
	// channel), on messages and clicks alike: they may talk to the bot,
	// but the bot refuses every decision they make, typed or clicked, in
	// one place (with one notice); the adapter itself refuses nothing and
	// says nothing about it.
	Outsider bool
}

// Display is the name to show: Name, or ID when there is no name.
func (u User) Display() string {
	if u.Name != "" {
		return u.Name
	}
	return u.ID
}

// Place is where a message goes: a channel and a thread in it. The thread is
// the conversation.
type Place struct {
	Channel string
	// Thread is the thread's id. For a message that starts a conversation
	// (a top-level mention), the adapter sets it to the id that replies
	// thread under, so the bot never has to know how threads work.
	Thread string
}

// Event is one thing that happened on the platform: a message, or a
// decision on an approval (a click, or the words typed in its place).
type Event struct {
	// ID is the event's id: the same on every delivery of one event, and
	// different for different events across every process and restart of
	// the bot (a platform's own id, or one the adapter makes unique, never
	// a counter that starts again at 1). Never empty. The bot drops an
	// event whose id it has seen.
	ID string
	// Redelivered is set when this event may repeat one the platform
	// already delivered (a retry, or a second kind of event for the same
	// message). A repeat so marked is dropped silently; a repeat not so
	// marked is dropped and its sender is told.
	Redelivered bool
	// Reply is the adapter's own handle on this event, opaque to the bot,
	// which hands it back in Notice.Reply when it answers the event.
	Reply any
	User  User
	Place Place
	// Direct is set for a direct (private) message to the bot.
	Direct bool
	// Private: the person asked for an answer only they see (Discord's
	// /countersign pending); the bot answers with a Notice.
	Private bool
	// Home: the person opened their inbox (Slack's App Home); the bot
	// answers with Home.PublishHome.
	Home bool
	// Text is the message text, with the bot's mention removed. For a
	// decision typed as words it holds those words, so that the bot can
	// treat "approve it" as talk when "it" names no approval.
	Text string
	// Decision is set when the event is a decision: a click, or the words
	// of a button typed where there are none.
	Decision *Decision
	// StopTurn is set when the person used the platform's own stop
	// control (Slack: the Stop of an agent's thread, agent_session_stopped).
	// The bot ends the turn of Place's thread as "!cancel" would (the
	// model's request is abandoned) and stops the runs of that thread
	// that User may stop, as "!stop" would, and says in the thread who
	// stopped what. An empty Place.Thread means every turn in the
	// channel (Slack sends no thread for a stop of a whole agent
	// conversation). Text is empty; User.Groups is filled as for "!stop".
	StopTurn bool
	// Recorded, when the adapter sets it, is called by the bot once, when
	// the event is recorded in its store (the inbox, so that a crash
	// cannot lose it), or when it is dropped or there is nothing to record
	// it in; it must return at once. An adapter that can wait for it
	// acknowledges the event to its platform from it (and after a
	// deadline of its own anyway), closing the window between the
	// acknowledgement and the record. Without it, the adapter acknowledges
	// once Handle returns.
	Recorded func() `json:"-"`
}

// Decision is a person's decision on one approval.
type Decision struct {
	// ApprovalID is the only value a button carries.
	ApprovalID string
	Approve    bool
	// Stop asks to stop the approval's running call (a Stop button).
	Stop bool
	// Reason is the optional reason given with a cancel.
	Reason string
	// Ref is the card's message reference, when the decision was a click on it.
	Ref string
}

// Content is what a message shows: text, a card, or both.
type Content struct {
	Text string
	Card *Card
	// Full is the whole text behind a message whose Text shows only part
	// of it (the output of an auto-run or a direct !run, cut to fit a
	// message), empty otherwise. An adapter that can attach files
	// (Slack, Discord) attaches it as output.txt beside the message, and
	// the message says so; one that cannot (the terminal) shows Text as it
	// is. A Text too long for the platform is attached whole in the same
	// way, never cut silently.
	Full string
	// Mentions are the approver entries ("user:U1" or "U1", "group:S1",
	// "role:R1") the message mentions, so that they are notified. Each
	// adapter renders them itself, ahead of the text, in its own syntax
	// (Mention): a mention never comes from Text, which stays escaped, so
	// that no model or user text can ping anyone. An entry the platform
	// cannot mention (a channel, a Discord group) is left out.
	Mentions []string
}

// Mention splits an approver entry of Content.Mentions into its kind
// ("user", "group" or "role") and id. ok is false for another kind or an
// id that is not letters, digits, '-' and '_' alone (no id of Slack or
// Discord is otherwise), so that an entry can never carry markup.
func Mention(entry string) (kind, id string, ok bool) {
	entry = strings.TrimSpace(entry)
	kind, id, found := strings.Cut(entry, ":")
	if !found {
		kind, id = "user", entry
	}
	kind, id = strings.TrimSpace(kind), strings.TrimSpace(id)
	if kind != "user" && kind != "group" && kind != "role" || id == "" || len(id) > 64 {
		return "", "", false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return "", "", false
		}
	}
	return kind, id, true
}

// Card is an approval card, platform-neutral; each adapter renders it.
type Card struct {
	ApprovalID   string
	Title        string
	Requester    string // who asked
	Conversation string // where, in words
	Tool         string
	// Operation is the exact operation that will run, shown in monospace,
	// byte for byte: adapters render it through Visible, so that control
	// characters and bidi overrides show as escapes, never raw.
	Operation string
	Risk      string   // low, medium, high
	Reasons   []string // the assessment's reasons, as sentences
	LLMLevel  string   // the model's own risk_level, when it gave one
	Preview   *Preview
	ExpiresAt time.Time

	// State is the approval's state: pending, approved, running, done,
	// failed, cancelled, expired.
	State string
	// StateLine says the state in words: who decided and when, the running
	// time, the outcome ("exit code 0 in 12ms").
	StateLine string
	// Output is the run's output or live progress tail, monospace; Note
	// says how it was cut when it was.
	Output string
	Note   string
	// FullOutput is the whole output of a finished run when Output is cut
	// (empty otherwise), for an adapter that can attach it as a file.
	FullOutput string

	// Buttons are shown while a decision is possible, and gone after.
	Buttons []Button
}

// Preview is the blast radius of the operation, when one could be computed.
type Preview struct {
	Summary string
	Items   []string
	// More is how many items exist beyond Items.
	More int
	// Err says why no preview could be made.
	Err string
}

// Button is one decision button. Its only value is the approval id.
type Button struct {
	Label   string
	Approve bool
	// Stop is the button of a running call: it stops the run.
	Stop bool
	// Value is the approval id.
	Value string
	// Reason: this decision needs a reason (a rule's reason_required);
	// a platform with forms asks for it when the button is clicked.
	Reason bool
	// Edit is the button that replaces the operation before it runs
	// ("edit <id> <operation>"): a platform with forms opens one holding
	// the operation; its submission is the typed words.
	Edit bool
}

// Words are the exact words that stand for b where there are no buttons:
// "approve <id>", "cancel <id> [reason]" or "!stop <id>".
func (b Button) Words() string {
	if b.Stop {
		return "!stop " + b.Value
	}
	if b.Edit {
		return "edit " + b.Value + " <operation>"
	}
	if b.Approve {
		if b.Reason {
			return "approve " + b.Value + " <reason>"
		}
		return "approve " + b.Value
	}
	if b.Reason {
		return "cancel " + b.Value + " <reason>"
	}
	return "cancel " + b.Value + " [reason]"
}

// ParseDecision reads typed decisions, the text fallback of a button:
// "approve <id>", "cancel <id> [reason]", or a bare "approve" / "cancel"
// (ApprovalID empty: the one card waiting for this person). The verb is
// case-insensitive; "deny" and "reject" mean cancel. Anything that starts
// with such a verb is a decision, whatever follows it: the bot answers one
// that names no card, and it never reaches the model. The id is returned as
// typed (the bot matches it, or a prefix of 4 or more characters, against
// the cards); the words after the id are the reason, for an approval as for
// a cancel ("approve <id> <reason>", where a rule requires one).
func ParseDecision(text string) (Decision, bool) {
	verb, rest := cutSpace(strings.TrimSpace(text))
	var approve bool
	switch strings.ToLower(strings.TrimRight(verb, ".!:,")) {
	case "approve":
		approve = true
	case "cancel", "deny", "reject":
	default:
		return Decision{}, false
	}
	id, reason := cutSpace(rest)
	id = strings.TrimSpace(strings.Trim(id, "`<>"))
	return Decision{ApprovalID: id, Approve: approve, Reason: strings.TrimSpace(reason)}, true
}

// cutSpace splits s at its first run of white space.
func cutSpace(s string) (before, after string) {
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimLeftFunc(s[i:], unicode.IsSpace)
}
