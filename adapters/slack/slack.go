// Package slack is the Slack adapter: it receives mentions, thread replies,
// direct messages and button clicks over Socket Mode or the Events API,
// posts replies and approval cards (Block Kit) into the conversation's
// thread, updates cards in place, and answers one person privately. While
// a turn works it shows the thread's status and streams the turn's tasks
// and answer (send.go), and it turns the person's Stop
// (agent_session_stopped) into an event. It is the only package that
// imports slack-go.
//
// What an envelope means (is this thread a conversation? is the clicker in
// an approver group, of this workspace?) is worked out after it is read,
// in order, by one worker, and then handed to the bot. The envelope is
// acknowledged (Socket Mode's ack, HTTP mode's response) once the bot has
// recorded its events (adapters.Event.Recorded), so that a crash cannot
// lose an envelope Slack will not send again; at most ackWithin after it
// was read, inside Slack's 3 seconds, whatever the worker or the store is
// doing.
package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	slackapi "github.com/slack-go/slack"

	"github.com/countersign/countersign/adapters"
)

// Fixed action ids of the card's buttons. A button's value is the
// approval id and nothing else.
const (
	ActionApprove = "countersign_approve"
	ActionCancel  = "countersign_cancel"
	ActionStop    = "countersign_stop"
)

// Adapter is the Slack adapter.
type Adapter struct {
	// ackWithin bounds an envelope's wait for the bot's record before it
	// is acknowledged anyway (ackWithin; longer only in tests).
	ackWithin time.Duration
	cfg       Config
	log       *slog.Logger
	api       *slackapi.Client
	mode      string
	apiURL    string
	botToken  string
	appToken  string
	secret    string
	now       func() time.Time
	groups    *groups
	people    *people        // people.go: names for user ids in the bot's words
	members   channelMembers // home.go: who is in a channel, for the App Home
	send      *adapters.Sender
	// up is set while the socket is connected (or the HTTP listener
	// serves), for Connected.
	up atomic.Bool

	mu   sync.Mutex
	self identity
	// threads are the "channel/thread" the bot takes part in; one
	// forgotten is looked up again (conversations.replies).
	threads *expirable.LRU[string, struct{}]
	// uploaded are the files already attached ("operation/<id>",
	// "output/<id>"); one forgotten is attached again.
	uploaded *expirable.LRU[string, struct{}]

	// features: the thread status and the stream, and what Slack said
	// of them (send.go).
	features features

	// onHTTPReady, when set, is called with the HTTP mode listener's
	// address once it listens (tests bind ":0").
	onHTTPReady func(addr string)
}

var (
	_ adapters.Adapter       = (*Adapter)(nil)
	_ adapters.TurnStatus    = (*Adapter)(nil)
	_ adapters.TaskStream    = (*Adapter)(nil)
	_ adapters.Home          = (*Adapter)(nil)
	_ adapters.Undeliverable = (*Adapter)(nil)
	_ adapters.Link          = (*Adapter)(nil)
)

// Bounds of what the adapter remembers per process: at most so many, for
// at most so long; the least recently used go first.
const (
	maxThreads   = 10000
	threadMemory = 24 * time.Hour
	maxUploaded  = 10000
	// uploadMemory outlives any card: an approval waits at most a day.
	uploadMemory = 48 * time.Hour
)

// New makes the adapter from its configuration and the environment. It
// checks the tokens' shape, not that they work: Run calls auth.test.
func New(cfg Config, getenv func(string) string, log *slog.Logger) (*Adapter, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &Adapter{
		cfg:       cfg,
		log:       log.With("adapter", "slack"),
		botToken:  strings.TrimSpace(getenv(cfg.BotTokenEnv)),
		appToken:  strings.TrimSpace(getenv(cfg.AppTokenEnv)),
		secret:    strings.TrimSpace(getenv(cfg.SigningSecretEnv)),
		now:       time.Now,
		ackWithin: ackWithin,
		threads:   expirable.NewLRU[string, struct{}](maxThreads, nil, threadMemory),
		uploaded:  expirable.NewLRU[string, struct{}](maxUploaded, nil, uploadMemory),
	}
	if err := checkToken(cfg.BotTokenEnv, a.botToken, "xoxb-", "a bot token", "OAuth & Permissions → Bot User OAuth Token"); err != nil {
		return nil, err
	}
	if a.appToken != "" {
		if err := checkToken(cfg.AppTokenEnv, a.appToken, "xapp-", "an app-level token", "Basic Information → App-Level Tokens, with the connections:write scope"); err != nil {
			return nil, err
		}
	}
	a.mode = cfg.Mode
	if a.mode == "" {
		a.mode = "http"
		if a.appToken != "" {
			a.mode = "socket"
		}
	}
	switch {
	case a.mode == "socket" && a.appToken == "":
		return nil, fmt.Errorf("slack.mode: socket needs an app-level token (xapp-) in $%s; create one under Basic Information → App-Level Tokens with the connections:write scope, or set slack.mode: http", cfg.AppTokenEnv)
	case a.mode == "http" && a.secret == "":
		return nil, fmt.Errorf("slack.mode: http needs the app's signing secret in $%s (Basic Information → Signing Secret), or set $%s for Socket Mode", cfg.SigningSecretEnv, cfg.AppTokenEnv)
	}
	a.apiURL = cfg.APIURL
	if a.apiURL == "" {
		a.apiURL = strings.TrimSpace(getenv(APIURLEnv))
		if a.apiURL != "" {
			if err := checkAPIURL(a.apiURL); err != nil {
				return nil, fmt.Errorf("$%s: %w", APIURLEnv, err)
			}
		}
	}
	if a.apiURL == "" {
		a.apiURL = DefaultAPIURL
	}
	a.apiURL = apiBase(a.apiURL)
	opts := []slackapi.Option{
		slackapi.OptionAPIURL(a.apiURL),
		slackapi.OptionHTTPClient(&http.Client{Timeout: 30 * time.Second, Transport: cfg.Transport}),
	}
	if a.appToken != "" {
		opts = append(opts, slackapi.OptionAppLevelToken(a.appToken))
	}
	// No slack-go retries (they sleep without a context): the adapter's
	// Sender waits out 429s and 5xx within each send's deadline, in order
	// per place, and adapters.TryOnce asks for one try.
	a.api = slackapi.New(a.botToken, opts...)
	a.groups = newGroups(a.api, cfg.GroupCacheTTL, a.now)
	a.people = newPeople(a.api, func(id string, err error) {
		a.log.Warn("could not learn a person's name (users.info, scope users:read); the bot's words show their id", "user", id, "err", err)
	})
	a.send = adapters.NewSender(a.tell)
	return a, nil
}

func checkToken(env, token, prefix, kind, where string) error {
	switch {
	case token == "":
		return fmt.Errorf("slack: $%s is not set; it must hold %s (%s…) from the app's page, %s", env, kind, prefix, where)
	case !strings.HasPrefix(token, prefix):
		return fmt.Errorf("slack: $%s holds %s, not %s (%s…); copy it from %s", env, tokenKind(token), kind, prefix, where)
	}
	return nil
}

// tokenKind names a Slack token by its prefix, for errors.
func tokenKind(token string) string {
	switch {
	case strings.HasPrefix(token, "xoxb-"):
		return "a bot token (xoxb-)"
	case strings.HasPrefix(token, "xapp-"):
		return "an app-level token (xapp-)"
	case strings.HasPrefix(token, "xoxp-"):
		return "a user token (xoxp-)"
	case strings.HasPrefix(token, "xoxe"):
		return "a configuration or refresh token (xoxe)"
	}
	return "a value that is no Slack token"
}

// Name returns "slack".
func (a *Adapter) Name() string { return "slack" }

// Mode is the mode the adapter runs in, "socket" or "http".
func (a *Adapter) Mode() string { return a.mode }

// WatchGroups names the user groups that approver lists mention, as
// "group:S0123ABCD", "S0123ABCD" or "@handle". A click's User.Groups then
// holds each watched group the clicker is in, written as configured (and
// as its S… id); a group that could not be checked is written
// "!unchecked:<entry>", which matches no approver list, so a failed lookup
// refuses (fail closed).
func (a *Adapter) WatchGroups(entries ...string) {
	a.groups.watch(entries...)
}

// Run receives events until ctx is done (it returns ctx.Err()) or the app
// is uninstalled or its tokens revoked (it returns nil).
func (a *Adapter) Run(ctx context.Context, h adapters.Handler) error {
	id, err := a.authTest(ctx)
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.self = id
	a.mu.Unlock()
	a.log.Info("connected to slack", "mode", a.mode, "team", id.TeamID, "bot_user", id.UserID, "api", a.apiURL)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	q := newQueue()
	worked := make(chan struct{})
	go func() {
		defer close(worked)
		a.work(ctx, q, h)
	}()
	switch a.mode {
	case "http":
		err = a.runHTTP(ctx, q)
	default:
		err = a.runSocket(ctx, q)
	}
	q.close()
	if err != nil {
		cancel()
	}
	<-worked
	return err
}

func (a *Adapter) authTest(ctx context.Context) (identity, error) {
	r, err := a.api.AuthTestContext(ctx)
	if _, slackSaid := errors.AsType[slackapi.SlackErrorResponse](err); slackSaid {
		return identity{}, fmt.Errorf("slack: auth.test at %s: %w; check $%s (a bot token, xoxb-, of an installed app)", a.apiURL, err, a.cfg.BotTokenEnv)
	} else if err != nil {
		return identity{}, fmt.Errorf("slack: auth.test at %s: %w; is Slack (or $%s, slack.api_url) reachable from here?", a.apiURL, err, APIURLEnv)
	}
	return identity{UserID: r.UserID, BotID: r.BotID, TeamID: r.TeamID, URL: r.URL}, nil
}

// work turns queued envelopes into events, in the order they arrived, and
// hands them to h; an envelope is acknowledged once h has recorded its
// events (or after ackWithin).
func (a *Adapter) work(ctx context.Context, q *queue, h adapters.Handler) {
	for {
		it, ok := q.pop(ctx)
		if !ok {
			return
		}
		events := it.job(ctx)
		it.ack.after(events)
		for _, e := range events {
			h.Handle(ctx, e)
		}
	}
}

// reply is Event.Reply for Slack: where a private answer to the event goes.
type reply struct {
	ResponseURL string
	Channel     string
	User        string
	Thread      string
}

// message is what the adapter needs of an app_mention or message event.
type message struct {
	kind        string // "app_mention" or "message"
	team        string // the workspace the event came to
	userTeam    string // the sender's own workspace, when it is another (Slack Connect)
	user        string
	botID       string
	subtype     string
	text        string
	ts          string
	threadTS    string
	channel     string
	channelType string
}

// fromMessage turns a message into an event, or nothing when the message
// is not for the bot (another bot's, an edit, a join, a thread the bot is
// not in).
func (a *Adapter) fromMessage(ctx context.Context, m message, retried bool) []adapters.Event {
	self := a.identity()
	switch {
	case m.botID != "" || m.user == "" || m.user == self.UserID:
		return nil // the bot's own messages and other bots'
	case m.subtype != "" && m.subtype != "thread_broadcast" && m.subtype != "file_share":
		return nil // edits, deletions, joins, …
	case m.channel == "" || m.ts == "":
		a.log.Warn("dropped a slack message without channel or ts", "kind", m.kind, "channel", m.channel, "ts", m.ts)
		return nil
	}
	mentioned := m.kind == "app_mention" || mentions(m.text, self.UserID)
	direct := m.channelType == "im"
	thread := m.threadTS
	if thread == "" {
		thread = m.ts
	}
	if !direct && !mentioned {
		if m.threadTS == "" || !a.inConversation(ctx, m.channel, m.threadTS) {
			return nil // talk among people, not to the bot
		}
	}
	a.remember(m.channel, thread)
	team := m.team
	if team == "" {
		team = self.TeamID
	}
	userTeam := m.userTeam
	if userTeam == "" {
		userTeam = team
	}
	e := adapters.Event{
		// One message has one id, whichever kind of event (app_mention
		// or message) and whichever delivery carries it.
		ID: "msg:" + team + ":" + m.channel + ":" + m.ts,
		// A mention arrives as app_mention and as message: the message
		// is marked, so that whichever comes second is a known repeat.
		Redelivered: retried || m.kind == "message" && mentioned && !direct,
		Reply:       &reply{Channel: m.channel, User: m.user, Thread: thread},
		User:        adapters.User{ID: m.user, Team: userTeam, Outsider: userTeam != self.TeamID},
		Place:       adapters.Place{Channel: m.channel, Thread: thread},
		Direct:      direct,
		Text:        cleanText(m.text, self.UserID),
	}
	// "approve <id>", "cancel <id> [reason]" typed in the thread are
	// decisions, as in the terminal; a reason can only be given this way.
	// They carry the same facts as a click, checked the same way.
	d, decision := adapters.ParseDecision(e.Text)
	if decision {
		e.Decision = &d
	}
	if decision || isStop(e.Text) {
		e.User = a.decider(ctx, e.User)
	}
	return []adapters.Event{e}
}

// inConversation reports whether the bot takes part in the thread: it was
// mentioned there or posted there, by this process (remembered) or by
// another replica (conversations.replies). A lookup that Slack refuses for
// now (a 429, a 5xx) is tried again for up to threadLookup; if Slack still
// cannot say, the message is taken as a follow-up, so that it is answered
// rather than lost (the cost: an answer to a thread not meant for the bot).
func (a *Adapter) inConversation(ctx context.Context, channel, thread string) bool {
	if a.threads.Contains(channel + "/" + thread) {
		return true
	}
	self := a.identity()
	var msgs []slackapi.Message
	err := a.send.Retry(ctx, a.now().Add(threadLookup), func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		var err error
		msgs, _, _, err = a.api.GetConversationRepliesContext(ctx, &slackapi.GetConversationRepliesParameters{ChannelID: channel, Timestamp: thread, Limit: 200})
		if err != nil {
			return slackErr("conversations.replies", err)
		}
		return nil
	})
	switch {
	case err != nil && adapters.Transient(err):
		a.log.Warn("could not tell whether a thread is a conversation with the bot; taking its message as a follow-up", "channel", channel, "thread", thread, "err", err)
		return true
	case err != nil:
		a.log.Info("slack says the thread cannot be read; its message is not for the bot", "channel", channel, "thread", thread, "err", err)
		return false
	}
	for _, m := range msgs {
		if m.User == self.UserID || m.BotID != "" && m.BotID == self.BotID || mentions(m.Text, self.UserID) {
			return true
		}
	}
	return false
}

// threadLookup bounds the retries of one thread lookup: the worker holds
// the events behind it meanwhile.
const threadLookup = 20 * time.Second

func mentions(text, userID string) bool {
	return userID != "" && strings.Contains(text, "<@"+userID)
}

var (
	linkRE    = regexp.MustCompile(`<((?:https?|mailto):[^|>]+)(?:\|[^>]*)?>`)
	channelRE = regexp.MustCompile(`<#[A-Z0-9]+\|([^>]*)>`)
)

// cleanText turns Slack's wire text back into what the person typed: the
// bot's mention removed, links unwrapped (<https://x|x> → https://x), and
// &amp; &lt; &gt; unescaped, so that `!run cat a > b` reaches the bot as
// typed.
func cleanText(text, botID string) string {
	if botID != "" {
		re := regexp.MustCompile(`<@` + regexp.QuoteMeta(botID) + `(?:\|[^>]*)?>`)
		text = re.ReplaceAllString(text, "")
	}
	text = linkRE.ReplaceAllString(text, "$1")
	text = channelRE.ReplaceAllString(text, "#$1")
	text = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(text)
	return strings.TrimSpace(text)
}

// fromClick turns a button click into a decision event, or refuses it.
func (a *Adapter) fromClick(ctx context.Context, cb slackapi.InteractionCallback, retried bool) []adapters.Event {
	if cb.Type == slackapi.InteractionTypeViewSubmission {
		return a.fromReason(ctx, cb, retried) // modal.go
	}
	if cb.Type != slackapi.InteractionTypeBlockActions {
		a.log.Info("ignored a slack interaction that is not a button click", "type", cb.Type)
		return nil
	}
	team := cb.Team.ID
	if team == "" {
		team = cb.User.TeamID
	}
	channel := cb.Channel.ID
	if channel == "" {
		channel = cb.Container.ChannelID
	}
	ref := cb.Container.MessageTs
	if ref == "" {
		ref = cb.Message.Timestamp
	}
	thread := cb.Container.ThreadTs
	if thread == "" {
		thread = cb.Message.ThreadTimestamp
	}
	if thread == "" {
		thread = ref
	}
	rp := &reply{ResponseURL: cb.ResponseURL, Channel: channel, User: cb.User.ID, Thread: thread}
	place := adapters.Place{Channel: channel, Thread: thread}
	user := a.decider(ctx, adapters.User{ID: cb.User.ID, Name: cb.User.Name, Team: team})
	var out []adapters.Event
	for _, act := range cb.ActionCallback.BlockActions {
		if act != nil && (a.askReason(ctx, cb, act, user, place, ref, rp) || a.askEdit(ctx, cb, act, user, place, ref, rp)) { // modal.go
			continue
		}
		if act == nil || act.ActionID != ActionApprove && act.ActionID != ActionCancel && act.ActionID != ActionStop {
			continue
		}
		if !validApprovalID(act.Value) {
			a.log.Warn("ignored a click whose button carries no approval id", "action", act.ActionID, "value", act.Value)
			continue
		}
		stamp := act.ActionTs
		if stamp == "" {
			stamp = cb.ActionTs
		}
		if stamp == "" {
			stamp = cb.TriggerID
		}
		out = append(out, adapters.Event{
			ID:          "act:" + team + ":" + cb.User.ID + ":" + act.ActionID + ":" + stamp,
			Redelivered: retried,
			Reply:       rp,
			User:        user,
			Place:       place,
			Decision:    &adapters.Decision{ApprovalID: act.Value, Approve: act.ActionID == ActionApprove, Stop: act.ActionID == ActionStop, Ref: ref},
		})
	}
	if len(out) == 0 {
		a.log.Info("ignored a click on a button that is not a countersign decision", "channel", channel, "message", ref)
	}
	return out
}

// decider gives the facts of the one who decides, the same way for a
// click and for typed words: Outsider when they belong to another
// workspace than the bot's (a Slack Connect user of another organisation),
// and the watched groups they are in, with those that could not be checked
// in Unchecked (and in Groups as "!unchecked:<entry>"). The bot judges and,
// if it refuses, says so once: the adapter refuses nothing and sends no
// notice here.
func (a *Adapter) decider(ctx context.Context, user adapters.User) adapters.User {
	self := a.identity()
	if user.Team != self.TeamID {
		user.Outsider = true
		a.log.Info("a decision from another workspace; the bot refuses it", "team", user.Team, "want", self.TeamID, "user", user.ID)
		return user // their groups are not this workspace's to look up
	}
	in, unchecked := a.groups.of(ctx, user.ID)
	user.Groups = in
	for _, g := range unchecked {
		user.Groups = append(user.Groups, "!unchecked:"+g.entry)
		user.Unchecked = append(user.Unchecked, g.entry)
		a.log.Warn("could not check a user group of a person deciding; the bot refuses what needs it", "group", g.entry, "user", user.ID, "err", g.err)
	}
	return user
}

// isStop reports whether text is a typed "!stop".
func isStop(text string) bool {
	verb, _ := cutSpace(text)
	return strings.EqualFold(verb, "!stop")
}

// cutSpace splits s at its first run of white space.
func cutSpace(s string) (before, after string) {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, " \t\n"); i >= 0 {
		return s[:i], strings.TrimSpace(s[i:])
	}
	return s, ""
}

// Connected reports whether the Socket Mode connection is up, or the HTTP
// listener serves (for /readyz).
func (a *Adapter) Connected() bool { return a.up.Load() }
