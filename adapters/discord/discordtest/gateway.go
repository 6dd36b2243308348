package discordtest

import (
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

func ed25519Sign(s *Server, msg []byte) []byte { return ed25519.Sign(s.key, msg) }

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// gatewayOp is a gateway payload
// (https://discord.com/developers/docs/topics/gateway-events#payload-structure).
type gatewayOp struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
	S  *int64          `json:"s,omitempty"`
	T  string          `json:"t,omitempty"`
}

// websocket serves one gateway connection: hello, then identify (a new
// session and READY) or resume (the missed dispatches, then RESUMED), then
// heartbeats until the connection ends.
func (s *Server) websocket(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	revoked := s.revoked
	s.mu.Unlock()
	if revoked {
		apiError(w, http.StatusUnauthorized, 0, "401: Unauthorized")
		return
	}
	if r.URL.Query().Get("encoding") != "json" {
		http.Error(w, "the fake gateway speaks encoding=json only", http.StatusBadRequest)
		return
	}
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer conn.Close()
	var wmu = &struct{ ch chan struct{} }{make(chan struct{}, 1)}
	wmu.ch <- struct{}{}
	write := func(v any) error {
		<-wmu.ch
		defer func() { wmu.ch <- struct{}{} }()
		return conn.WriteJSON(v)
	}
	if err := write(map[string]any{"op": 10, "d": map[string]any{"heartbeat_interval": 41250}}); err != nil {
		return
	}
	var sess *session
	defer func() {
		if sess != nil {
			s.mu.Lock()
			if sess.conn == conn {
				sess.conn = nil
			}
			s.mu.Unlock()
		}
	}()
	for {
		var op gatewayOp
		if err := conn.ReadJSON(&op); err != nil {
			return
		}
		switch op.Op {
		case 1: // heartbeat
			if err := write(map[string]any{"op": 11}); err != nil {
				return
			}
		case 2: // identify
			var id struct {
				Token   string `json:"token"`
				Intents int    `json:"intents"`
			}
			_ = json.Unmarshal(op.D, &id)
			if strings.TrimPrefix(id.Token, "Bot ") != Token {
				_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4004, "Authentication failed."), time.Now().Add(time.Second))
				return
			}
			s.mu.Lock()
			disallowed := s.noContent && id.Intents&(1<<15) != 0
			s.mu.Unlock()
			if disallowed {
				_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4014, "Disallowed intent(s)."), time.Now().Add(time.Second))
				return
			}
			sess = &session{id: "sess-" + NewID(), conn: conn}
			s.mu.Lock()
			s.sessions[sess.id] = sess
			s.intents = id.Intents
			ready := map[string]any{
				"v": 9, "session_id": sess.id, "resume_gateway_url": "ws" + strings.TrimPrefix(s.URL, "http") + "/gateway",
				"user":             map[string]any{"id": BotID, "username": BotName, "bot": true},
				"application":      map[string]any{"id": AppID, "flags": 0},
				"guilds":           []any{map[string]any{"id": GuildID, "unavailable": true}},
				"private_channels": []any{},
			}
			err := s.sendLocked(sess, "READY", ready, write)
			s.conns[sess.id] = write
			s.changedLocked()
			s.mu.Unlock()
			if err != nil {
				return
			}
		case 6: // resume
			var res struct {
				SessionID string `json:"session_id"`
				Seq       int64  `json:"seq"`
			}
			_ = json.Unmarshal(op.D, &res)
			s.mu.Lock()
			old := s.sessions[res.SessionID]
			if old == nil || s.revoked {
				s.mu.Unlock()
				_ = write(map[string]any{"op": 9, "d": false})
				continue
			}
			sess = old
			sess.conn = conn
			s.conns[sess.id] = write
			s.resumes++
			var err error
			for _, f := range sess.log {
				if f.seq > res.Seq && err == nil {
					err = writeRaw(write, f.data)
				}
			}
			if err == nil {
				err = s.sendLocked(sess, "RESUMED", map[string]any{}, write)
			}
			s.changedLocked()
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}
}

func writeRaw(write func(any) error, data []byte) error { return write(json.RawMessage(data)) }

// sendLocked numbers a dispatch in sess, keeps it for a resume, and sends
// it when the session is connected.
func (s *Server) sendLocked(sess *session, t string, d any, write func(any) error) error {
	sess.seq++
	seq := sess.seq
	data, _ := json.Marshal(map[string]any{"op": 0, "s": seq, "t": t, "d": d})
	sess.log = append(sess.log, frame{seq: seq, data: data})
	if sess.conn == nil || write == nil {
		return nil
	}
	return writeRaw(write, data)
}

// dispatch sends an event to every session, connected or waiting to
// resume, as Discord does to every session of a bot.
func (s *Server) dispatch(t string, d any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sess := range s.sessions {
		write := s.conns[sess.id]
		if sess.conn == nil {
			write = nil
		}
		if err := s.sendLocked(sess, t, d, write); err != nil {
			_ = sess.conn.Close()
		}
	}
	s.changedLocked()
}

// deliver dispatches an event a person caused; Redispatch repeats it.
func (s *Server) deliver(t string, d any) {
	s.mu.Lock()
	s.lastDispatch = &dispatch{t: t, d: d}
	s.mu.Unlock()
	s.dispatch(t, d)
}

// Redispatch sends the last message or interaction a person caused again, with a new sequence number,
// as a second session or a replay would deliver it.
func (s *Server) Redispatch(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	d := s.lastDispatch
	s.mu.Unlock()
	if d == nil {
		t.Fatal("fake Discord: nothing was dispatched yet")
	}
	s.dispatch(d.t, d.d)
}

// WaitSessions waits until n gateway sessions are connected.
func (s *Server) WaitSessions(t testing.TB, n int) {
	t.Helper()
	s.waitLocked(t, "gateway sessions to connect", func() bool {
		c := 0
		for _, sess := range s.sessions {
			if sess.conn != nil {
				c++
			}
		}
		return c >= n
	})
}

// Resumes is how many sessions were resumed.
func (s *Server) Resumes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resumes
}

// Intents is the intents the last identify asked for.
func (s *Server) Intents() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.intents
}

// Drop closes every gateway connection abruptly, as a network failure
// would; sessions stay resumable.
func (s *Server) Drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sess := range s.sessions {
		if sess.conn != nil {
			_ = sess.conn.Close()
			sess.conn = nil
		}
	}
	s.changedLocked()
}

// AskReconnect sends op 7 (reconnect) to every connected session.
func (s *Server) AskReconnect() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sess := range s.sessions {
		if w := s.conns[sess.id]; sess.conn != nil && w != nil {
			_ = w(map[string]any{"op": 7, "d": nil})
		}
	}
}

// End revokes the token, as deleting the application or resetting the
// token would: REST answers 401 and gateway connections close with 4004.
func (s *Server) End() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revoked = true
	for _, sess := range s.sessions {
		if sess.conn != nil {
			_ = sess.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4004, "Authentication failed."), time.Now().Add(time.Second))
			_ = sess.conn.Close()
			sess.conn = nil
		}
	}
	s.changedLocked()
}

// Say posts a message from u into channel and dispatches MESSAGE_CREATE;
// mention puts the bot's mention in front. It returns the message id.
func (s *Server) Say(t testing.TB, u User, channel, text string, mention bool) string {
	t.Helper()
	s.mu.Lock()
	c := s.channels[channel]
	if c == nil {
		s.mu.Unlock()
		t.Fatalf("fake Discord: no channel %s", channel)
	}
	content := text
	mentions := []any{}
	if mention {
		content = "<@" + BotID + "> " + text
		mentions = append(mentions, map[string]any{"id": BotID, "username": BotName, "bot": true})
	}
	m := s.newMessageLocked(channel, u.ID, payload{Content: &content})
	guild := c.GuildID
	if c.Type == 11 || c.Type == 12 {
		guild = GuildID
	}
	// Without the Message Content intent, Discord sends the text only of
	// a message that mentions the bot, or is a DM.
	wire := content
	if s.intents&(1<<15) == 0 && !mention && c.Type != 1 {
		wire = ""
	}
	s.mu.Unlock()
	d := map[string]any{
		"id": m.ID, "channel_id": channel, "author": userJSON(u), "content": wire,
		"timestamp": time.Now().UTC().Format(time.RFC3339), "type": 0, "mentions": mentions,
		"attachments": []any{}, "embeds": []any{},
	}
	if guild != "" {
		d["guild_id"] = guild
		mem := member(u)
		delete(mem, "user")
		d["member"] = mem
	}
	s.deliver("MESSAGE_CREATE", d)
	return m.ID
}
