package discordtest

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"
)

func (s *Server) interactionByToken(token string) *Interaction {
	for _, ix := range s.interactions {
		if ix.Token == token {
			return ix
		}
	}
	return nil
}

func (s *Server) callback(w http.ResponseWriter, r *http.Request) {
	data, _ := io.ReadAll(io.LimitReader(r.Body, 10<<20))
	var resp struct {
		Type int             `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(data, &resp); err != nil {
		apiError(w, http.StatusBadRequest, 50109, "The request body contains invalid JSON.")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ix := s.interactions[r.PathValue("id")]
	if ix == nil || ix.Token != r.PathValue("token") {
		apiError(w, http.StatusNotFound, 10062, "Unknown interaction")
		return
	}
	if msg := s.respondLocked(ix, resp.Type, resp.Data); msg != "" {
		apiError(w, http.StatusBadRequest, 40060, msg)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// respondLocked records a first response and plays its effect.
func (s *Server) respondLocked(ix *Interaction, typ int, data json.RawMessage) string {
	if len(ix.Responses) > 0 {
		return "Interaction has already been acknowledged."
	}
	ix.Responses = append(ix.Responses, Response{Type: typ, Data: data, After: time.Since(ix.Created)})
	switch typ {
	case 4, 5: // a message, or a deferred one (the "thinking…" placeholder)
		var p payload
		if len(data) > 0 {
			_ = json.Unmarshal(data, &p)
		}
		if typ == 5 && p.Content == nil {
			thinking := BotName + " is thinking…"
			p.Content = &thinking
		}
		m := s.newMessageLocked(ix.ChannelID, BotID, p)
		if p.Flags&64 != 0 {
			m.VisibleTo = ix.User.ID
		}
		ix.OriginalID = m.ID
	}
	s.changedLocked()
	return ""
}

func (s *Server) webhookInteraction(w http.ResponseWriter, r *http.Request) *Interaction {
	ix := s.interactionByToken(r.PathValue("token"))
	switch {
	case r.PathValue("app") != AppID || ix == nil || ix.Expired:
		apiError(w, http.StatusNotFound, 10015, "Unknown Webhook")
		return nil
	case len(ix.Responses) == 0:
		apiError(w, http.StatusBadRequest, 40060, "Interaction has not been acknowledged.")
		return nil
	}
	return ix
}

func (s *Server) followup(w http.ResponseWriter, r *http.Request) {
	p, ok := validPayload(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ix := s.webhookInteraction(w, r)
	if ix == nil {
		return
	}
	m := s.newMessageLocked(ix.ChannelID, BotID, p)
	if p.Flags&64 != 0 {
		m.VisibleTo = ix.User.ID
	}
	writeJSON(w, m.wire())
}

func (s *Server) editOriginal(w http.ResponseWriter, r *http.Request) {
	p, ok := validPayload(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rateLimitedLocked(w) {
		return
	}
	if ix := s.interactionByToken(r.PathValue("token")); ix != nil && s.expireOnEdit {
		ix.Expired = true
	}
	ix := s.webhookInteraction(w, r)
	if ix == nil {
		return
	}
	id := r.PathValue("msg")
	if id == "@original" {
		id = ix.OriginalID
		if id == "" {
			id = ix.MessageID
		}
	}
	m, ok := s.messages[id]
	if !ok {
		apiError(w, http.StatusNotFound, 10008, "Unknown Message")
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

// SetInteractionsURL makes clicks and commands arrive as signed HTTP
// requests to url (interactions: http) instead of gateway dispatches.
func (s *Server) SetInteractionsURL(url string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.interactURL = url
}

func member(u User) map[string]any {
	roles := u.Roles
	if roles == nil {
		roles = []string{}
	}
	return map[string]any{"user": userJSON(u), "roles": roles, "nick": nil}
}

func userJSON(u User) map[string]any {
	return map[string]any{"id": u.ID, "username": u.Name, "global_name": u.Name, "bot": false}
}

// newInteraction creates an interaction and delivers it; it returns its id.
func (s *Server) newInteraction(t testing.TB, u User, typ int, channel, message string, data map[string]any) string {
	t.Helper()
	s.mu.Lock()
	ix := &Interaction{ID: NewID(), Token: "itok-" + NewID(), Type: typ, User: u, ChannelID: channel, MessageID: message, Created: time.Now()}
	c := s.channels[channel]
	payload := map[string]any{
		"id": ix.ID, "application_id": AppID, "type": typ, "data": data,
		"channel_id": channel, "token": ix.Token, "version": 1, "locale": "en-US",
	}
	if c != nil && c.GuildID != "" {
		payload["guild_id"] = c.GuildID
		payload["member"] = member(u)
	} else {
		payload["user"] = userJSON(u)
	}
	if m := s.messages[message]; m != nil {
		payload["message"] = map[string]any{"id": m.ID, "channel_id": m.ChannelID, "content": m.Content, "author": map[string]any{"id": m.AuthorID, "bot": true}}
	}
	body, _ := json.Marshal(payload)
	ix.payload = body
	s.interactions[ix.ID] = ix
	url := s.interactURL
	s.changedLocked()
	s.mu.Unlock()
	if url == "" {
		s.deliver("INTERACTION_CREATE", json.RawMessage(body))
		return ix.ID
	}
	status, resp := s.post(url, body, true)
	s.mu.Lock()
	defer s.mu.Unlock()
	ix.HTTPStatus = status
	if status == http.StatusOK {
		var r struct {
			Type int             `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(resp, &r); err != nil {
			ix.responseErr = err.Error()
		} else if msg := s.respondLocked(ix, r.Type, r.Data); msg != "" {
			ix.responseErr = msg
		}
	}
	s.changedLocked()
	return ix.ID
}

// post sends body to the bot's interactions endpoint, signed with the
// application's key when sign is set (and with a forged signature when not).
func (s *Server) post(url string, body []byte, sign bool) (int, []byte) {
	return s.postAt(url, body, sign, time.Now())
}

func (s *Server) postAt(url string, body []byte, sign bool, at time.Time) (int, []byte) {
	ts := strconv.FormatInt(at.Unix(), 10)
	var sig []byte
	if sign {
		sig = ed25519Sign(s, append([]byte(ts), body...))
	} else {
		sig = make([]byte, 64)
	}
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Signature-Ed25519", hex.EncodeToString(sig))
	req.Header.Set("X-Signature-Timestamp", ts)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

// PostInteraction posts raw to the interactions endpoint as Discord would,
// signed or with a forged signature, and returns the status and body.
func (s *Server) PostInteraction(raw []byte, signed bool) (int, []byte) {
	s.mu.Lock()
	url := s.interactURL
	s.mu.Unlock()
	return s.post(url, raw, signed)
}

// ReplayInteraction posts raw signed properly but with the timestamp at,
// as a recorded request replayed later would arrive.
func (s *Server) ReplayInteraction(raw []byte, at time.Time) (int, []byte) {
	s.mu.Lock()
	url := s.interactURL
	s.mu.Unlock()
	return s.postAt(url, raw, true, at)
}

// Click clicks the button with customID on message msg, as u.
func (s *Server) Click(t testing.TB, u User, msg, customID string) string {
	t.Helper()
	m, ok := s.Message(msg)
	if !ok {
		t.Fatalf("fake Discord: click on message %s, which does not exist", msg)
	}
	return s.newInteraction(t, u, 3, m.ChannelID, msg, map[string]any{"custom_id": customID, "component_type": 2})
}

// SubmitModal submits the dialog that interaction click opened, with the
// text inputs' values, as u.
func (s *Server) SubmitModal(t testing.TB, u User, click string, values map[string]string) string {
	t.Helper()
	r := s.WaitResponse(t, click)
	if r.Type != 9 {
		t.Fatalf("fake Discord: interaction %s was answered with type %d, not a modal (9)", click, r.Type)
	}
	var modal struct {
		CustomID   string `json:"custom_id"`
		Components []struct {
			Components []struct {
				CustomID string `json:"custom_id"`
			} `json:"components"`
		} `json:"components"`
	}
	if err := json.Unmarshal(r.Data, &modal); err != nil {
		t.Fatalf("fake Discord: the modal is not JSON: %v", err)
	}
	var rows []map[string]any
	for _, row := range modal.Components {
		var cs []map[string]any
		for _, c := range row.Components {
			cs = append(cs, map[string]any{"type": 4, "custom_id": c.CustomID, "value": values[c.CustomID]})
		}
		rows = append(rows, map[string]any{"type": 1, "components": cs})
	}
	ix, _ := s.Interaction(click)
	return s.newInteraction(t, u, 5, ix.ChannelID, ix.MessageID, map[string]any{"custom_id": modal.CustomID, "components": rows})
}

// Command uses /name sub with one string option, as u in channel.
func (s *Server) Command(t testing.TB, u User, channel, name, sub, option, value string) string {
	t.Helper()
	o := map[string]any{"type": 1, "name": sub}
	if option != "" {
		o["options"] = []map[string]any{{"type": 3, "name": option, "value": value}}
	}
	return s.newInteraction(t, u, 2, channel, "", map[string]any{"id": NewID(), "name": name, "type": 1, "options": []map[string]any{o}})
}

// Sign returns the signature headers Discord would send with body at at.
func (s *Server) Sign(body []byte, at time.Time) http.Header {
	ts := strconv.FormatInt(at.Unix(), 10)
	h := http.Header{}
	h.Set("X-Signature-Ed25519", hex.EncodeToString(ed25519Sign(s, append([]byte(ts), body...))))
	h.Set("X-Signature-Timestamp", ts)
	return h
}
