package slack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/countersign/countersign/adapters"
)

// This file is what the bot sends to Slack: posts, updates and private
// notices, each through the adapter's Sender (adapters/deliver.go), which
// retries it until its deadline; a turn's status and streamed answer in
// its thread, which a post clears (below); and what the adapter knows
// while it sends (at the end). The events that come in are slack.go's.

// Post posts text, a card, or both into the conversation's thread and
// returns the message's ts. A card whose operation is too long to show
// whole gets the full text attached as a file in the thread first; if that
// fails, the card is not posted (nobody may approve what they cannot read).
func (a *Adapter) Post(ctx context.Context, to adapters.Place, c adapters.Content) (string, error) {
	var ts string
	err := a.send.Send(ctx, "post:"+to.Channel+"/"+to.Thread, adapters.Deadline(ctx, a.now(), c.Card),
		adapters.Owed{Place: to, What: []string{adapters.Describe(c)}},
		func(ctx context.Context) (err error) {
			ts, err = a.post(ctx, to, c)
			return err
		})
	return ts, err
}

func (a *Adapter) post(ctx context.Context, to adapters.Place, c adapters.Content) (string, error) {
	c = a.named(ctx, c) // blocks.go: groups and people by name
	files, err := a.attachAll(ctx, to, c)
	if err != nil {
		return "", err
	}
	opts := a.content(c, files)
	if to.Thread != "" {
		opts = append(opts, slackapi.MsgOptionTS(to.Thread))
	}
	_, ts, err := a.api.PostMessageContext(ctx, to.Channel, opts...)
	if err != nil {
		return "", slackErr("post to "+to.Channel, err)
	}
	a.remember(to.Channel, to.Thread)
	a.features.posted(to.Channel, to.Thread) // below: Slack cleared the thread's status
	return ts, nil
}

// attachAll attaches the files c needs: a card's long operation and
// output, a plain message's full text.
func (a *Adapter) attachAll(ctx context.Context, to adapters.Place, c adapters.Content) (attached, error) {
	if c.Card != nil {
		return a.attach(ctx, to, c.Card)
	}
	text, err := a.attachText(ctx, to, c)
	return attached{Text: text}, err
}

// Update replaces the message ref in place (chat.update). A message that
// is gone wraps adapters.ErrGone; a 429 is an *adapters.RateLimitError.
func (a *Adapter) Update(ctx context.Context, to adapters.Place, ref string, c adapters.Content) error {
	return a.send.Send(ctx, "update:"+to.Channel+"/"+ref, adapters.Deadline(ctx, a.now(), nil),
		adapters.Owed{Place: to, What: []string{"the update of " + adapters.Describe(c)}},
		func(ctx context.Context) error { return a.update(ctx, to, ref, c) })
}

func (a *Adapter) update(ctx context.Context, to adapters.Place, ref string, c adapters.Content) error {
	c = a.named(ctx, c) // blocks.go: groups and people by name
	files, err := a.attachAll(ctx, to, c)
	if err != nil {
		return err
	}
	opts := a.content(c, files)
	if _, _, _, err := a.api.UpdateMessageContext(ctx, to.Channel, ref, opts...); err != nil {
		return slackErr("update message "+ref+" in "+to.Channel, err)
	}
	return nil
}

// Notify sends a notice only n.User sees: through the click's response_url
// when the notice answers a click, else chat.postEphemeral in the thread.
func (a *Adapter) Notify(ctx context.Context, n adapters.Notice) error {
	return a.send.Send(ctx, "notice:"+n.User.ID+"@"+n.Place.Channel+"/"+n.Place.Thread, adapters.Deadline(ctx, a.now(), nil),
		adapters.Owed{Place: n.Place, User: n.User, What: []string{"a private notice (" + adapters.Excerpt(n.Text) + ")"}},
		func(ctx context.Context) error { return a.notify(ctx, n) })
}

func (a *Adapter) notify(ctx context.Context, n adapters.Notice) error {
	text := escape(a.named(ctx, adapters.Content{Text: n.Text}).Text) // blocks.go
	channel, thread := n.Place.Channel, n.Place.Thread
	if r, ok := n.Reply.(*reply); ok && r != nil {
		if r.ResponseURL != "" && (r.User == "" || r.User == n.User.ID) {
			_, _, err := a.api.PostMessageContext(ctx, r.Channel,
				slackapi.MsgOptionText(text, false),
				slackapi.MsgOptionResponseURL(r.ResponseURL, slackapi.ResponseTypeEphemeral))
			if err == nil {
				return nil
			}
			if adapters.Transient(err) {
				return slackErr("answer a click privately", err)
			}
			a.log.Warn("response_url refused a notice; sending it with chat.postEphemeral", "user", n.User.ID, "err", err)
		}
		if channel == "" {
			channel, thread = r.Channel, r.Thread
		}
	}
	opts := []slackapi.MsgOption{slackapi.MsgOptionText(text, false)}
	if thread != "" {
		opts = append(opts, slackapi.MsgOptionTS(thread))
	}
	if _, err := a.api.PostEphemeralContext(ctx, channel, n.User.ID, opts...); err != nil {
		return slackErr("send a private notice to "+n.User.ID, err)
	}
	return nil
}

// Undelivered is how many posts, updates and notices were given up after
// trying them until their deadline (adapters.Undeliverable).
func (a *Adapter) Undelivered() uint64 { return a.send.Undelivered() }

// tell says what could not be delivered to a place, once Slack answers
// again: privately to the person a lost notice was for, else in the thread.
func (a *Adapter) tell(ctx context.Context, o adapters.Owed) error {
	text := o.Text("Slack")
	if o.User.ID != "" {
		return a.Notify(ctx, adapters.Notice{Place: o.Place, User: o.User, Text: text})
	}
	_, err := a.Post(ctx, o.Place, adapters.Content{Text: text})
	return err
}

// Permalink is the address of a posted message (chat.getPermalink), for
// the gateway's card_url (adapters.Permalinker).
func (a *Adapter) Permalink(ctx context.Context, to adapters.Place, ref string) (string, error) {
	link, err := a.api.GetPermalinkContext(ctx, &slackapi.PermalinkParameters{Channel: to.Channel, Ts: ref})
	if err != nil {
		return "", fmt.Errorf("slack: the address of message %s in %s: %w", ref, to.Channel, err)
	}
	return link, nil
}

// A turn in Slack: the thread's status says what the bot does
// (assistant.threads.setStatus, which takes chat:write), and the turn's
// answer is one streamed message (chat.startStream, chat.appendStream,
// chat.stopStream) in which every tool call is a task (a task_update
// chunk, shown as a timeline). The person's Stop of the stream comes back
// as agent_session_stopped, an event with StopTurn. A workspace that
// refuses a feature gets the messages of old for it, said once in the log.

// features remembers what the workspace refused, for the process.
type features struct {
	mu             sync.Mutex
	statusRefused  string // Slack's error, once status was refused
	streamRefused  string // the same for streaming
	statusLogged   bool
	streamLogged   bool
	stopped        map[string]struct{} // "channel/ts" of streams the person stopped
	stoppedEntries []string            // their order, oldest first, to bound the set
	statuses       map[string]string   // "channel/thread" → the status shown there, while one is
}

// maxStatuses bounds the threads whose status is remembered; past it the
// memory starts again (a status forgotten costs one call to clear it).
const maxStatuses = 4096

// posted notes that the app posted in a thread: Slack cleared its status.
func (f *features) posted(channel, thread string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.statuses, channel+"/"+thread)
}

// showing reports whether text is already what the thread shows, and
// remembers it as shown otherwise (the caller then sets it).
func (f *features) showing(channel, thread, text string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := channel + "/" + thread
	if f.statuses[k] == text {
		return true
	}
	if text == "" {
		delete(f.statuses, k)
		return false
	}
	if f.statuses == nil || len(f.statuses) >= maxStatuses {
		f.statuses = map[string]string{}
	}
	f.statuses[k] = text
	return false
}

// forget drops what showing remembered of a thread whose status could
// not be set.
func (f *features) forget(channel, thread string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.statuses, channel+"/"+thread)
}

// maxStopped bounds the memory of stopped streams.
const maxStopped = 1024

// halted notes streams that Slack stopped at the person's request:
// appends to them are not tried.
func (f *features) halted(channel string, ts []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped == nil {
		f.stopped = map[string]struct{}{}
	}
	for _, t := range ts {
		k := channel + "/" + t
		if _, ok := f.stopped[k]; ok {
			continue
		}
		f.stopped[k] = struct{}{}
		f.stoppedEntries = append(f.stoppedEntries, k)
		if len(f.stoppedEntries) > maxStopped {
			delete(f.stopped, f.stoppedEntries[0])
			f.stoppedEntries = f.stoppedEntries[1:]
		}
	}
}

func (f *features) isHalted(channel, ts string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.stopped[channel+"/"+ts]
	return ok
}

// refusedCodes are Slack's answers that mean "this workspace (or this
// app's configuration) does not do that", not "this call failed": the
// feature is switched off for the process and the messages of old take
// its place.
var refusedCodes = map[string]bool{
	"not_allowed":                 true,
	"feature_not_enabled":         true,
	"not_enabled":                 true,
	"unknown_method":              true,
	"method_deprecated":           true,
	"missing_scope":               true,
	"no_permission":               true,
	"not_allowed_token_type":      true,
	"team_access_not_granted":     true,
	"restricted_action":           true,
	"access_denied":               true,
	"streaming_not_enabled":       true,
	"not_an_agent":                true,
	"not_an_assistant_app":        true,
	"app_not_enabled_for_feature": true,
}

// refused reports Slack's error code when err says the feature is not
// available in this workspace.
func refused(err error) (string, bool) {
	se, ok := errors.AsType[slackapi.SlackErrorResponse](err)
	if !ok || !refusedCodes[se.Err] {
		return "", false
	}
	return se.Err, true
}

// statusTimeout bounds one status call: a status that comes late is
// worse than none.
const statusTimeout = 5 * time.Second

// SetStatus shows text as the thread's status (assistant.threads.setStatus);
// empty text clears it. Slack clears it too when the bot posts in the
// thread, so a status the thread shows already costs no call: a clear
// after a post, or the same status again. adapters.StatusWaiting is shown
// by the card the bot has just posted (which cleared the status): in
// Slack it is a clear, not a line under the card that says the same. One
// try: a status is not worth waiting out a rate limit for.
func (a *Adapter) SetStatus(ctx context.Context, to adapters.Place, text string) error {
	if !on(a.cfg.Status) {
		return fmt.Errorf("slack thread status: %w: %w", adapters.ErrNoStatus, errStatusOff)
	}
	a.features.mu.Lock()
	code := a.features.statusRefused
	a.features.mu.Unlock()
	if code != "" {
		return fmt.Errorf("slack thread status: %w: this workspace refused it (%s)", adapters.ErrNoStatus, code)
	}
	if to.Thread == "" {
		return fmt.Errorf("slack thread status: %w: no thread to show it on", adapters.ErrNoStatus)
	}
	if text == adapters.StatusWaiting {
		text = ""
	}
	if a.features.showing(to.Channel, to.Thread, text) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	err := a.api.SetAssistantThreadsStatusContext(ctx, slackapi.AssistantThreadsSetStatusParameters{
		ChannelID: to.Channel, ThreadTS: to.Thread, Status: cutRunes(text, maxStatus),
	})
	if err == nil {
		return nil
	}
	a.features.forget(to.Channel, to.Thread)
	if code, ok := refused(err); ok {
		a.features.mu.Lock()
		a.features.statusRefused = code
		first := !a.features.statusLogged
		a.features.statusLogged = true
		a.features.mu.Unlock()
		if first {
			a.log.Warn("slack refused the thread status (assistant.threads.setStatus); threads show no status while the bot works", "error", code)
		}
	}
	return slackErr("set the status of thread "+to.Thread+" in "+to.Channel, err)
}

var errStatusOff = errors.New("switched off (slack.status: false)")

// Lengths Slack takes (a status is one short line; a task's title and
// details are cut before Slack would refuse them).
const (
	maxStatus      = 50
	maxTaskTitle   = 256
	maxTaskDetails = 2000
	maxStreamText  = 12000
)

// StartStream returns the turn's stream in the thread. It makes no call:
// chat.startStream goes with the turn's first words or task, so a turn
// that shows nothing costs nothing. It wraps adapters.ErrNoStream when
// streaming is off (slack.streaming: false) or the workspace refused it.
func (a *Adapter) StartStream(_ context.Context, to adapters.Place, asker adapters.User) (adapters.Stream, error) {
	if !on(a.cfg.Streaming) {
		return nil, fmt.Errorf("slack: %w: slack.streaming is false", adapters.ErrNoStream)
	}
	a.features.mu.Lock()
	code := a.features.streamRefused
	a.features.mu.Unlock()
	if code != "" {
		return nil, fmt.Errorf("slack: %w: the workspace refused chat.startStream (%s)", adapters.ErrNoStream, code)
	}
	if to.Channel == "" || to.Thread == "" {
		return nil, fmt.Errorf("slack: %w: a stream needs a thread", adapters.ErrNoStream)
	}
	team := asker.Team
	if team == "" {
		team = a.identity().TeamID
	}
	return &stream{a: a, to: to, team: team, user: asker.ID}, nil
}

// stream is one turn's streamed message.
type stream struct {
	a    *Adapter
	to   adapters.Place
	team string
	user string
	ts   string // the streamed message, once started
}

func (s *stream) Text(ctx context.Context, markdown string) error {
	return s.send(ctx, slackapi.NewMarkdownTextChunk(cutRunes(markdown, maxStreamText)))
}

func (s *stream) Task(ctx context.Context, t adapters.Task) error {
	return s.send(ctx, s.a.taskChunk(s.to, t))
}

// taskChunk is a task as Slack's task_update chunk: the operation as the
// title, the state, the details, and a link to the card.
func (a *Adapter) taskChunk(to adapters.Place, t adapters.Task) slackapi.TaskUpdateChunk {
	title, _ := adapters.Visible(t.Title)
	c := slackapi.NewTaskUpdateChunk(t.ID, cutRunes(title, maxTaskTitle))
	c.Status = slackapi.TaskCardStatus(t.State)
	c.Details = cutRunes(t.Details, maxTaskDetails)
	if t.CardRef != "" {
		if link := a.permalink(to, t.CardRef); link != "" {
			c.Sources = []slackapi.TaskCardSource{slackapi.NewTaskCardSource(link, "approval card")}
		}
	}
	return c
}

// permalink is the address of message ts in the thread, made from the
// workspace's address (auth.test) without a chat.getPermalink call.
func (a *Adapter) permalink(to adapters.Place, ts string) string {
	base := a.identity().URL
	if base == "" || to.Channel == "" || ts == "" {
		return ""
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	link := base + "archives/" + to.Channel + "/p" + strings.Replace(ts, ".", "", 1)
	if to.Thread != "" && to.Thread != ts {
		link += "?thread_ts=" + to.Thread + "&cid=" + to.Channel
	}
	return link
}

// errHalted: the person stopped the stream; Slack takes no more of it.
var errHalted = errors.New("the stream was stopped in Slack")

// send starts the stream with the chunk, or appends the chunk to it.
func (s *stream) send(ctx context.Context, c slackapi.StreamChunk) error {
	if s.ts == "" {
		return s.start(ctx, c)
	}
	if s.a.features.isHalted(s.to.Channel, s.ts) {
		return fmt.Errorf("append to stream %s: %w", s.ts, errHalted)
	}
	// One try: a failed append ends the stream for the turn, and the bot
	// posts what it was to show as a message, which waits out Slack.
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, _, err := s.a.api.AppendStreamContext(ctx, s.to.Channel, s.ts, slackapi.MsgOptionChunks(c)); err != nil {
		return slackErr("append to stream "+s.ts+" in "+s.to.Channel, err)
	}
	return nil
}

func (s *stream) start(ctx context.Context, c slackapi.StreamChunk) error {
	opts := []slackapi.MsgOption{
		slackapi.MsgOptionTS(s.to.Thread),
		slackapi.MsgOptionTaskDisplayMode(slackapi.TaskDisplayModeTimeline),
		slackapi.MsgOptionChunks(c),
	}
	if s.user != "" {
		opts = append(opts, slackapi.MsgOptionRecipientTeamID(s.team), slackapi.MsgOptionRecipientUserID(s.user))
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, ts, err := s.a.api.StartStreamContext(ctx, s.to.Channel, opts...)
	if err == nil {
		s.ts = ts
		s.a.remember(s.to.Channel, s.to.Thread)
		s.a.features.posted(s.to.Channel, s.to.Thread) // a reply: Slack cleared the status
		return nil
	}
	if code, ok := refused(err); ok {
		f := &s.a.features
		f.mu.Lock()
		f.streamRefused = code
		first := !f.streamLogged
		f.streamLogged = true
		f.mu.Unlock()
		if first {
			s.a.log.Warn("slack refused streaming (chat.startStream); answers and tool calls are posted as messages", "error", code)
		}
		return fmt.Errorf("slack: %w: %w", adapters.ErrNoStream, slackErr("start a stream in "+s.to.Channel, err))
	}
	return slackErr("start a stream in "+s.to.Channel, err)
}

// Stop ends the streamed message, with the answer's last words.
func (s *stream) Stop(ctx context.Context, final string) error {
	if s.ts == "" {
		if final == "" {
			return nil
		}
		// Nothing was streamed: the answer alone is one message.
		if err := s.start(ctx, slackapi.NewMarkdownTextChunk(cutRunes(final, maxStreamText))); err != nil {
			return err
		}
		final = ""
	}
	if s.a.features.isHalted(s.to.Channel, s.ts) {
		return fmt.Errorf("stop stream %s: %w", s.ts, errHalted)
	}
	var opts []slackapi.MsgOption
	if final != "" {
		opts = append(opts, slackapi.MsgOptionChunks(slackapi.NewMarkdownTextChunk(cutRunes(final, maxStreamText))))
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, _, err := s.a.api.StopStreamContext(ctx, s.to.Channel, s.ts, opts...); err != nil {
		return slackErr("stop stream "+s.ts+" in "+s.to.Channel, err)
	}
	return nil
}

// fromStop turns agent_session_stopped (the person's Stop) into an event
// with StopTurn, for the thread, or the whole conversation when Slack
// names no thread.
func (a *Adapter) fromStop(ctx context.Context, team string, st slackevents.AgentSessionStoppedEvent, retried bool) []adapters.Event {
	if st.Channel == "" || st.User == "" {
		a.log.Warn("dropped an agent_session_stopped without channel or user", "channel", st.Channel, "user", st.User)
		return nil
	}
	if team == "" {
		team = a.identity().TeamID
	}
	stamp := st.EventTimestamp
	if stamp == "" {
		stamp = strings.Join(st.StreamingMessageTimestamps, ",")
	}
	place := adapters.Place{Channel: st.Channel, Thread: st.ThreadTimestamp}
	rp := &reply{Channel: st.Channel, User: st.User, Thread: st.ThreadTimestamp}
	user := a.decider(ctx, adapters.User{ID: st.User, Team: team})
	return []adapters.Event{{
		ID:          "stop:" + team + ":" + st.Channel + ":" + st.ThreadTimestamp + ":" + stamp,
		Redelivered: retried,
		Reply:       rp,
		User:        user,
		Place:       place,
		StopTurn:    true,
	}}
}

// cutRunes cuts s to n characters, marking the cut.
func cutRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// What the adapter knows of Slack while it runs, read by the events that
// come in (slack.go) and by what goes out (above): who the app is, the
// threads it takes part in, and what a Web API error means.

// identity is who the bot is, from auth.test.
type identity struct {
	UserID string
	BotID  string
	TeamID string
	// URL is the workspace's address (https://acme.slack.com/), for
	// links to messages without a chat.getPermalink call.
	URL string
}

// slackErr wraps a Web API error with what was being done, and maps the
// errors the bot acts on: a gone message to adapters.ErrGone, a 429 to
// *adapters.RateLimitError.
func slackErr(what string, err error) error {
	if rl, ok := errors.AsType[*slackapi.RateLimitedError](err); ok {
		return &adapters.RateLimitError{RetryAfter: rl.RetryAfter, Err: fmt.Errorf("%s: %w", what, err)}
	}
	if sc, ok := errors.AsType[slackapi.StatusCodeError](err); ok {
		switch {
		case sc.Code == http.StatusTooManyRequests:
			return &adapters.RateLimitError{RetryAfter: time.Second, Err: fmt.Errorf("%s: %w", what, err)}
		case sc.Code >= 500:
			return fmt.Errorf("%s: %w: %w", what, adapters.ErrUnavailable, err)
		}
	}
	if _, ok := errors.AsType[net.Error](err); ok && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w: %w", what, adapters.ErrUnavailable, err)
	}
	if se, ok := errors.AsType[slackapi.SlackErrorResponse](err); ok {
		switch se.Err {
		case "ratelimited":
			return &adapters.RateLimitError{RetryAfter: time.Second, Err: fmt.Errorf("%s: %w", what, err)}
		case "internal_error", "fatal_error", "service_unavailable", "request_timeout":
			return fmt.Errorf("%s: %w: %w", what, adapters.ErrUnavailable, err)
		case "message_not_found", "channel_not_found", "is_archived", "thread_not_found", "cant_update_message":
			return fmt.Errorf("%s: %w: %w", what, adapters.ErrGone, err)
		case "not_in_channel":
			return fmt.Errorf("%s: %w; invite the bot to the channel (/invite @countersign)", what, err)
		case "missing_scope":
			return fmt.Errorf("%s: %w (needed: %s); add the scope in the app's manifest and reinstall it", what, err, se.Needed)
		}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// remember notes that the bot takes part in a thread.
func (a *Adapter) remember(channel, thread string) {
	if channel == "" || thread == "" {
		return
	}
	a.threads.Add(channel+"/"+thread, struct{}{})
}

func (a *Adapter) identity() identity {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.self
}
