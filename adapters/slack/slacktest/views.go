package slacktest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// Modals and the App Home (views.open, views.publish): the fake keeps
// every view it was asked to open or publish, and delivers a modal's
// submission (view_submission) as Slack does, over the socket.

// AppView is a view the app opened (a modal, for a trigger) or published (a
// user's App Home).
type AppView struct {
	ID        string
	Method    string // views.open or views.publish
	TriggerID string
	UserID    string
	// View is the view as the app sent it (type, callback_id, blocks,
	// private_metadata…).
	View map[string]any
}

// views is the fake's views, per server.
var views = struct {
	mu  sync.Mutex
	all map[*Server][]AppView
}{all: map[*Server][]AppView{}}

// serveViews answers views.open and views.publish. A trigger is usable
// once, as Slack's are (expired_trigger_id for a second use).
func (s *Server) serveViews(w http.ResponseWriter, r *http.Request, method string) {
	var req struct {
		TriggerID string         `json:"trigger_id"`
		UserID    string         `json:"user_id"`
		View      map[string]any `json:"view"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		// A form body: the view is JSON in a field.
		_ = r.ParseForm()
		req.TriggerID, req.UserID = r.FormValue("trigger_id"), r.FormValue("user_id")
		_ = json.Unmarshal([]byte(r.FormValue("view")), &req.View)
	}
	if req.View == nil {
		fail(w, "invalid_arguments")
		return
	}
	views.mu.Lock()
	defer views.mu.Unlock()
	switch method {
	case "views.open":
		if req.TriggerID == "" {
			fail(w, "invalid_trigger_id")
			return
		}
		for _, v := range views.all[s] {
			if v.TriggerID == req.TriggerID {
				fail(w, "expired_trigger_id")
				return
			}
		}
	case "views.publish":
		if req.UserID == "" {
			fail(w, "invalid_arguments")
			return
		}
	}
	id := fmt.Sprintf("V%06d", len(views.all[s])+1)
	views.all[s] = append(views.all[s], AppView{ID: id, Method: method, TriggerID: req.TriggerID, UserID: req.UserID, View: req.View})
	s.mu.Lock()
	s.notify()
	s.mu.Unlock()
	out := map[string]any{"id": id, "hash": id + "-hash"}
	for k, v := range req.View {
		out[k] = v
	}
	reply(w, map[string]any{"view": out})
}

// Views returns the views opened and published so far, in order.
func (s *Server) Views() []AppView {
	views.mu.Lock()
	defer views.mu.Unlock()
	return append([]AppView(nil), views.all[s]...)
}

// Submit delivers u's submission of the opened modal v, with the plain
// text inputs' values by block id and action id.
func (s *Server) Submit(u User, v AppView, values map[string]map[string]string) *Envelope {
	team := u.Team
	if team == "" {
		team = TeamID
	}
	state := map[string]any{}
	for block, inputs := range values {
		m := map[string]any{}
		for action, value := range inputs {
			m[action] = map[string]any{"type": "plain_text_input", "value": value}
		}
		state[block] = m
	}
	view := map[string]any{}
	for k, val := range v.View {
		view[k] = val
	}
	view["id"], view["hash"], view["team_id"], view["state"] = v.ID, v.ID+"-hash", team, map[string]any{"values": state}
	payload := map[string]any{
		"type":       "view_submission",
		"team":       map[string]any{"id": team, "domain": "fake"},
		"user":       map[string]any{"id": u.ID, "username": u.Name, "name": u.Name, "team_id": team},
		"api_app_id": AppID,
		"token":      "verification-token",
		"trigger_id": v.ID + ".submit",
		"view":       view,
	}
	return s.deliver("interactive", json.RawMessage(mustJSON(payload)))
}
