// Package agenttest holds test helpers for code that drives the agent: a
// fake OpenAI-compatible chat completions server that speaks the real wire
// protocol (use it through agent/llm, the real client), and a Sink that
// records what the agent shows people.
package agenttest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is a fake chat completions server. It answers POST
// …/chat/completions with the scripted replies in order and records every
// request. A request past the end of the script fails the test.
type Server struct {
	*httptest.Server
	tb testing.TB

	mu       sync.Mutex
	script   []Reply
	requests []ChatRequest
}

// Reply is one scripted answer: a message (Content, ToolCalls), or an HTTP
// error (Status, with optional headers such as Retry-After). Delay holds
// the answer back, for time limits.
type Reply struct {
	Content   string
	ToolCalls []WireToolCall

	Status int
	Header map[string]string
	// Body replaces the JSON body of an error reply.
	Body string

	Delay time.Duration
	// Hold, when set, holds the answer back until it is closed: a test
	// keeps a turn busy for exactly as long as it looks, whatever the
	// machine's speed.
	Hold <-chan struct{}
	// Hangup closes the connection without an answer.
	Hangup bool

	// For a streamed request (one with "stream": true), which is
	// answered with server-sent events as OpenAI sends them: the content
	// one word a chunk, each tool call's arguments in pieces of a few
	// bytes (its id and name in its first delta only), then the finish
	// reason, the usage when stream_options asked for it, and
	// "data: [DONE]".
	//
	// Gap holds back every chunk after the first.
	Gap time.Duration
	// BreakAfter, when positive, closes the connection after that many
	// content chunks, without a finish reason or [DONE].
	BreakAfter int

	// Prompt and Completion are the tokens the reply reports (when both
	// are 0: 1 and 1); NoUsage reports no usage at all, as some servers do.
	Prompt, Completion int
	NoUsage            bool
}

// usage is the "usage" object rep reports, or nil for none.
func (rep Reply) usage() map[string]int {
	if rep.NoUsage {
		return nil
	}
	p, c := rep.Prompt, rep.Completion
	if p == 0 && c == 0 {
		p, c = 1, 1
	}
	return map[string]int{"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}
}

// Text is a reply with the model's final words.
func Text(s string) Reply { return Reply{Content: s} }

// Calls is a reply with tool calls, id/name/arguments each.
func Calls(calls ...WireToolCall) Reply { return Reply{ToolCalls: calls} }

// Call is one tool call for Calls.
func Call(id, name, arguments string) WireToolCall {
	c := WireToolCall{ID: id, Type: "function"}
	c.Function.Name = name
	c.Function.Arguments = arguments
	return c
}

// Error is an HTTP error reply with the OpenAI error body.
func Error(status int, header map[string]string) Reply {
	return Reply{Status: status, Header: header}
}

// ChatRequest is a request the server received, decoded from the wire.
type ChatRequest struct {
	Path     string
	Query    string
	Header   http.Header
	Model    string         `json:"model"`
	Stream   bool           `json:"stream"`
	Messages []WireMessage  `json:"messages"`
	Tools    []WireTool     `json:"tools"`
	Raw      map[string]any `json:"-"`
}

// WireMessage is a chat message as it travels.
type WireMessage struct {
	Role       string         `json:"role"`
	Content    string         `json:"content"`
	ToolCalls  []WireToolCall `json:"tool_calls"`
	ToolCallID string         `json:"tool_call_id"`
}

// WireToolCall is a tool call as it travels.
type WireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// WireTool is a tool definition as it travels.
type WireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// NewServer starts a server with the given script; it stops when the test
// ends. Its base URL for a client is URL+"/v1".
func NewServer(tb testing.TB, script ...Reply) *Server {
	tb.Helper()
	s := &Server{tb: tb, script: script}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(s.Close)
	return s
}

// BaseURL is the URL to configure a client with.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Push appends replies to the script.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, replies...)
}

// Requests returns the requests received so far.
func (s *Server) Requests() []ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ChatRequest(nil), s.requests...)
}

// Left is how many scripted replies have not been used.
func (s *Server) Left() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := ChatRequest{Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone()}
	if err := json.Unmarshal(body, &req); err != nil {
		s.tb.Errorf("fake model server: request body is not JSON: %v", err)
	}
	_ = json.Unmarshal(body, &req.Raw)

	s.mu.Lock()
	s.requests = append(s.requests, req)
	var rep Reply
	ok := len(s.script) > 0
	if ok {
		rep, s.script = s.script[0], s.script[1:]
	}
	s.mu.Unlock()

	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		s.tb.Errorf("fake model server: unexpected %s %s", r.Method, r.URL.Path)
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	if !ok {
		s.tb.Errorf("fake model server: request %d is past the end of the script", len(s.Requests()))
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":{"message":"no scripted reply","type":"invalid_request_error"}}`)
		return
	}
	if rep.Delay > 0 {
		select {
		case <-time.After(rep.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if rep.Hold != nil {
		select {
		case <-rep.Hold:
		case <-r.Context().Done():
			return
		}
	}
	if rep.Hangup {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	if rep.Status != 0 && rep.Status != http.StatusOK {
		w.WriteHeader(rep.Status)
		b := rep.Body
		if b == "" {
			b = `{"error":{"message":"scripted error ` + strconv.Itoa(rep.Status) + `","type":"server_error"}}`
		}
		_, _ = io.WriteString(w, b)
		return
	}
	if req.Stream {
		s.stream(w, r, req, rep)
		return
	}
	msg := map[string]any{"role": "assistant", "content": rep.Content}
	finish := "stop"
	if len(rep.ToolCalls) > 0 {
		msg["tool_calls"] = rep.ToolCalls
		finish = "tool_calls"
	}
	answer := map[string]any{
		"id":      "chatcmpl-test",
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
	}
	if u := rep.usage(); u != nil {
		answer["usage"] = u
	}
	_ = json.NewEncoder(w).Encode(answer)
}

// stream answers a streamed request with server-sent events: "data:
// <chunk JSON>" lines, each followed by a blank line, flushed one by one.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req ChatRequest, rep Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	sent := 0
	send := func(delta map[string]any, finish any, usage any) bool {
		if sent > 0 && rep.Gap > 0 {
			select {
			case <-time.After(rep.Gap):
			case <-r.Context().Done():
				return false
			}
		}
		sent++
		chunk := map[string]any{
			"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": req.Model,
			"choices": []any{},
		}
		if delta != nil {
			chunk["choices"] = []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}
		}
		if usage != nil {
			chunk["usage"] = usage
		}
		b, _ := json.Marshal(chunk)
		if _, err := io.WriteString(w, "data: "+string(b)+"\n\n"); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	hangup := func() {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	if !send(map[string]any{"role": "assistant", "content": ""}, nil, nil) {
		return
	}
	words := strings.SplitAfter(rep.Content, " ")
	if rep.Content == "" {
		words = nil
	}
	for i, word := range words {
		if rep.BreakAfter > 0 && i == rep.BreakAfter {
			hangup()
			return
		}
		if !send(map[string]any{"content": word}, nil, nil) {
			return
		}
	}
	for i, tc := range rep.ToolCalls {
		args := tc.Function.Arguments
		first := true
		for first || args != "" {
			piece := args[:min(len(args), 7)]
			args = args[len(piece):]
			call := map[string]any{"index": i, "function": map[string]any{"arguments": piece}}
			if first {
				call["id"], call["type"] = tc.ID, "function"
				call["function"].(map[string]any)["name"] = tc.Function.Name
			}
			first = false
			if !send(map[string]any{"tool_calls": []any{call}}, nil, nil) {
				return
			}
		}
	}
	finish := "stop"
	if len(rep.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	if !send(map[string]any{}, finish, nil) {
		return
	}
	if opts, _ := req.Raw["stream_options"].(map[string]any); opts["include_usage"] == true && rep.usage() != nil {
		if !send(nil, nil, rep.usage()) {
			return
		}
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}
