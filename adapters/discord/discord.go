// Package discord is the chat adapter for Discord: it reads mentions,
// direct messages, slash commands and button clicks from Discord's gateway
// (and, with interactions: http, from an interactions endpoint Discord
// posts to), and posts answers and approval cards into a thread per
// conversation.
//
// It is the only package that imports discordgo. discordgo keeps the
// gateway websocket (identify, heartbeats, resume); the adapter makes its
// own REST calls on the session's http.Client, each with a context, so that
// a rate limit or an outage is waited out by the adapter's Sender within
// each send's deadline (or comes back at once under adapters.TryOnce), and
// the first answer to a click never waits behind one.
package discord

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"
	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/webhook"
)

// Adapter is the Discord adapter.
type Adapter struct {
	// recordWithin bounds a decision's first response's wait for the
	// bot's record (recordWithin; longer only in tests).
	recordWithin time.Duration
	cfg          Config
	log          *slog.Logger
	s            *discordgo.Session
	api          *rest
	send         *adapters.Sender
	now          func() time.Time
	key          ed25519.PublicKey // interactions: http
	q            queue
	down         chan struct{} // a gateway connection closed
	// up is set while the gateway session is ready (READY or RESUMED
	// seen, no disconnect since), for Connected.
	up atomic.Bool

	mu       sync.Mutex
	botID    string
	appID    string
	ready    chan struct{}
	readyOne sync.Once
	closing  bool
	// What the adapter remembers per process, each bounded in size and
	// age (least recently used first); anything forgotten is looked up
	// again, or said again, when next needed.
	channels *expirable.LRU[string, channelInfo]  // channel id → what it is
	clicks   *expirable.LRU[string, *interaction] // card message id → the latest click on it
	dms      *expirable.LRU[string, string]       // user id → DM channel id
	told     *expirable.LRU[string, struct{}]     // threads told that a mention is needed
	names    names                                // names.go: roles and people by name
	listener net.Listener
	replays  *webhook.Replays
	// typing keeps turns' typing indicators up (typing.go).
	typing typers
}

var (
	_ adapters.Adapter       = (*Adapter)(nil)
	_ adapters.TurnStatus    = (*Adapter)(nil)
	_ adapters.Undeliverable = (*Adapter)(nil)
	_ adapters.Link          = (*Adapter)(nil)
)

// Bounds of each per-process memory: at most maxRemembered entries, each
// for at most memory (a click's, for its token's lifetime).
const (
	maxRemembered = 10000
	memory        = 24 * time.Hour
)

// New makes an adapter from cfg, reading the token (and, for HTTP
// interactions, the public key) with getenv.
func New(cfg Config, getenv func(string) string, log *slog.Logger) (*Adapter, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tok := token(getenv(cfg.TokenEnv))
	if tok == "" {
		return nil, fmt.Errorf("discord.token_env: %s is empty: set it to the bot token (developer portal, Bot, Reset Token)", cfg.TokenEnv)
	}
	apiURL := cfg.APIURL
	if v := getenv(APIURLEnv); v != "" {
		apiURL = v
	}
	routeLibraryLog(log)
	s, err := discordgo.New(tok)
	if err != nil {
		return nil, fmt.Errorf("discord: make a session: %w", err)
	}
	if apiURL != "" {
		base, err := parseAPIURL(apiURL)
		if err != nil {
			return nil, fmt.Errorf("discord.api_url (or %s): %w", APIURLEnv, err)
		}
		s.Client = &http.Client{Timeout: 20 * time.Second, Transport: rewrite{from: discordHost(), to: base, next: cmp.Or(cfg.Transport, http.DefaultTransport)}}
	} else if cfg.Transport != nil {
		s.Client.Transport = cfg.Transport
	}
	s.SyncEvents = true // events in the order the gateway sent them
	s.StateEnabled = false
	s.ShouldReconnectOnError = false // the adapter reconnects, with a context
	s.ShouldRetryOnRateLimit = false
	s.Identify.Intents = discordgo.IntentsGuilds | discordgo.IntentsGuildMessages | discordgo.IntentsDirectMessages
	if cfg.MessageContent {
		s.Identify.Intents |= discordgo.IntentsMessageContent
	}
	a := &Adapter{
		cfg:          cfg,
		log:          log.With("adapter", "discord"),
		s:            s,
		api:          &rest{client: s.Client, base: strings.TrimSuffix(discordgo.EndpointAPI, "/"), token: tok, agent: s.UserAgent},
		now:          time.Now,
		recordWithin: recordWithin,
		down:         make(chan struct{}, 1),
		ready:        make(chan struct{}),
		channels:     expirable.NewLRU[string, channelInfo](maxRemembered, nil, memory),
		clicks:       expirable.NewLRU[string, *interaction](maxRemembered, nil, cfg.tokenLifetime),
		dms:          expirable.NewLRU[string, string](maxRemembered, nil, memory),
		told:         expirable.NewLRU[string, struct{}](maxRemembered, nil, memory),
		replays:      webhook.NewReplays(100000, replayWindow+time.Minute),
	}
	a.q.signal = make(chan struct{}, 1)
	a.send = adapters.NewSender(a.tell)
	if cfg.Interactions == "http" {
		if a.key, err = publicKey(cfg.PublicKeyEnv, getenv(cfg.PublicKeyEnv)); err != nil {
			return nil, err
		}
	}
	s.AddHandler(a.onReady)
	s.AddHandler(a.onMessage)
	s.AddHandler(a.onInteractionCreate)
	s.AddHandler(a.onDisconnect)
	s.AddHandler(a.onResumed)
	return a, nil
}

// libraryLog is where discordgo's own messages go: the structured log of
// the latest adapter made, not raw lines on standard error. discordgo has
// one package-wide logger, so it is set once and reads this.
var (
	libraryLog  atomic.Pointer[slog.Logger]
	libraryOnce sync.Once
)

func routeLibraryLog(log *slog.Logger) {
	libraryLog.Store(log.With("adapter", "discord", "source", "discordgo"))
	libraryOnce.Do(func() {
		discordgo.Logger = func(level, _ int, format string, args ...any) {
			l := libraryLog.Load()
			msg := fmt.Sprintf(format, args...)
			switch level {
			case discordgo.LogError:
				l.Warn(msg) // discordgo logs a dropped connection as an error; the adapter resumes it
			case discordgo.LogWarning:
				l.Info(msg)
			default:
				l.Debug(msg)
			}
		}
	})
}

// Name returns "discord".
func (a *Adapter) Name() string { return "discord" }

// Extras are what Discord offers: buttons, forms (modals), the typing
// indicator as a turn's status, the count of sends given up, and the
// gateway's state. It has no streamed answer and no personal inbox (the
// /countersign pending command answers privately instead).
func (a *Adapter) Extras() adapters.Extras {
	return adapters.Extras{Buttons: true, Forms: true, Status: a, Undelivered: a, Link: a, Permalink: a}
}

// Addr is the interactions endpoint's address once Run has started it
// (interactions: http), for tests and logs; "" otherwise.
func (a *Adapter) Addr() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.listener == nil {
		return ""
	}
	return a.listener.Addr().String()
}

// Run connects to the gateway, registers the slash commands, serves HTTP
// interactions when configured, and hands events to h in the order they
// arrived until ctx is done (ctx.Err()) or Discord no longer accepts the
// token (nil: the input has ended for good).
func (a *Adapter) Run(ctx context.Context, h adapters.Handler) error {
	if err := a.checkToken(ctx); err != nil {
		return err
	}
	if err := a.open(ctx); err != nil {
		return fmt.Errorf("discord: connect to the gateway: %w%s", err, closeHint(err))
	}
	defer a.close()
	defer a.typing.endAll()
	select {
	case <-a.ready:
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(30 * time.Second):
		return errors.New("discord: no READY from the gateway within 30s: check DISCORD_API_URL and the network")
	}
	a.registerCommands(ctx)
	if a.cfg.Interactions == "http" {
		stop, err := a.serveHTTP()
		if err != nil {
			return err
		}
		defer stop()
	}
	ended := make(chan struct{})
	go a.keepConnected(ctx, ended)
	for {
		for {
			it, ok := a.q.pop()
			if !ok {
				break
			}
			if e, ok := a.prepare(ctx, it); ok {
				h.Handle(ctx, e)
			} else if it.ix != nil {
				it.ix.markRecorded() // no event: nothing to wait for
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ended:
			a.log.Warn("Discord no longer accepts the bot token: the adapter stops; reset the token in the developer portal and restart")
			return nil
		case <-a.q.signal:
		}
	}
}

// checkToken asks for the gateway with the token, so that a wrong token
// or server is a clear error at start rather than a socket that closes.
func (a *Adapter) checkToken(ctx context.Context) error {
	gw, err := a.gatewayBot(ctx)
	switch {
	case isStatus(err, http.StatusUnauthorized):
		return fmt.Errorf("discord: the server refused the bot token in %s (HTTP 401): copy it again from the developer portal, Bot, Reset Token", a.cfg.TokenEnv)
	case err != nil:
		return fmt.Errorf("discord: reach %s: %w (is DISCORD_API_URL right, and the network up?)", a.api.base, err)
	case gw == "":
		return fmt.Errorf("discord: %s/gateway/bot gave no gateway URL: is DISCORD_API_URL a Discord-compatible server?", a.api.base)
	}
	return nil
}

func (a *Adapter) gatewayBot(ctx context.Context) (string, error) {
	var gw struct {
		URL string `json:"url"`
	}
	err := a.api.do(ctx, http.MethodGet, "/gateway/bot", nil, nil, &gw)
	return gw.URL, err
}

// open opens the gateway connection; discordgo's Open has no context, so
// it runs aside and ctx ends the wait.
func (a *Adapter) open(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- a.s.Open() }()
	select {
	case err := <-done:
		if errors.Is(err, discordgo.ErrWSAlreadyOpen) {
			return nil
		}
		return err
	case <-ctx.Done():
		go func() {
			if <-done == nil {
				_ = a.s.Close()
			}
		}()
		return ctx.Err()
	}
}

// closeHint says what to do about the gateway's refusal codes
// (https://discord.com/developers/docs/topics/opcodes-and-status-codes#gateway-gateway-close-event-codes).
func closeHint(err error) string {
	var ce *websocket.CloseError
	if !errors.As(err, &ce) {
		return ""
	}
	switch ce.Code {
	case 4004:
		return ": the token is not valid; copy it again from the developer portal, Bot, Reset Token"
	case 4014:
		return ": the Message Content intent is not enabled for this application; turn it on in the developer portal (Bot, Privileged Gateway Intents) or set discord.message_content: false"
	case 4013:
		return ": the intents are invalid"
	}
	return ""
}

func (a *Adapter) close() {
	a.mu.Lock()
	a.closing = true
	a.mu.Unlock()
	if err := a.s.Close(); err != nil {
		a.log.Warn("close the gateway connection", "err", err)
	}
}

// keepConnected opens the gateway again (a resume: nothing is lost) after
// each disconnect, backing off while it fails; it closes ended when the
// server refuses the token.
func (a *Adapter) keepConnected(ctx context.Context, ended chan<- struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.down:
		}
		wait := time.Second
		for {
			a.mu.Lock()
			closing := a.closing
			a.mu.Unlock()
			if closing || ctx.Err() != nil {
				return
			}
			_, err := a.gatewayBot(ctx)
			if isStatus(err, http.StatusUnauthorized) {
				close(ended)
				return
			}
			if err == nil {
				if err = a.open(ctx); err == nil {
					a.log.Info("gateway connection resumed")
					break
				}
			}
			a.log.Warn("reconnect to the gateway", "err", err, "retry_in", wait)
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			wait = min(2*wait, time.Minute)
		}
	}
}

func (a *Adapter) onDisconnect(s *discordgo.Session, _ *discordgo.Disconnect) {
	// discordgo runs each handler in a goroutine of its own, so this one
	// may run after the reconnect it caused, and after onResumed: the
	// session is down only if it has not come back since.
	s.RLock()
	back := s.DataReady
	s.RUnlock()
	if !back {
		a.up.Store(false)
	}
	a.mu.Lock()
	closing := a.closing
	a.mu.Unlock()
	if closing {
		return
	}
	select {
	case a.down <- struct{}{}:
	default:
	}
}

func (a *Adapter) onReady(_ *discordgo.Session, r *discordgo.Ready) {
	a.mu.Lock()
	if r.User != nil {
		a.botID = r.User.ID
	}
	if r.Application != nil {
		a.appID = r.Application.ID
	}
	a.mu.Unlock()
	a.up.Store(true)
	a.readyOne.Do(func() { close(a.ready) })
}

func (a *Adapter) onResumed(_ *discordgo.Session, _ *discordgo.Resumed) { a.up.Store(true) }

// Connected reports whether the gateway session is up (for /readyz).
func (a *Adapter) Connected() bool { return a.up.Load() }

func (a *Adapter) ids() (bot, app string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.botID, a.appID
}

// Post posts c into the conversation's thread and returns the message id.
func (a *Adapter) Post(ctx context.Context, to adapters.Place, c adapters.Content) (string, error) {
	var id string
	err := a.send.Send(ctx, "post:"+where(to), adapters.Deadline(ctx, a.now(), c.Card),
		adapters.Owed{Place: to, What: []string{adapters.Describe(c)}},
		func(ctx context.Context) (err error) {
			id, err = a.post(ctx, to, c)
			return err
		})
	return id, err
}

func (a *Adapter) post(ctx context.Context, to adapters.Place, c adapters.Content) (string, error) {
	ch := where(to)
	if ch == "" {
		return "", errors.New("discord: post: the place has no channel")
	}
	m := render(a.named(ctx, to, c)) // names.go
	var out struct {
		ID string `json:"id"`
	}
	if err := a.api.do(ctx, http.MethodPost, "/channels/"+ch+"/messages", m, m.Files, &out); err != nil {
		return "", fmt.Errorf("post to channel %s: %w", ch, err)
	}
	return out.ID, nil
}

// Update edits the message ref: through the token of the latest click on
// it while that token lives (15 minutes), and as the bot's own message
// after that. A message that is gone is adapters.ErrGone; a 429 is an
// *adapters.RateLimitError.
func (a *Adapter) Update(ctx context.Context, to adapters.Place, ref string, c adapters.Content) error {
	return a.send.Send(ctx, "update:"+ref, adapters.Deadline(ctx, a.now(), nil),
		adapters.Owed{Place: to, What: []string{"the update of " + adapters.Describe(c)}},
		func(ctx context.Context) error { return a.update(ctx, to, ref, c) })
}

func (a *Adapter) update(ctx context.Context, to adapters.Place, ref string, c adapters.Content) error {
	c = a.named(ctx, to, c) // names.go
	err := a.edit(ctx, to, ref, render(c))
	if err != nil && c.Card == nil && isCode(err, codeInvalidForm) {
		// The message is a card, a Components V2 message, which stays
		// one: the text goes in a text display.
		a.log.Debug("a card's message takes no plain text; sending it as a text display", "ref", ref)
		return a.edit(ctx, to, ref, renderTextV2(c))
	}
	return err
}

// edit sends m as the new version of message ref.
func (a *Adapter) edit(ctx context.Context, to adapters.Place, ref string, m message) error {
	if ix := a.liveClick(ctx, ref); ix != nil {
		_, app := a.ids()
		err := a.api.do(ctx, http.MethodPatch, "/webhooks/"+app+"/"+ix.token+"/messages/@original", m, m.Files, nil)
		switch {
		case err == nil:
			return nil
		case adapters.Transient(err):
			return fmt.Errorf("update message %s through its interaction: %w", ref, err)
		}
		// The token has expired, or the interaction is gone: the
		// message can still be edited as the bot's own.
		a.log.Info("interaction edit failed; editing the message as the bot's own", "ref", ref, "err", err)
		a.forgetClick(ref, ix)
	}
	ch := where(to)
	if err := a.api.do(ctx, http.MethodPatch, "/channels/"+ch+"/messages/"+ref, m, m.Files, nil); err != nil {
		return fmt.Errorf("update message %s in channel %s: %w", ref, ch, err)
	}
	return nil
}

// Notify answers an interaction privately (an ephemeral follow-up, flag
// 64) while its token lives, and otherwise sends n.User a direct message.
func (a *Adapter) Notify(ctx context.Context, n adapters.Notice) error {
	return a.send.Send(ctx, "notice:"+n.User.ID, adapters.Deadline(ctx, a.now(), nil),
		adapters.Owed{Place: n.Place, User: n.User, What: []string{"a private notice (" + adapters.Excerpt(n.Text) + ")"}},
		func(ctx context.Context) error { return a.notify(ctx, n) })
}

func (a *Adapter) notify(ctx context.Context, n adapters.Notice) error {
	n.Text = a.named(ctx, n.Place, adapters.Content{Text: n.Text}).Text // names.go
	if ix, ok := n.Reply.(*interaction); ok && ix != nil && a.now().Sub(ix.received) < a.cfg.tokenLifetime {
		select {
		case <-ix.acked:
		case <-ctx.Done():
			return ctx.Err()
		}
		_, app := a.ids()
		body := message{Content: cut(n.Text, maxContent), Flags: flagEphemeral, Embeds: []struct{}{}, Components: []component{}, Attachments: []attachment{}, AllowedMentions: allowedMentions{Parse: []string{}}}
		err := a.api.do(ctx, http.MethodPost, "/webhooks/"+app+"/"+ix.token, body, nil, nil)
		if err == nil || adapters.Transient(err) {
			return err
		}
		a.log.Info("ephemeral answer failed; sending a direct message instead", "user", n.User.ID, "err", err)
	}
	if n.User.ID == "" {
		return errors.New("discord: notify: the notice names no user")
	}
	dm, err := a.dmChannel(ctx, n.User.ID)
	if err != nil {
		return err
	}
	m := render(adapters.Content{Text: n.Text})
	if err := a.api.do(ctx, http.MethodPost, "/channels/"+dm+"/messages", m, m.Files, nil); err != nil {
		return fmt.Errorf("send a direct message to %s: %w", n.User.ID, err)
	}
	return nil
}

const flagEphemeral = 1 << 6

// Undelivered is how many posts, updates and notices were given up after
// trying them until their deadline (adapters.Undeliverable).
func (a *Adapter) Undelivered() uint64 { return a.send.Undelivered() }

// tell says what could not be delivered to a place, once Discord answers
// again: to the person a lost notice was for, else in the thread.
func (a *Adapter) tell(ctx context.Context, o adapters.Owed) error {
	text := o.Text("Discord")
	if o.User.ID != "" {
		return a.Notify(ctx, adapters.Notice{Place: o.Place, User: o.User, Text: text})
	}
	_, err := a.Post(ctx, o.Place, adapters.Content{Text: text})
	return err
}

func (a *Adapter) dmChannel(ctx context.Context, user string) (string, error) {
	if ch, ok := a.dms.Get(user); ok {
		return ch, nil
	}
	var out struct {
		ID string `json:"id"`
	}
	if err := a.api.do(ctx, http.MethodPost, "/users/@me/channels", map[string]string{"recipient_id": user}, nil, &out); err != nil {
		return "", fmt.Errorf("open a direct message channel with %s: %w", user, err)
	}
	a.dms.Add(user, out.ID)
	return out.ID, nil
}

// where is the channel a place's messages go to: its thread.
func where(p adapters.Place) string {
	if p.Thread != "" {
		return p.Thread
	}
	return p.Channel
}

// queue holds what the gateway and the interactions endpoint delivered,
// in order, for Run; pushing never blocks, so the gateway's reader never
// stalls behind the handler (it would miss heartbeats).
type queue struct {
	mu     sync.Mutex
	items  []item
	signal chan struct{}
}

type item struct {
	msg *discordgo.Message
	ix  *interaction
}

func (q *queue) push(it item) {
	q.mu.Lock()
	q.items = append(q.items, it)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

func (q *queue) pop() (item, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) == 0 {
		return item{}, false
	}
	it := q.items[0]
	q.items[0] = item{}
	q.items = q.items[1:]
	return it, true
}
