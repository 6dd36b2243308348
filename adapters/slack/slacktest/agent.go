package slacktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Slack's AI surfaces as the fake plays them: the thread status
// (assistant.threads.setStatus), the streamed message with task chunks
// (chat.startStream, chat.appendStream, chat.stopStream) and the
// person's Stop (agent_session_stopped). Requests are checked as Slack
// checks them, and refused with Slack's error codes.

// aiState is the fake's memory of the AI surfaces; guarded by Server.mu.
type aiState struct {
	statuses  map[string]string // "channel/thread" → the status shown
	statusLog []StatusChange
	streams   []*Stream
	calls     []StreamCall
	refuse    map[string]string // method → the error Slack answers
}

// StatusChange is one assistant.threads.setStatus call as the fake took it.
type StatusChange struct {
	Channel, Thread, Status string
	At                      time.Time
}

// Task is a task of a streamed message: the last task_update of its id.
type Task struct {
	ID, Title, Status, Details string
	// Sources are the links of the task ("url: text").
	Sources []string
	// Updates is how many task_update chunks it took.
	Updates int
}

// Stream is a streamed message.
type Stream struct {
	Channel, Thread, TS          string
	RecipientTeam, RecipientUser string
	DisplayMode                  string
	// Text is the markdown streamed so far.
	Text string
	// Tasks are the tasks, in the order they were added.
	Tasks []Task
	// Stopped is set by chat.stopStream or the person's Stop.
	Stopped   bool
	StoppedBy string // "app" or the user id of the person who stopped it
}

// StreamCall is one call of a streaming method, as sent: the method and
// its form, without the token.
type StreamCall struct {
	Method string
	Form   url.Values
}

func (s *Server) aiLocked() *aiState {
	if s.ai.statuses == nil {
		s.ai.statuses = map[string]string{}
		s.ai.refuse = map[string]string{}
	}
	return &s.ai
}

// serveAI answers the AI surfaces' methods.
func (s *Server) serveAI(w http.ResponseWriter, r *http.Request, method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ai := s.aiLocked()
	if code := ai.refuse[method]; code != "" {
		fail(w, code)
		return
	}
	form := url.Values{}
	for k, v := range r.Form {
		if k != "token" {
			form[k] = slices.Clone(v)
		}
	}
	switch method {
	case "assistant.threads.setStatus":
		channel, thread := r.FormValue("channel_id"), r.FormValue("thread_ts")
		if channel == "" || thread == "" {
			fail(w, "invalid_arguments")
			return
		}
		if !s.threadExistsLocked(channel, thread) {
			fail(w, "thread_not_found")
			return
		}
		status := r.FormValue("status")
		ai.statuses[channel+"/"+thread] = status
		ai.statusLog = append(ai.statusLog, StatusChange{Channel: channel, Thread: thread, Status: status, At: time.Now()})
		s.notify()
		reply(w, map[string]any{})
	case "chat.startStream":
		ai.calls = append(ai.calls, StreamCall{Method: method, Form: form})
		s.startStream(w, r)
	case "chat.appendStream", "chat.stopStream":
		ai.calls = append(ai.calls, StreamCall{Method: method, Form: form})
		s.appendStream(w, r, method == "chat.stopStream")
	}
}

func (s *Server) threadExistsLocked(channel, thread string) bool {
	for _, m := range s.messages {
		if m.Channel == channel && m.TS == thread {
			return true
		}
	}
	return false
}

// startStream: a stream goes in a thread; outside a direct message it
// names its recipient (recipient_team_id and recipient_user_id).
func (s *Server) startStream(w http.ResponseWriter, r *http.Request) {
	channel, thread := r.FormValue("channel"), r.FormValue("thread_ts")
	if channel == "" {
		fail(w, "channel_not_found")
		return
	}
	if thread == "" || !s.threadExistsLocked(channel, thread) {
		fail(w, "invalid_thread_ts")
		return
	}
	st := &Stream{Channel: channel, Thread: thread, RecipientTeam: r.FormValue("recipient_team_id"), RecipientUser: r.FormValue("recipient_user_id"), DisplayMode: r.FormValue("task_display_mode")}
	if channelType(channel) != "im" && (st.RecipientTeam == "" || st.RecipientUser == "") {
		fail(w, "missing_recipient_user_id")
		return
	}
	switch st.DisplayMode {
	case "", "timeline", "plan":
	default:
		fail(w, "invalid_arguments")
		return
	}
	if err := st.apply(r); err != "" {
		fail(w, err)
		return
	}
	st.TS = s.nextTS()
	s.ai.streams = append(s.ai.streams, st)
	s.messages = append(s.messages, &Message{Channel: channel, TS: st.TS, ThreadTS: thread, User: BotUserID, BotID: BotID, Text: st.Text})
	delete(s.ai.statuses, channel+"/"+thread) // a reply clears the status
	s.notify()
	reply(w, map[string]any{"channel": channel, "ts": st.TS})
}

func (s *Server) appendStream(w http.ResponseWriter, r *http.Request, stop bool) {
	channel, ts := r.FormValue("channel"), r.FormValue("ts")
	var st *Stream
	for _, x := range s.ai.streams {
		if x.Channel == channel && x.TS == ts {
			st = x
		}
	}
	switch {
	case st == nil:
		fail(w, "message_not_found")
		return
	case st.Stopped:
		fail(w, "message_not_in_streaming_state")
		return
	}
	if _, ok := r.Form["chunks"]; !ok && !stop && r.FormValue("markdown_text") == "" {
		fail(w, "no_text")
		return
	}
	if err := st.apply(r); err != "" {
		fail(w, err)
		return
	}
	for _, m := range s.messages {
		if m.Channel == channel && m.TS == ts {
			m.Text = st.Text
			m.Updates++
		}
	}
	if stop {
		st.Stopped, st.StoppedBy = true, "app"
	}
	s.notify()
	reply(w, map[string]any{"channel": channel, "ts": ts})
}

// apply adds the request's markdown_text and chunks to the stream, and
// returns Slack's error code for a chunk it would refuse.
func (st *Stream) apply(r *http.Request) string {
	text := r.FormValue("markdown_text")
	raw := r.FormValue("chunks")
	if text != "" && raw != "" {
		return "invalid_arguments" // one or the other
	}
	st.Text += text
	if raw == "" {
		return ""
	}
	var chunks []map[string]any
	if err := json.Unmarshal([]byte(raw), &chunks); err != nil || len(chunks) == 0 {
		return "invalid_chunks"
	}
	for _, c := range chunks {
		switch c["type"] {
		case "markdown_text":
			t, _ := c["text"].(string)
			if t == "" {
				return "invalid_chunks"
			}
			st.Text += t
		case "task_update":
			id, _ := c["id"].(string)
			title, _ := c["title"].(string)
			status, _ := c["status"].(string)
			details, _ := c["details"].(string)
			if id == "" || title == "" {
				return "invalid_chunks"
			}
			switch status {
			case "", "pending", "in_progress", "complete", "error":
			default:
				return "invalid_chunks"
			}
			var sources []string
			if list, ok := c["sources"].([]any); ok {
				for _, x := range list {
					src, _ := x.(map[string]any)
					u, _ := src["url"].(string)
					if src["type"] != "url" || !strings.HasPrefix(u, "https://") {
						return "invalid_chunks"
					}
					sources = append(sources, fmt.Sprintf("%s: %s", u, src["text"]))
				}
			}
			i := slices.IndexFunc(st.Tasks, func(t Task) bool { return t.ID == id })
			if i < 0 {
				st.Tasks = append(st.Tasks, Task{ID: id})
				i = len(st.Tasks) - 1
			}
			t := &st.Tasks[i]
			t.Title, t.Details, t.Sources = title, details, sources
			if status != "" {
				t.Status = status
			}
			t.Updates++
		case "plan_update", "blocks":
		default:
			return "invalid_chunks"
		}
	}
	if len([]rune(st.Text)) > 40000 {
		return "msg_too_long"
	}
	return ""
}

// clearStatusLocked: Slack clears a thread's status when the app replies
// in it.
func (s *Server) clearStatusLocked(channel, thread string) {
	if s.ai.statuses != nil && thread != "" {
		delete(s.ai.statuses, channel+"/"+thread)
	}
}

// Refuse makes Slack answer method with the error code (e.g.
// "chat.startStream", "not_allowed"), as a workspace without the feature
// does; an empty code stops refusing.
func (s *Server) Refuse(method, code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.aiLocked().refuse[method] = code
}

// Status is the status the thread shows now, "" for none.
func (s *Server) Status(channel, thread string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.aiLocked().statuses[channel+"/"+thread]
}

// StatusLog is every status set, oldest first.
func (s *Server) StatusLog() []StatusChange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.aiLocked().statusLog)
}

// Streams returns copies of the streamed messages in the thread.
func (s *Server) Streams(channel, thread string) []Stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Stream
	for _, st := range s.aiLocked().streams {
		if st.Channel == channel && st.Thread == thread {
			c := *st
			c.Tasks = slices.Clone(st.Tasks)
			out = append(out, c)
		}
	}
	return out
}

// StreamCalls returns the calls of the streaming methods, oldest first.
func (s *Server) StreamCalls() []StreamCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.aiLocked().calls)
}

// AgentStop plays the person pressing Stop on the bot's work in the
// thread (in channel when thread is empty): the open streams there stop,
// and agent_session_stopped is delivered naming them.
func (s *Server) AgentStop(u User, channel, thread string) *Envelope {
	s.mu.Lock()
	halted := []string{}
	for _, st := range s.aiLocked().streams {
		if st.Channel == channel && (thread == "" || st.Thread == thread) && !st.Stopped {
			st.Stopped, st.StoppedBy = true, u.ID
			halted = append(halted, st.TS)
		}
	}
	s.notify()
	s.mu.Unlock()
	ev := map[string]any{"type": "agent_session_stopped", "channel": channel, "user": u.ID, "streaming_message_ts": halted, "event_ts": s.nextTS()}
	if thread != "" {
		ev["thread_ts"] = thread
	}
	return s.Deliver(ev)
}
