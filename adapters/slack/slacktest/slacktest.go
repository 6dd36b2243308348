// Package slacktest is an in-process fake of Slack that speaks the real
// wire protocol to the real slack-go client: the Web API methods the
// adapter uses (form and JSON requests, {"ok":…} answers, 429 with
// Retry-After), the file upload flow, response_url posts, and Socket Mode
// (apps.connections.open, a websocket with hello, pings, envelopes, acks,
// disconnect and redelivery of what was not acknowledged), and the AI
// surfaces (thread status, streamed messages with tasks, the person's
// Stop: agent.go). Tests play
// Slack's side with it (Mention, Say, Click) and read what the bot did
// (Messages, Ephemerals, Files, Acks).
package slacktest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Tokens the fake accepts.
const (
	BotToken = "xoxb-fake-bot-token"
	AppToken = "xapp-fake-app-token"
)

// Fixed identities.
const (
	TeamID    = "T0FAKE"
	BotUserID = "U0BOT"
	BotID     = "B0BOT"
	AppID     = "A0APP"
)

// Scopes are the bot token's scopes auth.test reports by default.
var Scopes = []string{"app_mentions:read", "channels:history", "channels:read", "chat:write", "files:write", "groups:history", "groups:read", "im:history", "im:read", "mpim:history", "mpim:read", "usergroups:read", "users:read", "users:read.email"}

// User is a person in the fake workspace.
type User struct {
	ID   string
	Name string
	// Team is the user's workspace; empty means TeamID.
	Team string
	// Email is the address users.lookupByEmail finds the user by; empty
	// for none.
	Email string
}

// Message is a message as the fake keeps it.
type Message struct {
	Channel  string
	TS       string
	ThreadTS string
	User     string
	BotID    string
	Text     string
	// Blocks is the message's blocks as the client sent them.
	Blocks  json.RawMessage
	Updates int
	// UpdatedAt is the time of the last chat.update; zero until one.
	UpdatedAt time.Time
	// Parse and LinkNames are the chat.postMessage options that would
	// turn plain names in the text into mentions; empty when not sent.
	Parse, LinkNames string
}

// Ephemeral is a private notice: chat.postEphemeral or a response_url post.
type Ephemeral struct {
	Channel string
	Thread  string
	User    string
	Text    string
	Via     string // "chat.postEphemeral" or "response_url"
	// ResponseURL is the response_url posted to, which names the click
	// it answers (its payload's response_url); empty for chat.postEphemeral.
	ResponseURL string
}

// File is a file shared into a conversation.
type File struct {
	ID, Name, Title, Channel, Thread, Comment, Content string
}

// Envelope is one Socket Mode envelope the fake sent.
type Envelope struct {
	ID      string
	Type    string
	Payload json.RawMessage
	Retry   int
	SentAt  time.Time // last time it was written to a socket
	// Conn is the number of the socket it was last written to (see Open);
	// 0 while no socket has had it.
	Conn    int
	conn    *wsConn   // the socket it is on, nil while none
	final   bool      // acking it ends the installation (app_uninstalled)
	AckedAt time.Time // zero until acknowledged
}

// Server is the fake Slack.
type Server struct {
	srv *httptest.Server
	// PingInterval is how often the websocket is pinged (Slack: ~30s).
	PingInterval time.Duration
	// MaxConnections is how many sockets may be open at once (default 1:
	// a new socket replaces the old); Slack allows 10. See serveSocket.
	MaxConnections int

	mu          sync.Mutex
	changed     chan struct{}
	seq         int
	envSeq      int
	scopes      []string
	messages    []*Message
	ephemerals  []Ephemeral
	files       []File
	uploads     map[string]string
	groups      map[string]*group
	people      map[string]User     // users.info: AddUser
	members     map[string][]string // channel → its members (conversations.members)
	groupErr    string
	updateFails int
	storms      map[string]*storm
	stormed     int
	limited     int
	retryAfter  int
	calls       map[string]int
	callLog     []Call
	envelopes   []*Envelope
	last        *Envelope
	conns       []*wsConn // open sockets, oldest first
	rr          int       // round robin over conns
	connections int
	uninstalled bool
	responses   map[string]Ephemeral // response_url id → where its posts go
	upgrader    websocket.Upgrader
	ai          aiState // the AI surfaces (agent.go)
}

type group struct {
	handle string
	users  []string
}

type wsConn struct {
	n      int // its place among the sockets opened, from 1
	c      *websocket.Conn
	mu     sync.Mutex
	closed chan struct{}
}

func (w *wsConn) write(v any) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return w.c.WriteJSON(v)
}

// Cleaner is what New needs of a test: testing.TB, or anything that runs
// cleanups (a program that serves the fake by hand).
type Cleaner interface{ Cleanup(func()) }

// New starts a fake Slack that stops when the test ends.
func New(t Cleaner) *Server {
	s := &Server{
		PingInterval: time.Second,
		changed:      make(chan struct{}),
		scopes:       slices.Clone(Scopes),
		uploads:      map[string]string{},
		groups:       map[string]*group{},
		people:       map[string]User{},
		members:      map[string][]string{},
		calls:        map[string]int{},
		responses:    map[string]Ephemeral{},
		storms:       map[string]*storm{},
	}
	// slack-go dials with Origin: https://api.slack.com, as Slack expects.
	s.upgrader.CheckOrigin = func(r *http.Request) bool {
		o := r.Header.Get("Origin")
		return o == "" || o == "https://api.slack.com"
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Close stops the server and its sockets.
func (s *Server) Close() {
	s.mu.Lock()
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.c.Close()
	}
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// APIURL is the Web API base, for SLACK_API_URL.
func (s *Server) APIURL() string { return s.srv.URL + "/api/" }

// Env returns the environment a bot needs to talk to the fake in Socket
// Mode: the tokens and SLACK_API_URL.
func (s *Server) Env() map[string]string {
	return map[string]string{"SLACK_BOT_TOKEN": BotToken, "SLACK_APP_TOKEN": AppToken, "SLACK_API_URL": s.APIURL()}
}

// SetScopes sets the scopes auth.test reports in X-OAuth-Scopes.
func (s *Server) SetScopes(scopes ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scopes = scopes
}

// notify wakes every Wait. Call with s.mu held.
func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Wait waits until cond (called without the lock held) holds, or fails the
// test after 10 seconds, naming what.
func (s *Server) Wait(t testing.TB, what string, cond func() bool) {
	t.Helper()
	s.WaitFor(t, 10*time.Second, what, cond)
}

// WaitFor is Wait with a deadline of d. cond is checked whenever the fake
// changes (a call, a message, an ack, a socket), so it should depend on
// what the fake sees.
func (s *Server) WaitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("slacktest: waited %s for %s", d, what)
		}
	}
}

// tsSeq numbers message timestamps across every fake in the process, so
// that two fakes (two "processes") never share a ts, as Slack's are unique.
var tsSeq atomic.Int64

func (s *Server) nextTS() string {
	n := tsSeq.Add(1)
	return fmt.Sprintf("%d.%06d", 1700000000+n/1000000, n%1000000)
}

// ---- Web API ----

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/ws":
		s.serveSocket(w, r)
	case strings.HasPrefix(r.URL.Path, "/api/"):
		s.serveAPI(w, r, strings.TrimPrefix(r.URL.Path, "/api/"))
	case strings.HasPrefix(r.URL.Path, "/upload/"):
		s.serveUpload(w, r, strings.TrimPrefix(r.URL.Path, "/upload/"))
	case strings.HasPrefix(r.URL.Path, "/response/"):
		s.serveResponse(w, r, strings.TrimPrefix(r.URL.Path, "/response/"))
	default:
		http.NotFound(w, r)
	}
}

func reply(w http.ResponseWriter, v map[string]any) {
	if _, ok := v["ok"]; !ok {
		v["ok"] = true
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, code string) {
	reply(w, map[string]any{"ok": false, "error": code})
}

func token(r *http.Request) string {
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		return strings.TrimPrefix(h, "Bearer ")
	}
	return r.FormValue("token")
}

func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request, method string) {
	if ct := r.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/x-www-form-urlencoded") || r.Method == http.MethodGet {
		_ = r.ParseForm()
	}
	s.mu.Lock()
	s.calls[method]++
	s.callLog = append(s.callLog, Call{Method: method, At: time.Now()})
	s.notify()
	s.mu.Unlock()
	tok := token(r)
	if method == "apps.connections.open" {
		s.connectionsOpen(w, tok)
		return
	}
	switch tok {
	case BotToken:
	case AppToken:
		fail(w, "not_allowed_token_type")
		return
	case "":
		fail(w, "not_authed")
		return
	default:
		fail(w, "invalid_auth")
		return
	}
	if s.stormy(w, method) {
		return
	}
	switch method {
	case "auth.test":
		s.mu.Lock()
		w.Header().Set("X-OAuth-Scopes", strings.Join(s.scopes, ","))
		s.mu.Unlock()
		reply(w, map[string]any{"url": "https://fake.slack.test/", "team": "Fake", "user": "countersign", "team_id": TeamID, "user_id": BotUserID, "bot_id": BotID})
	case "chat.postMessage":
		s.postMessage(w, r)
	case "chat.update":
		s.update(w, r)
	case "chat.getPermalink":
		ch, ts := r.FormValue("channel"), r.FormValue("message_ts")
		if _, ok := s.Message(ch, ts); !ok {
			fail(w, "message_not_found")
			return
		}
		reply(w, map[string]any{"channel": ch, "permalink": "https://fake.slack.test/archives/" + ch + "/p" + strings.ReplaceAll(ts, ".", "")})
	case "chat.postEphemeral":
		s.mu.Lock()
		s.ephemerals = append(s.ephemerals, Ephemeral{Channel: r.FormValue("channel"), Thread: r.FormValue("thread_ts"), User: r.FormValue("user"), Text: r.FormValue("text"), Via: "chat.postEphemeral"})
		ts := s.nextTS()
		s.notify()
		s.mu.Unlock()
		reply(w, map[string]any{"message_ts": ts})
	case "conversations.replies":
		s.replies(w, r)
	case "assistant.threads.setStatus", "chat.startStream", "chat.appendStream", "chat.stopStream":
		s.serveAI(w, r, method)
	case "views.open", "views.publish":
		s.serveViews(w, r, method) // views.go
	case "files.getUploadURLExternal":
		s.mu.Lock()
		s.seq++
		id := fmt.Sprintf("F%06d", s.seq)
		s.uploads[id] = ""
		s.mu.Unlock()
		reply(w, map[string]any{"upload_url": s.srv.URL + "/upload/" + id, "file_id": id})
	case "files.completeUploadExternal":
		s.completeUpload(w, r)
	case "conversations.members":
		s.conversationMembers(w, r)
	case "usergroups.list":
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.groupErr != "" {
			fail(w, s.groupErr)
			return
		}
		var list []map[string]any
		for id, g := range s.groups {
			list = append(list, map[string]any{"id": id, "team_id": TeamID, "is_usergroup": true, "handle": g.handle, "name": g.handle})
		}
		reply(w, map[string]any{"usergroups": list})
	case "users.info":
		s.mu.Lock()
		u, ok := s.people[r.FormValue("user")]
		s.mu.Unlock()
		if !ok {
			fail(w, "user_not_found")
			return
		}
		team := u.Team
		if team == "" {
			team = TeamID
		}
		reply(w, map[string]any{"user": map[string]any{
			"id": u.ID, "team_id": team, "name": strings.ToLower(u.Name), "real_name": u.Name,
			"profile": map[string]any{"display_name": u.Name, "real_name": u.Name},
		}})
	case "users.lookupByEmail":
		s.lookupByEmail(w, r)
	case "usergroups.users.list":
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.groupErr != "" {
			fail(w, s.groupErr)
			return
		}
		g, ok := s.groups[r.FormValue("usergroup")]
		if !ok {
			fail(w, "no_such_subteam")
			return
		}
		reply(w, map[string]any{"users": g.users})
	default:
		fail(w, "unknown_method")
	}
}

// SetMembers makes users the members of channel (a channel, a private
// channel, a direct or group message), as conversations.members answers;
// a channel never set is one the bot cannot see (channel_not_found).
func (s *Server) SetMembers(channel string, users ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.members[channel] = slices.Clone(users)
}

// conversationMembers answers conversations.members as Slack does: a page
// of at most limit members (default 100, at most 1,000) after the cursor,
// and response_metadata.next_cursor while more remain.
func (s *Server) conversationMembers(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	all, ok := s.members[r.FormValue("channel")]
	all = slices.Clone(all)
	s.mu.Unlock()
	if !ok {
		fail(w, "channel_not_found")
		return
	}
	limit := 100
	if v := r.FormValue("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			fail(w, "invalid_limit")
			return
		}
		limit = min(n, 1000)
	}
	from := 0
	if c := r.FormValue("cursor"); c != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(c, "members:"))
		if err != nil || n < 0 || n > len(all) {
			fail(w, "invalid_cursor")
			return
		}
		from = n
	}
	to := min(from+limit, len(all))
	next := ""
	if to < len(all) {
		next = "members:" + strconv.Itoa(to)
	}
	reply(w, map[string]any{"members": all[from:to], "response_metadata": map[string]any{"next_cursor": next}})
}

func (s *Server) connectionsOpen(w http.ResponseWriter, tok string) {
	switch tok {
	case AppToken:
	case BotToken:
		fail(w, "not_allowed_token_type")
		return
	default:
		fail(w, "invalid_auth")
		return
	}
	s.mu.Lock()
	gone := s.uninstalled
	s.mu.Unlock()
	if gone {
		fail(w, "invalid_auth")
		return
	}
	reply(w, map[string]any{"url": "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/ws"})
}

// Slack's Block Kit limits, checked as Slack checks them: a message over
// them is refused with invalid_blocks.
func checkBlocks(raw string) error {
	var bs []map[string]any
	if err := json.Unmarshal([]byte(raw), &bs); err != nil {
		return fmt.Errorf("blocks are not a JSON array: %w", err)
	}
	if len(bs) > 50 {
		return fmt.Errorf("%d blocks, more than 50", len(bs))
	}
	text := func(v any) string {
		m, _ := v.(map[string]any)
		s, _ := m["text"].(string)
		return s
	}
	n := func(s string) int { return len([]rune(s)) }
	for i, b := range bs {
		switch b["type"] {
		case "header":
			if n(text(b["text"])) > 150 {
				return fmt.Errorf("block %d: header text over 150 characters", i)
			}
		case "section":
			if n(text(b["text"])) > 3000 {
				return fmt.Errorf("block %d: section text over 3000 characters", i)
			}
		case "context":
			els, _ := b["elements"].([]any)
			if len(els) > 10 {
				return fmt.Errorf("block %d: more than 10 context elements", i)
			}
			for _, e := range els {
				if n(text(e)) > 3000 {
					return fmt.Errorf("block %d: context text over 3000 characters", i)
				}
			}
		case "actions":
			els, _ := b["elements"].([]any)
			for _, e := range els {
				m, _ := e.(map[string]any)
				if n(text(m["text"])) > 75 {
					return fmt.Errorf("block %d: button text over 75 characters", i)
				}
				if v, _ := m["value"].(string); n(v) > 2000 {
					return fmt.Errorf("block %d: button value over 2000 characters", i)
				}
				if c, ok := m["confirm"].(map[string]any); ok {
					if n(text(c["title"])) > 100 || n(text(c["text"])) > 300 || n(text(c["confirm"])) > 30 || n(text(c["deny"])) > 30 {
						return fmt.Errorf("block %d: confirm dialog text over its limit", i)
					}
				}
			}
		case "rich_text":
			// Every preformatted run must fit Slack's per-block text cap.
			if n(string(mustJSON(b))) > 4000 {
				return fmt.Errorf("block %d: rich text over 4000 characters", i)
			}
		}
	}
	return nil
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) {
	channel := r.FormValue("channel")
	if channel == "" {
		fail(w, "channel_not_found")
		return
	}
	blocks := r.FormValue("blocks")
	if blocks != "" {
		if err := checkBlocks(blocks); err != nil {
			reply(w, map[string]any{"ok": false, "error": "invalid_blocks", "response_metadata": map[string]any{"messages": []string{err.Error()}}})
			return
		}
	}
	text := r.FormValue("text")
	if len([]rune(text)) > 40000 {
		fail(w, "msg_too_long")
		return
	}
	s.mu.Lock()
	m := &Message{Channel: channel, TS: s.nextTS(), ThreadTS: r.FormValue("thread_ts"), User: BotUserID, BotID: BotID, Text: text,
		Parse: r.FormValue("parse"), LinkNames: r.FormValue("link_names")}
	if blocks != "" {
		m.Blocks = json.RawMessage(blocks)
	}
	s.messages = append(s.messages, m)
	s.clearStatusLocked(channel, m.ThreadTS)
	s.notify()
	s.mu.Unlock()
	reply(w, map[string]any{"channel": channel, "ts": m.TS, "message": map[string]any{"text": text, "ts": m.TS, "user": BotUserID, "bot_id": BotID}})
}

func (s *Server) update(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.updateFails > 0 {
		s.updateFails--
		s.limited++
		w.Header().Set("Retry-After", strconv.Itoa(s.retryAfter))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"ok":false,"error":"ratelimited"}`)
		s.notify()
		return
	}
	channel, ts := r.FormValue("channel"), r.FormValue("ts")
	var m *Message
	for _, x := range s.messages {
		if x.Channel == channel && x.TS == ts {
			m = x
		}
	}
	if m == nil {
		fail(w, "message_not_found")
		return
	}
	if m.User != BotUserID {
		fail(w, "cant_update_message")
		return
	}
	if _, ok := r.Form["blocks"]; ok {
		blocks := r.FormValue("blocks")
		if err := checkBlocks(blocks); err != nil {
			reply(w, map[string]any{"ok": false, "error": "invalid_blocks", "response_metadata": map[string]any{"messages": []string{err.Error()}}})
			return
		}
		m.Blocks = json.RawMessage(blocks)
	}
	if _, ok := r.Form["text"]; ok {
		m.Text = r.FormValue("text")
	}
	m.Updates++
	m.UpdatedAt = time.Now()
	s.notify()
	reply(w, map[string]any{"channel": channel, "ts": ts, "text": m.Text})
}

func (s *Server) replies(w http.ResponseWriter, r *http.Request) {
	channel, ts := r.FormValue("channel"), r.FormValue("ts")
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, m := range s.messages {
		if m.Channel == channel && (m.TS == ts || m.ThreadTS == ts) {
			x := map[string]any{"type": "message", "ts": m.TS, "text": m.Text, "user": m.User}
			if m.ThreadTS != "" {
				x["thread_ts"] = m.ThreadTS
			}
			if m.BotID != "" {
				x["bot_id"] = m.BotID
			}
			out = append(out, x)
		}
	}
	if len(out) == 0 {
		fail(w, "thread_not_found")
		return
	}
	reply(w, map[string]any{"messages": out, "has_more": false, "response_metadata": map[string]any{"next_cursor": ""}})
}

func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request, id string) {
	if token(r) != BotToken {
		http.Error(w, "invalid_auth", http.StatusForbidden)
		return
	}
	f, _, err := r.FormFile("file")
	if err != nil {
		http.Error(w, "no file", http.StatusBadRequest)
		return
	}
	b, _ := io.ReadAll(f)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.uploads[id]; !ok {
		http.Error(w, "unknown upload", http.StatusNotFound)
		return
	}
	s.uploads[id] = string(b)
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, "OK - "+strconv.Itoa(len(b)))
}

func (s *Server) completeUpload(w http.ResponseWriter, r *http.Request) {
	var fs []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(r.FormValue("files")), &fs); err != nil || len(fs) == 0 {
		fail(w, "invalid_arguments")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, f := range fs {
		content, ok := s.uploads[f.ID]
		if !ok {
			fail(w, "file_not_found")
			return
		}
		s.files = append(s.files, File{ID: f.ID, Name: f.Title, Title: f.Title, Channel: r.FormValue("channel_id"), Thread: r.FormValue("thread_ts"), Comment: r.FormValue("initial_comment"), Content: content})
		out = append(out, map[string]any{"id": f.ID, "title": f.Title})
	}
	s.notify()
	reply(w, map[string]any{"files": out})
}

func (s *Server) serveResponse(w http.ResponseWriter, r *http.Request, id string) {
	var body struct {
		Text            string `json:"text"`
		ResponseType    string `json:"response_type"`
		ReplaceOriginal bool   `json:"replace_original"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body); err != nil {
		http.Error(w, "invalid_payload", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	target, ok := s.responses[id]
	if !ok {
		http.Error(w, "expired_url", http.StatusNotFound)
		return
	}
	if body.ResponseType == "in_channel" || body.ReplaceOriginal {
		http.Error(w, "the fake only takes ephemeral responses", http.StatusBadRequest)
		return
	}
	target.Text = body.Text
	target.Via = "response_url"
	target.ResponseURL = s.srv.URL + "/response/" + id
	s.ephemerals = append(s.ephemerals, target)
	s.notify()
	reply(w, map[string]any{})
}

// ---- Socket Mode ----

// Socket Mode with several connections: an app may hold up to 10 sockets
// at once (one per replica, say), and Slack sends each envelope to one of
// them. The fake takes them in turn (round robin, in the order they
// opened). An envelope not acknowledged on a socket that closes is sent
// again, retry_attempt raised, on another open socket, or on the next one
// to open, as Slack retries what it did not see acknowledged.
//
// MaxConnections caps the open sockets; a socket opened past it closes the
// oldest. It is 1 by default, so that a client's reconnection replaces its
// old socket; set it (up to 10) before the clients connect to serve
// several.

func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	c, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	s.mu.Lock()
	s.connections++
	conn := &wsConn{c: c, closed: make(chan struct{}), n: s.connections}
	n := len(s.conns) + 1
	s.mu.Unlock()
	_ = conn.write(map[string]any{"type": "hello", "num_connections": n, "debug_info": map[string]any{"host": "slacktest", "approximate_connection_time": 3600}, "connection_info": map[string]any{"app_id": AppID}})
	s.mu.Lock()
	s.conns = append(s.conns, conn)
	var old []*wsConn
	for len(s.conns) > max(s.MaxConnections, 1) {
		old = append(old, s.conns[0])
		s.conns = s.conns[1:]
	}
	// What was sent on no open socket (none was open, or its socket
	// closed) comes now.
	var again []*Envelope
	for _, e := range s.envelopes {
		if e.AckedAt.IsZero() && (e.conn == nil || !slices.Contains(s.conns, e.conn)) {
			if e.conn != nil {
				e.Retry++
			}
			e.conn = conn
			again = append(again, e)
		}
	}
	s.notify()
	s.mu.Unlock()
	for _, o := range old {
		_ = o.c.Close()
	}
	for _, e := range again {
		s.send(conn, e)
	}
	go s.ping(conn)
	for {
		_, data, err := c.ReadMessage()
		if err != nil {
			break
		}
		var ack struct {
			EnvelopeID string `json:"envelope_id"`
		}
		if json.Unmarshal(data, &ack) != nil || ack.EnvelopeID == "" {
			continue
		}
		now := time.Now()
		s.mu.Lock()
		for _, e := range s.envelopes {
			if e.ID == ack.EnvelopeID && e.AckedAt.IsZero() {
				e.AckedAt = now
				if e.final {
					s.uninstalled = true
				}
			}
		}
		s.notify()
		s.mu.Unlock()
	}
	close(conn.closed)
	s.closed(conn)
}

// closed forgets a socket that closed and sends what it left
// unacknowledged to the open ones, in turn.
func (s *Server) closed(conn *wsConn) {
	type resend struct {
		to *wsConn
		e  *Envelope
	}
	var out []resend
	s.mu.Lock()
	s.conns = slices.DeleteFunc(s.conns, func(c *wsConn) bool { return c == conn })
	for _, e := range s.envelopes {
		if e.conn != conn || !e.AckedAt.IsZero() {
			continue
		}
		if to := s.nextConn(); to != nil {
			e.Retry++
			e.conn = to
			out = append(out, resend{to, e})
		}
	}
	s.notify()
	s.mu.Unlock()
	for _, r := range out {
		s.send(r.to, r.e)
	}
}

// nextConn returns the open socket whose turn it is, or nil. Call with
// s.mu held.
func (s *Server) nextConn() *wsConn {
	if len(s.conns) == 0 {
		return nil
	}
	c := s.conns[s.rr%len(s.conns)]
	s.rr++
	return c
}

func (s *Server) ping(conn *wsConn) {
	t := time.NewTicker(s.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-conn.closed:
			return
		case <-t.C:
			conn.mu.Lock()
			err := conn.c.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(5*time.Second))
			conn.mu.Unlock()
			if err != nil {
				return
			}
		}
	}
}

func (s *Server) send(conn *wsConn, e *Envelope) {
	s.mu.Lock()
	e.SentAt = time.Now()
	e.Conn = conn.n
	msg := map[string]any{"envelope_id": e.ID, "type": e.Type, "payload": e.Payload, "accepts_response_payload": false, "retry_attempt": e.Retry}
	if e.Retry > 0 {
		msg["retry_reason"] = "timeout"
	}
	s.mu.Unlock()
	_ = conn.write(msg)
}

// enqueue records e and sends it on the socket whose turn it is, or on the
// next socket to open when none is.
func (s *Server) enqueue(e *Envelope) {
	s.mu.Lock()
	s.envelopes = append(s.envelopes, e)
	if !e.final {
		s.last = e
	}
	conn := s.nextConn()
	e.conn = conn
	s.notify()
	s.mu.Unlock()
	if conn != nil {
		s.send(conn, e)
	}
}

// deliver sends an envelope now, or on the next socket when none is open.
func (s *Server) deliver(typ string, payload any) *Envelope {
	s.mu.Lock()
	s.envSeq++
	e := &Envelope{ID: fmt.Sprintf("env-%06d", s.envSeq), Type: typ, Payload: mustJSON(payload)}
	s.mu.Unlock()
	s.enqueue(e)
	return e
}

// Connected waits until a client holds a socket.
func (s *Server) Connected(t testing.TB) {
	t.Helper()
	s.WaitOpen(t, 1)
}

// WaitOpen waits until at least n sockets are open.
func (s *Server) WaitOpen(t testing.TB, n int) {
	t.Helper()
	s.Wait(t, fmt.Sprintf("%d socket mode connection(s)", n), func() bool { return len(s.Open()) >= n })
}

// Connections is how many sockets clients have opened.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connections
}

// Open returns the numbers of the open sockets, in the order they opened;
// a socket's number is its place among every socket opened (1 for the
// first), as Envelope.Conn reports it.
func (s *Server) Open() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	for _, c := range s.conns {
		out = append(out, c.n)
	}
	return out
}

// NextConn is the number of the socket the next envelope goes to, or 0
// when none is open.
func (s *Server) NextConn() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.conns) == 0 {
		return 0
	}
	return s.conns[s.rr%len(s.conns)].n
}

// Disconnect asks every client to reconnect, as Slack does every few hours.
func (s *Server) Disconnect() {
	s.mu.Lock()
	conns := slices.Clone(s.conns)
	s.mu.Unlock()
	for _, conn := range conns {
		_ = conn.write(map[string]any{"type": "disconnect", "reason": "refresh_requested", "debug_info": map[string]any{"host": "slacktest"}})
	}
}

// DropSocket closes every socket without a word, as a network failure does.
func (s *Server) DropSocket() {
	s.mu.Lock()
	conns := s.conns
	s.conns = nil
	s.notify()
	s.mu.Unlock()
	for _, conn := range conns {
		_ = conn.c.UnderlyingConn().Close()
	}
}

// Uninstall delivers app_uninstalled and then refuses the app's token:
// the end of input for good.
func (s *Server) Uninstall() {
	s.mu.Lock()
	s.envSeq++
	e := &Envelope{ID: fmt.Sprintf("env-%06d", s.envSeq), Type: "events_api", final: true}
	s.mu.Unlock()
	e.Payload = mustJSON(s.callback(map[string]any{"type": "app_uninstalled"}))
	s.enqueue(e)
}

// Redeliver sends the last envelope again with its retry count raised, as
// Slack does when an ack was late.
func (s *Server) Redeliver() *Envelope {
	s.mu.Lock()
	last := s.last
	if last == nil {
		s.mu.Unlock()
		return nil
	}
	s.envSeq++
	e := &Envelope{ID: fmt.Sprintf("env-%06d", s.envSeq), Type: last.Type, Payload: last.Payload, Retry: last.Retry + 1}
	s.mu.Unlock()
	s.enqueue(e)
	return e
}

// DeliverRaw sends a raw envelope of type typ whose payload is the given
// text as is (for envelopes the client cannot decode).
func (s *Server) DeliverRaw(typ, payload string) *Envelope {
	return s.deliver(typ, json.RawMessage(payload))
}

func (s *Server) callback(event map[string]any) map[string]any {
	s.mu.Lock()
	s.envSeq++
	id := fmt.Sprintf("Ev%08d", s.envSeq)
	s.mu.Unlock()
	return map[string]any{"token": "verification-token", "team_id": TeamID, "api_app_id": AppID, "event": event, "type": "event_callback", "event_id": id, "event_time": time.Now().Unix(), "authorizations": []map[string]any{{"team_id": TeamID, "user_id": BotUserID, "is_bot": true}}}
}

// Events returns Events API bodies (event_callback) for a message: an
// app_mention when it mentions the bot in a channel, and a message event.
// HTTP mode tests sign and post them.
func (s *Server) Events(u User, channel, thread, text string, mention bool) (ts string, bodies [][]byte) {
	if mention {
		text = "<@" + BotUserID + "> " + text
	}
	m := s.store(u, channel, thread, text)
	for _, ev := range s.messageEvents(u, m, mention) {
		bodies = append(bodies, mustJSON(s.callback(ev)))
	}
	return m.TS, bodies
}

// Store posts text from u in channel (in thread when set) without
// delivering any event, as a message from before the bot was there.
func (s *Server) Store(u User, channel, thread, text string) string {
	return s.store(u, channel, thread, text).TS
}

func (s *Server) store(u User, channel, thread, text string) *Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := &Message{Channel: channel, TS: s.nextTS(), ThreadTS: thread, User: u.ID, Text: text}
	s.messages = append(s.messages, m)
	s.notify()
	return m
}

func channelType(channel string) string {
	switch {
	case strings.HasPrefix(channel, "D"):
		return "im"
	case strings.HasPrefix(channel, "G"):
		return "group"
	}
	return "channel"
}

func (s *Server) messageEvents(u User, m *Message, mention bool) []map[string]any {
	base := func(typ string) map[string]any {
		ev := map[string]any{"type": typ, "user": u.ID, "text": m.Text, "ts": m.TS, "channel": m.Channel, "event_ts": m.TS, "client_msg_id": "cm-" + m.TS}
		if m.ThreadTS != "" {
			ev["thread_ts"] = m.ThreadTS
		}
		if u.Team != "" {
			ev["user_team"] = u.Team
		}
		return ev
	}
	var out []map[string]any
	if mention && channelType(m.Channel) != "im" {
		out = append(out, base("app_mention"))
	}
	msg := base("message")
	msg["channel_type"] = channelType(m.Channel)
	return append(out, msg)
}

// Mention posts text from u that mentions the bot ("<@U0BOT> " is put in
// front) in channel, in thread when set, and delivers what Slack delivers:
// app_mention and message. It returns the message's ts.
func (s *Server) Mention(u User, channel, thread, text string) string {
	m := s.store(u, channel, thread, "<@"+BotUserID+"> "+text)
	for _, ev := range s.messageEvents(u, m, true) {
		s.deliver("events_api", s.callback(ev))
	}
	return m.TS
}

// MentionOnce is Mention delivering only the app_mention event (an app not
// subscribed to channel messages).
func (s *Server) MentionOnce(u User, channel, thread, text string) string {
	m := s.store(u, channel, thread, "<@"+BotUserID+"> "+text)
	s.deliver("events_api", s.callback(s.messageEvents(u, m, true)[0]))
	return m.TS
}

// Say posts text from u without a mention and delivers the message event
// (a direct message when channel starts with D).
func (s *Server) Say(u User, channel, thread, text string) string {
	m := s.store(u, channel, thread, text)
	for _, ev := range s.messageEvents(u, m, false) {
		s.deliver("events_api", s.callback(ev))
	}
	return m.TS
}

// Deliver sends an Events API inner event as Slack would (for edits,
// joins, bot messages).
func (s *Server) Deliver(event map[string]any) *Envelope {
	return s.deliver("events_api", s.callback(event))
}

// ClickPayload returns the block_actions payload of u clicking the button
// actionID with value on the message ts in channel, and registers its
// response_url.
func (s *Server) ClickPayload(u User, channel, ts, actionID, value string) []byte {
	s.mu.Lock()
	s.seq++
	n := s.seq
	var thread string
	var msg map[string]any
	for _, m := range s.messages {
		if m.Channel == channel && m.TS == ts {
			thread = m.ThreadTS
			msg = map[string]any{"type": "message", "ts": m.TS, "text": m.Text, "user": m.User, "bot_id": m.BotID}
			if len(m.Blocks) > 0 {
				msg["blocks"] = json.RawMessage(m.Blocks) // as Slack sends the message clicked on
			}
			if m.ThreadTS != "" {
				msg["thread_ts"] = m.ThreadTS
			}
		}
	}
	rid := strconv.Itoa(n)
	s.responses[rid] = Ephemeral{Channel: channel, Thread: thread, User: u.ID}
	s.mu.Unlock()
	team := u.Team
	if team == "" {
		team = TeamID
	}
	container := map[string]any{"type": "message", "message_ts": ts, "channel_id": channel, "is_ephemeral": false}
	if thread != "" {
		container["thread_ts"] = thread
	}
	actionTS := fmt.Sprintf("1700000001.%06d", n)
	payload := map[string]any{
		"type":         "block_actions",
		"team":         map[string]any{"id": team, "domain": "fake"},
		"user":         map[string]any{"id": u.ID, "username": u.Name, "name": u.Name, "team_id": team},
		"api_app_id":   AppID,
		"token":        "verification-token",
		"container":    container,
		"trigger_id":   fmt.Sprintf("%d.trigger", n),
		"channel":      map[string]any{"id": channel, "name": "ops"},
		"message":      msg,
		"response_url": s.srv.URL + "/response/" + rid,
		"action_ts":    actionTS,
		"actions": []map[string]any{{
			"action_id": actionID, "block_id": "countersign_decide", "value": value, "type": "button", "action_ts": actionTS,
			"text": map[string]any{"type": "plain_text", "text": actionID},
		}},
	}
	return mustJSON(payload)
}

// Click delivers u's click on a button of the message ts over the socket.
func (s *Server) Click(u User, channel, ts, actionID, value string) *Envelope {
	return s.deliver("interactive", json.RawMessage(s.ClickPayload(u, channel, ts, actionID, value)))
}

// ---- groups and failures ----

// AddGroup creates or replaces a user group.
func (s *Server) AddGroup(id, handle string, users ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.groups[id] = &group{handle: handle, users: users}
}

// AddUser makes u known to users.info (a person never added is
// user_not_found there).
func (s *Server) AddUser(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.people[u.ID] = u
}

// FailGroups makes usergroups.* answer with the error code ("" to stop).
func (s *Server) FailGroups(code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.groupErr = code
}

// FailUpdates makes the next n chat.update calls answer 429 with
// Retry-After: retryAfter seconds.
func (s *Server) FailUpdates(n, retryAfter int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.updateFails, s.retryAfter = n, retryAfter
}

// storm is a run of refusals of one Web API method.
type storm struct {
	left       int // calls still refused; -1: until Calm
	status     int
	retryAfter string
}

// Storm makes the next n calls of the Web API method ("*": every method
// but auth.test) answer HTTP status: 429 with a Retry-After of
// retryAfter seconds, or a 5xx with Slack's error page. n < 0 refuses
// until Calm.
func (s *Server) Storm(method string, n, status, retryAfter int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.storms[method] = &storm{left: n, status: status, retryAfter: strconv.Itoa(retryAfter)}
}

// Calm ends every storm.
func (s *Server) Calm() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.storms)
	s.notify()
}

// Stormed is how many calls a storm refused.
func (s *Server) Stormed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stormed
}

// stormy answers a call a storm refuses, and reports whether it did.
func (s *Server) stormy(w http.ResponseWriter, method string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.storms[method]
	if st == nil && method != "auth.test" {
		st = s.storms["*"]
	}
	if st == nil || st.left == 0 {
		return false
	}
	if st.left > 0 {
		st.left--
	}
	s.stormed++
	s.notify()
	if st.status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", st.retryAfter)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(st.status)
		_, _ = io.WriteString(w, `{"ok":false,"error":"ratelimited"}`)
		return true
	}
	w.Header().Set("Content-Type", "text/html")
	w.WriteHeader(st.status)
	_, _ = io.WriteString(w, "<html><body>Slack is having trouble</body></html>")
	return true
}

// ---- inspection ----

// Limited is how many chat.update calls were answered 429.
func (s *Server) Limited() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limited
}

// Call is one Web API call as the fake took it: its method and when.
type Call struct {
	Method string
	At     time.Time
}

// CallLog is every Web API call so far, in the order the fake took them.
func (s *Server) CallLog() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.callLog)
}

// Calls is how many times the Web API method was called.
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// Messages returns copies of the messages in channel (every thread),
// oldest first.
func (s *Server) Messages(channel string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.messages {
		if m.Channel == channel {
			out = append(out, *m)
		}
	}
	return out
}

// Thread returns the thread's messages after its first, oldest first.
func (s *Server) Thread(channel, thread string) []Message {
	var out []Message
	for _, m := range s.Messages(channel) {
		if m.ThreadTS == thread && m.TS != thread {
			out = append(out, m)
		}
	}
	return out
}

// Message returns the message ts in channel.
func (s *Server) Message(channel, ts string) (Message, bool) {
	for _, m := range s.Messages(channel) {
		if m.TS == ts {
			return m, true
		}
	}
	return Message{}, false
}

// BotMessages returns the bot's messages in channel, oldest first.
func (s *Server) BotMessages(channel string) []Message {
	var out []Message
	for _, m := range s.Messages(channel) {
		if m.User == BotUserID {
			out = append(out, m)
		}
	}
	return out
}

// Ephemerals returns the private notices user received, oldest first.
func (s *Server) Ephemerals(user string) []Ephemeral {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Ephemeral
	for _, e := range s.ephemerals {
		if e.User == user {
			out = append(out, e)
		}
	}
	return out
}

// Files returns the files shared so far.
func (s *Server) Files() []File {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.files)
}

// Envelopes returns copies of every envelope sent, oldest first.
func (s *Server) Envelopes() []Envelope {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Envelope
	for _, e := range s.envelopes {
		out = append(out, *e)
	}
	return out
}

// Acked waits until the envelope e (or one with its id) is acknowledged
// and returns how long the ack took from its last sending.
func (s *Server) Acked(t testing.TB, e *Envelope) time.Duration {
	t.Helper()
	var d time.Duration
	s.Wait(t, "the ack of "+e.ID, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, x := range s.envelopes {
			if x.ID == e.ID && !x.AckedAt.IsZero() {
				d = x.AckedAt.Sub(x.SentAt)
				return true
			}
		}
		return false
	})
	return d
}

// ---- reading messages as people see them ----

var (
	mentionRE = regexp.MustCompile(`<@([A-Z0-9]+)>`)
	dateRE    = regexp.MustCompile(`<!date\^[0-9]+\^[^|>]*\|([^>]*)>`)
)

// View returns what m shows: its blocks' text (every text field, mrkdwn
// entities decoded as Slack displays them) and each button as the words
// it stands for ("approve <id>", "cancel <id> [reason]"); its text when it
// has no blocks.
func View(m Message) string {
	if len(m.Blocks) == 0 || string(m.Blocks) == "[]" {
		return display(m.Text)
	}
	var bs []any
	if err := json.Unmarshal(m.Blocks, &bs); err != nil {
		return "unreadable blocks: " + err.Error()
	}
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if x["type"] == "button" {
				val, _ := x["value"].(string)
				switch x["action_id"] {
				case "countersign_approve":
					b.WriteString("[approve " + val + "]\n")
				case "countersign_cancel", "countersign_cancel_ask":
					b.WriteString("[cancel " + val + " [reason]]\n")
				case "countersign_stop":
					b.WriteString("[!stop " + val + "]\n")
				}
			}
			if t, ok := x["text"].(string); ok {
				b.WriteString(display(t))
				b.WriteByte('\n')
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				if k != "text" || !isString(x[k]) {
					walk(x[k])
				}
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(bs)
	return b.String()
}

func isString(v any) bool { _, ok := v.(string); return ok }

// display decodes mrkdwn as Slack displays it: dates as their fallback,
// entities as characters.
func display(s string) string {
	s = dateRE.ReplaceAllString(s, "$1")
	s = mentionRE.ReplaceAllString(s, "@$1")
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
}
