// Package discordtest is a fake Discord for tests: an httptest server that
// speaks Discord's REST API (the part the adapter uses) and its gateway
// websocket (hello, identify, ready, heartbeats, resume, reconnect,
// dispatches) to the real discordgo client, and, for HTTP interactions,
// posts signed interactions to the bot's endpoint. It checks what Discord
// checks (message and embed size limits, one first response per
// interaction, tokens that expire) and keeps everything for inspection.
//
// Point the adapter at it with api_url (or DISCORD_API_URL) = Server.URL.
package discordtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"maps"
	"mime"
	"mime/multipart"
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
	"unicode/utf8"

	"github.com/gorilla/websocket"
)

// The fake's fixed ids.
const (
	Token   = "fake-bot-token"
	AppID   = "900000000000000001"
	BotID   = "900000000000000002"
	BotName = "countersign"
	GuildID = "900000000000000003"
)

// User is a person on the fake platform.
type User struct {
	ID, Name string
	Roles    []string
}

// Message is a message as the fake keeps it.
type Message struct {
	ID, ChannelID string
	AuthorID      string
	Content       string
	Embeds        []Embed
	Components    []Component
	Attachments   []Attachment
	Flags         int
	// VisibleTo is set for an ephemeral message: the one user who sees it.
	VisibleTo string
	Edits     int
	// Pinged are the mentions in Content that notified someone, under the
	// message's allowed_mentions ("<@id>", "<@&id>", "@everyone").
	Pinged []string
}

// Embed is a message embed.
type Embed struct {
	Title       string  `json:"title"`
	Description string  `json:"description"`
	Color       int     `json:"color"`
	Fields      []Field `json:"fields"`
	Footer      *struct {
		Text string `json:"text"`
	} `json:"footer"`
}

// Field is an embed field.
type Field struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Inline bool   `json:"inline"`
}

// Component is a message component: an action row, a button, and the
// Components V2 layout (container, section, text display, separator,
// file).
type Component struct {
	Type     int    `json:"type"`
	Style    int    `json:"style"`
	Label    string `json:"label"`
	CustomID string `json:"custom_id"`
	// Content is a text display's markdown.
	Content string `json:"content"`
	// AccentColor is a container's colour, nil for none.
	AccentColor *int `json:"accent_color"`
	// File is a file component's attachment.
	File *struct {
		URL string `json:"url"`
	} `json:"file"`
	// Accessory is a section's button or thumbnail.
	Accessory  *Component  `json:"accessory"`
	Components []Component `json:"components"`
}

// Attachment is an uploaded file.
type Attachment struct {
	Filename string
	Content  string
}

// Channel is a channel, thread or DM.
type Channel struct {
	ID       string `json:"id"`
	Type     int    `json:"type"`
	GuildID  string `json:"guild_id,omitempty"`
	ParentID string `json:"parent_id,omitempty"`
	OwnerID  string `json:"owner_id,omitempty"`
	Name     string `json:"name,omitempty"`
	// Recipient is the user of a DM channel.
	Recipient string `json:"-"`
}

// Response is a first response to an interaction.
type Response struct {
	Type  int
	Data  json.RawMessage
	After time.Duration // from the interaction's creation
}

// Interaction is an interaction the fake created.
type Interaction struct {
	ID, Token   string
	Type        int
	User        User
	ChannelID   string
	MessageID   string // the card clicked, for components and modals
	OriginalID  string // the message a deferred channel message made
	Created     time.Time
	Responses   []Response
	Expired     bool
	HTTPStatus  int // interactions over HTTP: the endpoint's status
	payload     []byte
	responseErr string
}

// Server is the fake Discord.
type Server struct {
	URL string
	srv *httptest.Server
	key ed25519.PrivateKey
	// PublicKey is the application's public key, hex, for HTTP interactions.
	PublicKey string

	mu           sync.Mutex
	changed      chan struct{}
	revoked      bool
	channels     map[string]*Channel
	roles        map[string]string // the guild's roles: id → name (AddRole)
	people       map[string]User   // GET /users/{id} (AddUser)
	messages     map[string]*Message
	typings      map[string][]time.Time // channel → each typing indicator (typing.go)
	order        []string
	interactions map[string]*Interaction
	commands     map[string]json.RawMessage
	limitEdits   int
	retryAfter   time.Duration
	sessions     map[string]*session
	lastDispatch *dispatch
	interactURL  string
	requests     []string
	conns        map[string]func(any) error // session id → its connection's writer
	resumes      int
	intents      int
	expireOnEdit bool
	noContent    bool
	storms       []*storm
	stormed      int
}

// storm is a run of refusals of one kind of API request.
type storm struct {
	method, suffix string
	left           int // -1: until Calm
	status         int
	retryAfter     time.Duration
}

type session struct {
	id   string
	seq  int64
	log  []frame
	conn *websocket.Conn
}

type frame struct {
	seq  int64
	data []byte
}

type dispatch struct {
	t string
	d any
}

var ids atomic.Uint64

func init() { ids.Store(uint64(time.Now().UnixMilli()-1420070400000) << 22) }

// NewID returns a fresh snowflake, unique in this process.
func NewID() string { return strconv.FormatUint(ids.Add(1), 10) }

// New starts a fake Discord; it stops when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{
		key: priv, PublicKey: hex.EncodeToString(pub),
		changed:      make(chan struct{}),
		channels:     map[string]*Channel{},
		roles:        map[string]string{},
		people:       map[string]User{},
		messages:     map[string]*Message{},
		interactions: map[string]*Interaction{},
		commands:     map[string]json.RawMessage{},
		sessions:     map[string]*session{},
		conns:        map[string]func(any) error{},
	}
	mux := http.NewServeMux()
	api := "/api/{v}"
	mux.HandleFunc("GET "+api+"/gateway", s.auth(s.gateway))
	mux.HandleFunc("GET "+api+"/gateway/bot", s.auth(s.gateway))
	mux.HandleFunc("GET "+api+"/users/@me", s.auth(s.me))
	mux.HandleFunc("POST "+api+"/users/@me/channels", s.auth(s.openDM))
	mux.HandleFunc("GET "+api+"/users/{id}", s.auth(s.getUser))
	mux.HandleFunc("GET "+api+"/guilds/{g}/roles", s.auth(s.getRoles))
	mux.HandleFunc("GET "+api+"/channels/{ch}", s.auth(s.getChannel))
	mux.HandleFunc("POST "+api+"/channels/{ch}/messages", s.auth(s.createMessage))
	mux.HandleFunc("PATCH "+api+"/channels/{ch}/messages/{msg}", s.auth(s.editMessage))
	mux.HandleFunc("POST "+api+"/channels/{ch}/typing", s.auth(s.typing))
	mux.HandleFunc("POST "+api+"/channels/{ch}/messages/{msg}/threads", s.auth(s.startThread))
	mux.HandleFunc("POST "+api+"/interactions/{id}/{token}/callback", s.callback)
	mux.HandleFunc("POST "+api+"/webhooks/{app}/{token}", s.followup)
	mux.HandleFunc("PATCH "+api+"/webhooks/{app}/{token}/messages/{msg}", s.editOriginal)
	mux.HandleFunc("PUT "+api+"/applications/{app}/commands", s.auth(s.putCommands))
	mux.HandleFunc("PUT "+api+"/applications/{app}/guilds/{g}/commands", s.auth(s.putCommands))
	mux.HandleFunc("GET /gateway", s.websocket)
	mux.HandleFunc("GET /gateway/", s.websocket)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		apiError(w, http.StatusNotFound, 0, "the fake Discord has no "+r.Method+" "+r.URL.Path)
	})
	s.srv = httptest.NewServer(s.logged(mux))
	s.URL = s.srv.URL
	t.Cleanup(s.Close)
	return s
}

// Close closes every connection and stops the server.
func (s *Server) Close() {
	s.mu.Lock()
	for _, ss := range s.sessions {
		if ss.conn != nil {
			_ = ss.conn.Close()
			ss.conn = nil
		}
	}
	s.mu.Unlock()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// changedLocked wakes every Wait.
func (s *Server) changedLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Wait waits until cond holds, failing the test after 5 seconds. cond
// runs without the server's lock (it may call the inspection methods); it
// is evaluated again on every change, with no polling.
func (s *Server) Wait(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("fake Discord: waited 5s for %s", what)
		}
	}
}

// waitLocked is Wait with cond run under the lock.
func (s *Server) waitLocked(t testing.TB, what string, cond func() bool) {
	t.Helper()
	s.Wait(t, what, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return cond()
	})
}

func (s *Server) logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Method+" "+r.URL.Path)
		st := s.stormLocked(r)
		s.mu.Unlock()
		if st != nil {
			if st.status == http.StatusTooManyRequests {
				secs := st.retryAfter.Seconds()
				w.Header().Set("Retry-After", strconv.FormatFloat(secs, 'f', -1, 64))
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusTooManyRequests)
				_ = json.NewEncoder(w).Encode(map[string]any{"message": "You are being rate limited.", "retry_after": secs, "global": false})
				return
			}
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(st.status)
			_, _ = io.WriteString(w, "<html><body>upstream connect error</body></html>")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Storm makes the next n API requests whose method is method ("*": any)
// and whose path ends in suffix answer HTTP status: 429 with retryAfter
// (header and body), or a 5xx with a proxy's error page. n < 0 refuses
// until Calm. The gateway's websocket is never refused.
func (s *Server) Storm(method, suffix string, n, status int, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.storms = append(s.storms, &storm{method: method, suffix: suffix, left: n, status: status, retryAfter: retryAfter})
}

// Calm ends every storm.
func (s *Server) Calm() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.storms = nil
	s.changedLocked()
}

// Stormed is how many requests a storm refused.
func (s *Server) Stormed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stormed
}

func (s *Server) stormLocked(r *http.Request) *storm {
	if !strings.HasPrefix(r.URL.Path, "/api/") {
		return nil
	}
	for _, st := range s.storms {
		if st.left != 0 && (st.method == "*" || st.method == r.Method) && strings.HasSuffix(r.URL.Path, st.suffix) {
			if st.left > 0 {
				st.left--
			}
			s.stormed++
			s.changedLocked()
			return st
		}
	}
	return nil
}

// Requests returns every request the server received, "METHOD /path".
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		revoked := s.revoked
		s.mu.Unlock()
		a := r.Header.Get("Authorization")
		if revoked || (a != "Bot "+Token) {
			apiError(w, http.StatusUnauthorized, 0, "401: Unauthorized")
			return
		}
		h(w, r)
	}
}

func apiError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"code": code, "message": msg})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) gateway(w http.ResponseWriter, r *http.Request) {
	ws := "ws" + strings.TrimPrefix(s.URL, "http") + "/gateway"
	writeJSON(w, map[string]any{"url": ws, "shards": 1, "session_start_limit": map[string]int{"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}})
}

func (s *Server) me(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string]any{"id": BotID, "username": BotName, "bot": true})
}

// AddRole creates or renames a role of the guild (GET /guilds/{id}/roles).
func (s *Server) AddRole(id, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.roles[id] = name
}

// AddUser makes u known to GET /users/{id} (a person never added is an
// Unknown User there).
func (s *Server) AddUser(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.people[u.ID] = u
}

// getRoles answers GET /guilds/{id}/roles
// (https://discord.com/developers/docs/resources/guild#get-guild-roles),
// @everyone (the guild's id) first.
func (s *Server) getRoles(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("g") != GuildID {
		apiError(w, http.StatusNotFound, 10004, "Unknown Guild")
		return
	}
	s.mu.Lock()
	list := []map[string]any{{"id": GuildID, "name": "@everyone", "position": 0, "permissions": "0", "managed": false, "mentionable": false, "hoist": false, "color": 0}}
	for _, id := range slices.Sorted(maps.Keys(s.roles)) {
		list = append(list, map[string]any{"id": id, "name": s.roles[id], "position": len(list), "permissions": "0", "managed": false, "mentionable": true, "hoist": false, "color": 0})
	}
	s.mu.Unlock()
	writeJSON(w, list)
}

// getUser answers GET /users/{id}
// (https://discord.com/developers/docs/resources/user#get-user).
func (s *Server) getUser(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	u, ok := s.people[r.PathValue("id")]
	s.mu.Unlock()
	if !ok {
		apiError(w, http.StatusNotFound, 10013, "Unknown User")
		return
	}
	writeJSON(w, map[string]any{"id": u.ID, "username": strings.ToLower(u.Name), "global_name": u.Name, "discriminator": "0", "avatar": nil})
}

// AddChannel adds a guild text channel and returns its id.
func (s *Server) AddChannel(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := NewID()
	s.channels[id] = &Channel{ID: id, Type: 0, GuildID: GuildID, Name: name}
	return id
}

// DM returns the DM channel between the bot and u, opening it if needed.
func (s *Server) DM(u User) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dmLocked(u.ID)
}

func (s *Server) dmLocked(user string) string {
	for _, c := range s.channels {
		if c.Type == 1 && c.Recipient == user {
			return c.ID
		}
	}
	id := NewID()
	s.channels[id] = &Channel{ID: id, Type: 1, Recipient: user}
	return id
}

func (s *Server) openDM(w http.ResponseWriter, r *http.Request) {
	var in struct {
		RecipientID string `json:"recipient_id"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.RecipientID == "" {
		apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body: recipient_id")
		return
	}
	s.mu.Lock()
	id := s.dmLocked(in.RecipientID)
	s.mu.Unlock()
	writeJSON(w, map[string]any{"id": id, "type": 1})
}

func (s *Server) getChannel(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	c, ok := s.channels[r.PathValue("ch")]
	var cc Channel
	if ok {
		cc = *c
	}
	s.mu.Unlock()
	if !ok {
		apiError(w, http.StatusNotFound, 10003, "Unknown Channel")
		return
	}
	writeJSON(w, cc)
}

// payload is a message create or edit.
type payload struct {
	Content     *string      `json:"content"`
	Embeds      *[]Embed     `json:"embeds"`
	Components  *[]Component `json:"components"`
	Attachments *[]struct {
		ID       int    `json:"id"`
		Filename string `json:"filename"`
	} `json:"attachments"`
	Flags           int              `json:"flags"`
	AllowedMentions *AllowedMentions `json:"allowed_mentions"`
	files           map[string]string
}

// AllowedMentions is a message's allowed_mentions
// (https://discord.com/developers/docs/resources/message#allowed-mentions-object).
type AllowedMentions struct {
	Parse []string `json:"parse"`
	Users []string `json:"users"`
	Roles []string `json:"roles"`
}

var mentionRE = regexp.MustCompile(`<@[!&]?[0-9A-Za-z_-]+>|@everyone|@here`)

// pinged lists whom content notifies under am, as Discord decides: with
// no allowed_mentions every mention does; with one, a mention notifies
// when its type is in parse or its id is listed.
func pinged(content string, am *AllowedMentions) []string {
	var out []string
	for _, m := range mentionRE.FindAllString(content, -1) {
		var kind, id string
		switch {
		case m == "@everyone" || m == "@here":
			kind, id = "everyone", m
		case strings.HasPrefix(m, "<@&"):
			kind, id = "roles", strings.TrimSuffix(strings.TrimPrefix(m, "<@&"), ">")
		default:
			kind, id = "users", strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(m, "<@"), "!"), ">")
		}
		ok := am == nil || slices.Contains(am.Parse, kind) ||
			kind == "users" && slices.Contains(am.Users, id) || kind == "roles" && slices.Contains(am.Roles, id)
		if ok && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// readPayload reads a JSON or multipart (payload_json + files[n]) body.
// validPayload reads a message payload and checks it as Discord would,
// answering the request with Discord's error when it fails; ok reports
// whether the handler goes on.
func validPayload(w http.ResponseWriter, r *http.Request) (payload, bool) {
	p, err := readPayload(r)
	if err != nil {
		apiError(w, http.StatusBadRequest, 50109, "The request body contains invalid JSON.")
		return p, false
	}
	if msg := p.check(); msg != "" {
		apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body: "+msg)
		return p, false
	}
	return p, true
}

func readPayload(r *http.Request) (payload, error) {
	var p payload
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		err := json.NewDecoder(io.LimitReader(r.Body, 10<<20)).Decode(&p)
		return p, err
	}
	p.files = map[string]string{}
	mr := multipart.NewReader(r.Body, params["boundary"])
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return p, err
		}
		data, _ := io.ReadAll(part)
		switch {
		case part.FormName() == "payload_json":
			if err := json.Unmarshal(data, &p); err != nil {
				return p, err
			}
		case strings.HasPrefix(part.FormName(), "files["):
			p.files[strings.TrimSuffix(strings.TrimPrefix(part.FormName(), "files["), "]")] = string(data)
		}
	}
	return p, nil
}

// check applies Discord's limits; it returns what is wrong, or "".
func (p payload) check() string {
	n := utf8.RuneCountInString
	if p.Content != nil && n(*p.Content) > 2000 {
		return "content: must be 2000 or fewer in length"
	}
	if p.Embeds != nil {
		for _, e := range *p.Embeds {
			total := n(e.Title) + n(e.Description)
			if n(e.Title) > 256 || n(e.Description) > 4096 || len(e.Fields) > 25 {
				return "embeds: title, description or field count over the limit"
			}
			for _, f := range e.Fields {
				if n(f.Name) > 256 || n(f.Value) > 1024 || f.Name == "" || f.Value == "" {
					return "embeds.fields: name over 256, value over 1024, or empty"
				}
				total += n(f.Name) + n(f.Value)
			}
			if e.Footer != nil {
				if n(e.Footer.Text) > 2048 {
					return "embeds.footer: over 2048"
				}
				total += n(e.Footer.Text)
			}
			if total > 6000 {
				return "embeds: over 6000 characters in all"
			}
		}
	}
	if p.Flags&FlagComponentsV2 != 0 {
		if msg := p.checkV2(); msg != "" {
			return msg
		}
	} else if p.Components != nil {
		for _, row := range *p.Components {
			if row.Type != 1 {
				return "components: only action rows at the top of a message without IS_COMPONENTS_V2"
			}
			for _, c := range row.Components {
				if n(c.Label) > 80 || len(c.CustomID) > 100 {
					return "components: label over 80 or custom_id over 100"
				}
			}
		}
	}
	if p.Attachments != nil {
		for _, a := range *p.Attachments {
			if _, ok := p.files[strconv.Itoa(a.ID)]; !ok {
				return "attachments: no file for attachment " + strconv.Itoa(a.ID)
			}
		}
	}
	return ""
}

func (m *Message) apply(p payload) {
	if p.Content != nil {
		m.Content = *p.Content
		m.Pinged = pinged(m.Content, p.AllowedMentions)
	}
	if p.Embeds != nil {
		m.Embeds = *p.Embeds
	}
	if p.Components != nil {
		m.Components = *p.Components
	}
	if p.Attachments != nil {
		m.Attachments = nil
		for _, a := range *p.Attachments {
			m.Attachments = append(m.Attachments, Attachment{Filename: a.Filename, Content: p.files[strconv.Itoa(a.ID)]})
		}
	}
}

func (m *Message) wire() map[string]any {
	return map[string]any{"id": m.ID, "channel_id": m.ChannelID, "content": m.Content, "author": map[string]any{"id": m.AuthorID}, "flags": m.Flags}
}

func (s *Server) newMessageLocked(ch, author string, p payload) *Message {
	m := &Message{ID: NewID(), ChannelID: ch, AuthorID: author, Flags: p.Flags}
	m.apply(p)
	s.messages[m.ID] = m
	s.order = append(s.order, m.ID)
	s.changedLocked()
	return m
}

func (s *Server) createMessage(w http.ResponseWriter, r *http.Request) {
	p, ok := validPayload(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := r.PathValue("ch")
	if _, ok := s.channels[ch]; !ok {
		apiError(w, http.StatusNotFound, 10003, "Unknown Channel")
		return
	}
	p.Flags &= FlagComponentsV2 // the only flag a bot sets on a message that sticks here
	m := s.newMessageLocked(ch, BotID, p)
	writeJSON(w, m.wire())
	// Discord sends the bot its own messages too.
	go s.dispatch("MESSAGE_CREATE", map[string]any{
		"id": m.ID, "channel_id": ch, "content": m.Content, "type": 0,
		"author":    map[string]any{"id": BotID, "username": BotName, "bot": true},
		"timestamp": time.Now().UTC().Format(time.RFC3339), "mentions": []any{},
	})
}

// rateLimitedLocked answers 429 when an edit is to be refused.
func (s *Server) rateLimitedLocked(w http.ResponseWriter) bool {
	if s.limitEdits <= 0 {
		return false
	}
	s.limitEdits--
	s.changedLocked()
	secs := s.retryAfter.Seconds()
	w.Header().Set("Retry-After", strconv.FormatFloat(secs, 'f', -1, 64))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusTooManyRequests)
	_ = json.NewEncoder(w).Encode(map[string]any{"message": "You are being rate limited.", "retry_after": secs, "global": false})
	return true
}

// RateLimitEdits makes the next n message edits (as the bot or through an
// interaction token) answer 429 with retryAfter.
func (s *Server) RateLimitEdits(n int, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limitEdits, s.retryAfter = n, retryAfter
}

// RateLimitsLeft is how many injected 429s are still to come.
func (s *Server) RateLimitsLeft() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limitEdits
}

func (s *Server) editMessage(w http.ResponseWriter, r *http.Request) {
	p, ok := validPayload(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rateLimitedLocked(w) {
		return
	}
	m, ok := s.messages[r.PathValue("msg")]
	if !ok || m.ChannelID != r.PathValue("ch") {
		apiError(w, http.StatusNotFound, 10008, "Unknown Message")
		return
	}
	if m.AuthorID != BotID {
		apiError(w, http.StatusForbidden, 50005, "Cannot edit a message authored by another user")
		return
	}
	if msg := m.editV2(p); msg != "" {
		apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body: "+msg)
		return
	}
	m.apply(p)
	m.Edits++
	s.changedLocked()
	writeJSON(w, m.wire())
}

func (s *Server) startThread(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Name string `json:"name"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Name == "" || utf8.RuneCountInString(in.Name) > 100 {
		apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body: name")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, msg := r.PathValue("ch"), r.PathValue("msg")
	if m, ok := s.messages[msg]; !ok || m.ChannelID != ch {
		apiError(w, http.StatusNotFound, 10008, "Unknown Message")
		return
	}
	if _, ok := s.channels[msg]; ok {
		apiError(w, http.StatusBadRequest, 160004, "A thread has already been created for this message")
		return
	}
	c := &Channel{ID: msg, Type: 11, GuildID: GuildID, ParentID: ch, OwnerID: BotID, Name: in.Name}
	s.channels[msg] = c
	s.changedLocked()
	writeJSON(w, c)
}

func (s *Server) putCommands(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("app") != AppID {
		apiError(w, http.StatusForbidden, 50001, "Missing Access")
		return
	}
	data, _ := io.ReadAll(r.Body)
	var cmds []map[string]any
	if err := json.Unmarshal(data, &cmds); err != nil {
		apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body")
		return
	}
	s.mu.Lock()
	s.commands[strings.TrimPrefix(r.URL.Path, "/api/"+r.PathValue("v"))] = data
	s.changedLocked()
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
}

// Commands returns the registered commands by path
// ("/applications/<app>/commands" for global ones).
func (s *Server) Commands() map[string]json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]json.RawMessage{}
	for k, v := range s.commands {
		out[k] = v
	}
	return out
}

// Messages returns every message in the order posted (ephemeral ones too).
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, id := range s.order {
		out = append(out, *s.messages[id])
	}
	return out
}

// Message returns a message as it is now.
func (s *Server) Message(id string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[id]
	if !ok {
		return Message{}, false
	}
	return *m, true
}

// InChannel returns the visible (not ephemeral) messages in a channel.
func (s *Server) InChannel(ch string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inChannelLocked(ch)
}

func (s *Server) inChannelLocked(ch string) []Message {
	var out []Message
	for _, id := range s.order {
		if m := s.messages[id]; m.ChannelID == ch && m.VisibleTo == "" {
			out = append(out, *m)
		}
	}
	return out
}

// Notices returns the text of what u alone sees: ephemeral messages and
// the bot's direct messages to u.
func (s *Server) Notices(u User) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, id := range s.order {
		m := s.messages[id]
		c := s.channels[m.ChannelID]
		if m.VisibleTo == u.ID || (m.VisibleTo == "" && c != nil && c.Type == 1 && c.Recipient == u.ID && m.AuthorID == BotID) {
			out = append(out, m.Content)
		}
	}
	return out
}

// Channel returns a channel.
func (s *Server) Channel(id string) (Channel, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[id]
	if !ok {
		return Channel{}, false
	}
	return *c, true
}

// Interaction returns an interaction as it is now.
func (s *Server) Interaction(id string) (Interaction, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ix, ok := s.interactions[id]
	if !ok {
		return Interaction{}, false
	}
	c := *ix
	c.Responses = append([]Response(nil), ix.Responses...)
	return c, true
}

// WaitResponse waits for the first response to interaction id.
func (s *Server) WaitResponse(t testing.TB, id string) Response {
	t.Helper()
	var r Response
	s.waitLocked(t, "the first response to interaction "+id, func() bool {
		ix := s.interactions[id]
		if ix != nil && len(ix.Responses) > 0 {
			r = ix.Responses[0]
			return true
		}
		return false
	})
	return r
}

// DisallowMessageContent plays an application whose Message Content
// intent is off in the developer portal: an identify asking for it is
// closed with 4014.
func (s *Server) DisallowMessageContent() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noContent = true
}

// ExpireTokensOnEdit makes every interaction token expire at its first
// message edit, as 15 minutes would during a long run: the edit fails
// with Unknown Webhook and the bot must edit its own message instead.
func (s *Server) ExpireTokensOnEdit(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireOnEdit = on
}

// ExpireToken makes interaction id's token expire, as 15 minutes would.
func (s *Server) ExpireToken(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ix := s.interactions[id]; ix != nil {
		ix.Expired = true
	}
}
