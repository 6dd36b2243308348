package discord

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/webhook"
)

// replayWindow is how long a signed request is taken: its timestamp within
// so long of now, and its signature remembered so long to refuse a replay.
const replayWindow = 5 * time.Minute

// interaction is the Reply of an interaction event: what answering it
// takes. acked is closed once the first response has been sent (or has
// failed: ackErr), so that a follow-up never overtakes it.
type interaction struct {
	id, token string
	received  time.Time
	acked     chan struct{}
	ackErr    error
	raw       *discordgo.Interaction
	http      bool // arrived on the interactions endpoint
	// what the first response is, decided on arrival
	response map[string]any
	// event is false for a delivery that makes no event (the cancel
	// button, which opens the reason dialog; an unknown button).
	event bool
	// recorded is closed once the bot has recorded the interaction's
	// event (adapters.Event.Recorded) or it made none: a decision's first
	// response waits for it, at most recordWithin.
	recorded     chan struct{}
	recordedOnce sync.Once
}

// recordWithin bounds the wait of a decision's first response for the
// bot's record: Discord wants the response within 3 seconds of sending the
// interaction, and the response itself takes a round trip.
const recordWithin = 1500 * time.Millisecond

// markRecorded says the interaction's event is recorded (or dropped); it
// returns at once.
func (ix *interaction) markRecorded() {
	ix.recordedOnce.Do(func() { close(ix.recorded) })
}

// waitRecorded waits, before a decision's first response, until the bot
// has recorded its event, at most recordWithin: a crash then cannot lose a
// click Discord was told was taken (unanswered, the person sees that it
// failed and can click again). A slash command is answered at once: its
// event's place is the response's message.
func (ix *interaction) waitRecorded(ctx context.Context, within time.Duration) {
	if !ix.event || ix.raw.Type == discordgo.InteractionApplicationCommand {
		return
	}
	t := time.NewTimer(within)
	defer t.Stop()
	select {
	case <-ix.recorded:
	case <-t.C:
	case <-ctx.Done():
	}
}

// Interaction response types
// (https://discord.com/developers/docs/interactions/receiving-and-responding#interaction-response-object-interaction-callback-type).
const (
	responsePong            = 1
	responseMessage         = 4
	responseDeferredMessage = 5
	responseDeferredUpdate  = 6
	responseModal           = 9
)

func (a *Adapter) onInteractionCreate(_ *discordgo.Session, ic *discordgo.InteractionCreate) {
	if ic.Interaction == nil {
		return
	}
	ix := a.arrive(ic.Interaction, false)
	// The first response goes on its own request with its own deadline,
	// beside the handler, once the event is recorded (recordWithin at
	// most): nothing else the bot does can delay it.
	if ix.event {
		a.q.push(item{ix: ix})
	}
	go a.ack(ix)
}

// arrive decides the first response to an interaction, before any I/O.
func (a *Adapter) arrive(raw *discordgo.Interaction, viaHTTP bool) *interaction {
	ix := &interaction{id: raw.ID, token: raw.Token, received: a.now(), acked: make(chan struct{}), recorded: make(chan struct{}), raw: raw, http: viaHTTP}
	ephemeral := func(text string) map[string]any {
		return map[string]any{"type": responseMessage, "data": map[string]any{"content": text, "flags": flagEphemeral, "allowed_mentions": allowedMentions{Parse: []string{}}}}
	}
	switch raw.Type {
	case discordgo.InteractionPing:
		ix.response = map[string]any{"type": responsePong}
	case discordgo.InteractionMessageComponent:
		data, _ := raw.Data.(discordgo.MessageComponentInteractionData)
		switch {
		case isReasonButton(data.CustomID): // modal.go
			ix.response = map[string]any{"type": responseModal, "data": requiredReasonModal(data.CustomID)}
		case strings.HasPrefix(data.CustomID, idEdit): // modal.go
			ix.response = map[string]any{"type": responseModal, "data": editModal(strings.TrimPrefix(data.CustomID, idEdit), cardOperation(raw.Message))}
		case strings.HasPrefix(data.CustomID, idApprove), strings.HasPrefix(data.CustomID, idStop):
			ix.response, ix.event = map[string]any{"type": responseDeferredUpdate}, true
		case strings.HasPrefix(data.CustomID, idCancel):
			ix.response = map[string]any{"type": responseModal, "data": reasonModal(strings.TrimPrefix(data.CustomID, idCancel))}
		default:
			a.log.Warn("a click on a button that is not countersign's", "custom_id", data.CustomID)
			ix.response = ephemeral("This button is not one I know; nothing was done.")
		}
	case discordgo.InteractionModalSubmit:
		data, _ := raw.Data.(discordgo.ModalSubmitInteractionData)
		if isOurModal(data.CustomID) { // modal.go
			ix.response, ix.event = map[string]any{"type": responseDeferredUpdate}, true
		} else {
			a.log.Warn("a dialog that is not countersign's", "custom_id", data.CustomID)
			ix.response = ephemeral("This dialog is not one I know; nothing was done.")
		}
	case discordgo.InteractionApplicationCommand:
		data, _ := raw.Data.(discordgo.ApplicationCommandInteractionData)
		if data.Name == a.cfg.CommandName {
			ix.response, ix.event = commandResponse(data), true // pending.go
		} else {
			ix.response = ephemeral("/" + data.Name + " is not one of my commands: try /" + a.cfg.CommandName + ".")
		}
	default:
		a.log.Warn("an interaction of a kind the adapter does not take", "type", int(raw.Type))
		ix.response = ephemeral("I cannot take this kind of interaction; nothing was done.")
	}
	if ix.event && userOf(raw).ID == "" {
		ix.response, ix.event = ephemeral("This interaction names no user; nothing was done."), false
	}
	return ix
}

// ack sends the first response on the gateway path: one direct request
// with a deadline, no retry (a 429 is logged, never slept on).
func (a *Adapter) ack(ix *interaction) {
	defer close(ix.acked)
	ix.waitRecorded(context.Background(), a.recordWithin)
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.AckTimeout)
	defer cancel()
	err := a.api.do(ctx, http.MethodPost, "/interactions/"+ix.id+"/"+ix.token+"/callback", ix.response, nil, nil)
	if err != nil {
		ix.ackErr = err
		if isCode(err, codeAlreadyAcked) {
			a.log.Debug("interaction answered by another replica", "interaction", ix.id)
			return
		}
		a.log.Error("answer an interaction", "interaction", ix.id, "err", err)
	}
}

// prepareInteraction turns an acknowledged interaction into an event.
func (a *Adapter) prepareInteraction(ctx context.Context, ix *interaction) (adapters.Event, bool) {
	raw := ix.raw
	e := adapters.Event{
		ID:          prefixInteraction + ix.id,
		Redelivered: !ix.http, // every gateway session receives it
		Recorded:    ix.markRecorded,
		Reply:       ix,
		User:        userOf(raw),
		Place:       a.place(ctx, raw.GuildID, raw.ChannelID),
		Direct:      raw.GuildID == "",
	}
	switch data := raw.Data.(type) {
	case discordgo.MessageComponentInteractionData:
		ref := ""
		if raw.Message != nil {
			ref = raw.Message.ID
			a.remember(ref, ix)
		}
		if id, ok := strings.CutPrefix(data.CustomID, idStop); ok {
			e.Decision = &adapters.Decision{ApprovalID: id, Stop: true, Ref: ref}
		} else {
			e.Decision = &adapters.Decision{ApprovalID: strings.TrimPrefix(data.CustomID, idApprove), Approve: true, Ref: ref}
		}
	case discordgo.ModalSubmitInteractionData:
		ref := ""
		if raw.Message != nil {
			ref = raw.Message.ID
			a.remember(ref, ix)
		}
		modalEvent(&e, data.CustomID, data.Components, ref) // modal.go: a decision with its reason, or an edit
	case discordgo.ApplicationCommandInteractionData:
		e.Text = commandText(data)
		if e.Private = isPending(data); !e.Private { // pending.go: answered privately, in place
			e.Place = a.commandPlace(ctx, ix, e)
		}
	default:
		return adapters.Event{}, false
	}
	return e, true
}

// commandText turns /countersign <sub> <arg> into what the bot reads.
func commandText(d discordgo.ApplicationCommandInteractionData) string {
	if len(d.Options) == 0 || d.Options[0] == nil {
		return ""
	}
	sub := d.Options[0]
	arg := ""
	if len(sub.Options) > 0 && sub.Options[0] != nil {
		if s, ok := sub.Options[0].Value.(string); ok {
			arg = strings.TrimSpace(s)
		}
	}
	switch sub.Name {
	case "ask":
		return arg
	case "pending":
		return "!pending"
	default: // run, sql
		return "!" + sub.Name + " " + arg
	}
}

// commandPlace shows the slash command in the channel (it is the deferred
// response's message) and starts the conversation's thread from it; in a
// thread or a direct message, the conversation is where it was used.
func (a *Adapter) commandPlace(ctx context.Context, ix *interaction, e adapters.Event) adapters.Place {
	p := e.Place
	select {
	case <-ix.acked:
	case <-ctx.Done():
		return p
	}
	if ix.ackErr != nil {
		return p
	}
	_, app := a.ids()
	var out struct {
		ID string `json:"id"`
	}
	shown, _ := adapters.Visible(e.Text)
	m := render(adapters.Content{Text: "<@" + e.User.ID + "> asked:\n```\n" + strings.ReplaceAll(shown, "```", "` ` `") + "\n```"})
	if err := a.api.do(ctx, http.MethodPatch, "/webhooks/"+app+"/"+ix.token+"/messages/@original", m, m.Files, &out); err != nil {
		a.log.Warn("show the slash command in the channel", "err", err)
		return p
	}
	if p.Thread != p.Channel || e.Direct || out.ID == "" {
		return p
	}
	p.Thread = a.startThread(ctx, p.Channel, out.ID, e.Text)
	return p
}

// remember keeps the latest click on a card, whose token edits it.
func (a *Adapter) remember(ref string, ix *interaction) {
	a.clicks.Add(ref, ix)
}

// liveClick is the latest click on ref while its token lives and its
// first response went through (waiting for that response when it is on
// its way: it has its own short deadline).
func (a *Adapter) liveClick(ctx context.Context, ref string) *interaction {
	ix, _ := a.clicks.Get(ref)
	if ix == nil || a.now().Sub(ix.received) >= a.cfg.tokenLifetime {
		return nil
	}
	select {
	case <-ix.acked:
		if ix.ackErr != nil && !isCode(ix.ackErr, codeAlreadyAcked) {
			return nil
		}
		return ix
	case <-ctx.Done():
		return nil
	}
}

func (a *Adapter) forgetClick(ref string, ix *interaction) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if cur, _ := a.clicks.Peek(ref); cur == ix {
		a.clicks.Remove(ref)
	}
}

func userOf(raw *discordgo.Interaction) adapters.User {
	if raw.Member != nil {
		return user(raw.Member.User, raw.Member)
	}
	return user(raw.User, nil)
}

func modalValue(cs []discordgo.MessageComponent, key string) string {
	for _, c := range cs {
		switch c := c.(type) {
		case *discordgo.ActionsRow:
			if v := modalValue(c.Components, key); v != "" {
				return v
			}
		case *discordgo.TextInput:
			if c.CustomID == key {
				return c.Value
			}
		}
	}
	return ""
}

// registerCommands replaces the slash commands with this version's (a
// bulk overwrite: a restart never duplicates them).
func (a *Adapter) registerCommands(ctx context.Context) {
	_, app := a.ids()
	cmds := []map[string]any{commandSpec(a.cfg.CommandName)}
	paths := []string{"/applications/" + app + "/commands"}
	if len(a.cfg.Guilds) > 0 {
		paths = paths[:0]
		for _, g := range a.cfg.Guilds {
			paths = append(paths, "/applications/"+app+"/guilds/"+g+"/commands")
		}
	}
	for _, p := range paths {
		if err := a.api.do(ctx, http.MethodPut, p, cmds, nil, nil); err != nil {
			a.log.Error("register the slash commands: mentions still work; invite the bot with the applications.commands scope", "path", p, "err", err)
		}
	}
}

func commandSpec(name string) map[string]any {
	str := func(n, d string) []map[string]any {
		return []map[string]any{{"type": 3, "name": n, "description": d, "required": true}}
	}
	sub := func(n, d string, opts []map[string]any) map[string]any {
		m := map[string]any{"type": 1, "name": n, "description": d}
		if opts != nil {
			m["options"] = opts
		}
		return m
	}
	return map[string]any{
		"name":        name,
		"type":        1,
		"description": "Ask Countersign, or run something through its approvals",
		"contexts":    []int{0, 1}, // guilds and the bot's DMs
		"options": []map[string]any{
			sub("ask", "Ask in words; risky tool calls wait for a second person", str("text", "What you want done or known")),
			sub("run", "Run a shell command through the approvals", str("command", "The command line")),
			sub("sql", "Run an SQL statement through the approvals", str("statement", "The statement")),
			sub("pending", "The approvals waiting in this channel", nil),
		},
	}
}

// limits are the interactions endpoint's: the shared defaults with the
// configured body cap.
func (a *Adapter) limits() webhook.Limits {
	l := webhook.Defaults
	l.MaxBody = a.cfg.MaxBodyBytes
	if l.BodyBudget < l.MaxBody {
		l.BodyBudget = l.MaxBody
	}
	return l
}

// serveHTTP starts the interactions endpoint; stop shuts it down.
func (a *Adapter) serveHTTP() (stop func(), err error) {
	limits := a.limits()
	ln, err := webhook.Listen(a.cfg.Listen, limits)
	if err != nil {
		return nil, fmt.Errorf("discord.listen: listen on %s: %w", a.cfg.Listen, err)
	}
	a.mu.Lock()
	a.listener = ln
	a.mu.Unlock()
	mux := http.NewServeMux()
	bodies := webhook.NewBodies(limits)
	mux.HandleFunc("POST "+InteractionsPath, func(w http.ResponseWriter, r *http.Request) { a.serveInteraction(w, r, bodies) })
	srv := webhook.Server(mux, limits)
	srv.RegisterOnShutdown(bodies.CutAll)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("interactions endpoint stopped", "err", err)
		}
	}()
	a.log.Info("interactions endpoint listening", "addr", ln.Addr().String(), "path", InteractionsPath)
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

// serveInteraction checks a request's signature headers and timestamp
// before reading its body, verifies the signature before reading anything
// in it, refuses a replay, queues the event, and answers once it is
// recorded (recordWithin at most).
func (a *Adapter) serveInteraction(w http.ResponseWriter, r *http.Request, bodies *webhook.Bodies) {
	sig, ok := signature(r.Header)
	if !ok || !fresh(r.Header.Get("X-Signature-Timestamp"), a.now()) {
		a.log.Warn("an interaction request without a well-formed, fresh signature was refused", "remote", r.RemoteAddr)
		webhook.Close(w)
		http.Error(w, "invalid request signature", http.StatusUnauthorized)
		return
	}
	body, err := bodies.Read(w, r)
	if err != nil {
		webhook.Close(w)
		switch {
		case errors.Is(err, webhook.ErrTooLarge):
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		case errors.Is(err, webhook.ErrSlow):
			a.log.Warn("an interaction request whose body did not arrive in time was cut", "remote", r.RemoteAddr, "err", err)
			http.Error(w, "body too slow", http.StatusRequestTimeout)
		default:
			http.Error(w, "cannot read the body", http.StatusBadRequest)
		}
		return
	}
	if !verify(a.key, r.Header, body) {
		a.log.Warn("an interaction request with a bad signature was refused", "remote", r.RemoteAddr)
		webhook.Close(w)
		http.Error(w, "invalid request signature", http.StatusUnauthorized)
		return
	}
	if a.replays.Seen(sig) {
		// The same signed request again: Discord never sends one twice,
		// so it is a replay. Refused, and nothing is done.
		a.log.Warn("a replayed interaction request was refused", "remote", r.RemoteAddr)
		http.Error(w, "replayed request", http.StatusUnauthorized)
		return
	}
	var raw discordgo.Interaction
	if err := json.Unmarshal(body, &raw); err != nil {
		a.log.Warn("an interaction request that is not an interaction", "err", err)
		http.Error(w, "not an interaction", http.StatusBadRequest)
		return
	}
	ix := a.arrive(&raw, true)
	if ix.event {
		a.q.push(item{ix: ix})
	}
	ix.waitRecorded(r.Context(), a.recordWithin)
	js, _ := json.Marshal(ix.response)
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(js)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	ix.ackErr = err
	close(ix.acked)
}

// fresh reports whether a signed request's timestamp is within five
// minutes of now: a recorded request cannot be replayed later.
func fresh(ts string, now time.Time) bool {
	sec, err := strconv.ParseInt(ts, 10, 64)
	return err == nil && webhook.Fresh(sec, now, replayWindow)
}

// signature is the request's signature, decoded, when it is well formed.
func signature(h http.Header) ([]byte, bool) {
	sig, err := hex.DecodeString(h.Get("X-Signature-Ed25519"))
	return sig, err == nil && len(sig) == ed25519.SignatureSize && h.Get("X-Signature-Timestamp") != ""
}

// verify checks Discord's Ed25519 signature over the timestamp and body
// (https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint-validating-security-request-headers).
func verify(key ed25519.PublicKey, h http.Header, body []byte) bool {
	sig, err := hex.DecodeString(h.Get("X-Signature-Ed25519"))
	if err != nil || len(sig) != ed25519.SignatureSize || len(key) != ed25519.PublicKeySize {
		return false
	}
	ts := h.Get("X-Signature-Timestamp")
	if ts == "" {
		return false
	}
	var msg bytes.Buffer
	msg.WriteString(ts)
	msg.Write(body)
	return ed25519.Verify(key, msg.Bytes(), sig)
}
