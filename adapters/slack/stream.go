package slack

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/countersign/countersign/adapters"
)

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
