package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/tools"
)

// callRequest is the body of POST /v1/calls, /v1/assess and /v1/decide.
type callRequest struct {
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
	Reason string          `json:"reason"`
}

// callResponse is where a call is: done with its result, or pending.
type callResponse struct {
	ID     string        `json:"id,omitempty"`
	Status string        `json:"status"` // done | pending
	Result *tools.Result `json:"result,omitempty"`
	// Channel is where its card waits; Votes of Need approvals so far.
	Channel string `json:"channel,omitempty"`
	Votes   int    `json:"votes,omitempty"`
	Need    int    `json:"need,omitempty"`
	// CardURL is the card's address on its platform (a Slack or Discord
	// message link); none for the terminal.
	CardURL string `json:"card_url,omitempty"`
}

// defaultWait is how long POST /v1/calls and GET /v1/calls/{id} wait for
// a decision when ?wait= is not given; mostWait bounds their ?wait=.
// decideWait is how long POST /v1/decide waits by default and at most: a
// hook waits for the person (its agent's own hook timeout ends it first).
const (
	defaultWait = 25 * time.Second
	mostWait    = 5 * time.Minute
	decideWait  = time.Hour
)

// readCall reads and checks a call's body; a failure has been answered.
func (s *Server) readCall(w http.ResponseWriter, r *http.Request) (*agentOf, agent.AgentCall, bool) {
	a := agentIn(r)
	var req callRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "too_large", "the request is over the limit of 1 MiB")
			return nil, agent.AgentCall{}, false
		}
		writeError(w, http.StatusBadRequest, "bad_json", "the body is not a call: "+err.Error()+`; send {"tool":"execute_command","args":{"command":"ls"},"reason":"why"}`)
		return nil, agent.AgentCall{}, false
	}
	if req.Tool == "" {
		writeError(w, http.StatusBadRequest, "no_tool", `the call names no tool; send {"tool":"execute_command","args":{…}}`)
		return nil, agent.AgentCall{}, false
	}
	if len(bytes.TrimSpace(req.Args)) == 0 || bytes.Equal(bytes.TrimSpace(req.Args), []byte("null")) {
		req.Args = json.RawMessage(`{}`)
	}
	if !s.known(req.Tool) {
		writeError(w, http.StatusNotFound, "unknown_tool", fmt.Sprintf("there is no tool %q; the tools are %s", clip(req.Tool), strings.Join(s.toolNames(a), ", ")))
		return nil, agent.AgentCall{}, false
	}
	if !a.may(req.Tool) {
		writeError(w, http.StatusForbidden, "tool_not_allowed", fmt.Sprintf("agent %s may not call %q (gateway.agents.%s.tools); it may call %s", a.name, req.Tool, a.name, strings.Join(s.toolNames(a), ", ")))
		return nil, agent.AgentCall{}, false
	}
	return a, a.call(req.Tool, req.Args, req.Reason, r.Header.Get("Idempotency-Key")), true
}

// call is an agent's call as the gate takes it.
func (a *agentOf) call(tool string, args json.RawMessage, reason, key string) agent.AgentCall {
	return agent.AgentCall{Agent: a.name, Conv: a.conv, Mode: a.mode, Tool: tool, Args: args, Reason: reason, Key: key}
}

// waitOf reads ?wait= in seconds, at most most: def when absent.
func waitOf(r *http.Request, def, most time.Duration) (time.Duration, error) {
	q := r.URL.Query().Get("wait")
	if q == "" {
		return def, nil
	}
	n, err := strconv.ParseFloat(q, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("?wait=%s is not a number of seconds", q)
	}
	return min(time.Duration(n*float64(time.Second)), most), nil
}

// postCall is POST /v1/calls: admit the call, wait up to ?wait= seconds
// for its decision, answer 200 with the result or 202 pending.
func (s *Server) postCall(w http.ResponseWriter, r *http.Request) {
	wait, err := waitOf(r, defaultWait, mostWait)
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad_wait", err.Error())
		return
	}
	a, c, ok := s.readCall(w, r)
	if !ok {
		return
	}
	o, err := s.gate.Call(context.WithoutCancel(r.Context()), c)
	if err != nil {
		s.log.Error("an agent's call could not be admitted", "agent", a.name, "tool", c.Tool, "error", err)
		writeError(w, http.StatusServiceUnavailable, "not_admitted", "the call's card could not be kept, so nothing ran; try again")
		return
	}
	s.answer(w, r, a, o, wait)
}

// getCall is GET /v1/calls/{id}?wait=25: long-polls a call.
func (s *Server) getCall(w http.ResponseWriter, r *http.Request) {
	wait, err := waitOf(r, defaultWait, mostWait)
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad_wait", err.Error())
		return
	}
	a := agentIn(r)
	o, err := s.gate.Outcome(r.Context(), a.name, r.PathValue("id"))
	if errors.Is(err, agent.ErrNoCall) {
		writeError(w, http.StatusNotFound, "no_call", "agent "+a.name+" has no call "+r.PathValue("id"))
		return
	}
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "store", "the call's record could not be read; try again")
		return
	}
	s.answer(w, r, a, o, wait)
}

// answer waits up to wait for o's result and writes where it is.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, a *agentOf, o agent.CallOutcome, wait time.Duration) {
	if !o.Done() && wait > 0 {
		ctx, cancel := context.WithTimeout(r.Context(), wait)
		o2, err := s.gate.Await(ctx, a.name, o.ID, nil)
		cancel()
		if err == nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			if o2.ID != "" {
				o = o2
			}
		} else {
			s.log.Warn("reading a waiting call", "agent", a.name, "call", o.ID, "error", err)
		}
	}
	resp := callResponse{ID: o.ID, Status: "done", Result: o.Result}
	if !o.Done() {
		resp.Status, resp.Channel, resp.Votes, resp.Need = "pending", channelName(a), o.Votes, o.Need
		resp.CardURL = s.cardURL(r.Context(), o.ID)
		writeJSON(w, http.StatusAccepted, resp)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// assessResponse is the answer of POST /v1/assess.
type assessResponse struct {
	Decision string   `json:"decision"` // auto | confirm | block | refused
	Risk     string   `json:"risk,omitempty"`
	Rule     string   `json:"rule,omitempty"`
	Reasons  []string `json:"reasons,omitempty"`
	// Result is why a call was refused before it was judged.
	Result *tools.Result `json:"result,omitempty"`
}

// postAssess is POST /v1/assess: judge without running or a card.
func (s *Server) postAssess(w http.ResponseWriter, r *http.Request) {
	_, c, ok := s.readCall(w, r)
	if !ok {
		return
	}
	v, refused := s.gate.Judge(r.Context(), c)
	if refused != nil {
		writeJSON(w, http.StatusOK, assessResponse{Decision: "refused", Result: refused})
		return
	}
	writeJSON(w, http.StatusOK, assessResponse{Decision: string(v.Decision), Risk: string(v.Risk), Rule: string(v.Rule), Reasons: v.Reasons})
}

// Decision is the answer of POST /v1/decide.
type Decision struct {
	ID        string `json:"id,omitempty"`
	Decision  string `json:"decision"` // allow | deny
	Reason    string `json:"reason"`
	DecidedBy string `json:"decided_by"`
}

// postDecide is POST /v1/decide: judge, and when a card is needed wait
// for its decision, without running anything (the agent runs the tool
// itself). It waits up to ?wait= seconds (default and most: an hour);
// past it, 202 pending with the id for GET /v1/calls/{id}.
func (s *Server) postDecide(w http.ResponseWriter, r *http.Request) {
	wait, err := waitOf(r, decideWait, decideWait)
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad_wait", err.Error())
		return
	}
	a, c, ok := s.readCall(w, r)
	if !ok {
		return
	}
	c.DecideOnly = true
	o, err := s.gate.Call(context.WithoutCancel(r.Context()), c)
	if err != nil {
		s.log.Error("an agent's call could not be admitted", "agent", a.name, "tool", c.Tool, "error", err)
		writeError(w, http.StatusServiceUnavailable, "not_admitted", "the call's card could not be kept; try again")
		return
	}
	if !o.Done() {
		ctx, cancel := context.WithTimeout(r.Context(), wait)
		o2, err := s.gate.Await(ctx, a.name, o.ID, nil)
		cancel()
		if err == nil || o2.ID != "" {
			o = o2
		}
	}
	if !o.Done() {
		writeJSON(w, http.StatusAccepted, callResponse{ID: o.ID, Status: "pending", Channel: channelName(a), Votes: o.Votes, Need: o.Need, CardURL: s.cardURL(r.Context(), o.ID)})
		return
	}
	writeJSON(w, http.StatusOK, decisionOf(o))
}

// decisionOf says a decided call as allow or deny, with who decided.
func decisionOf(o agent.CallOutcome) Decision {
	res := *o.Result
	d := Decision{ID: o.ID, Decision: "deny", DecidedBy: res.DecidedBy, Reason: res.Reason}
	if res.Status == tools.StatusOK {
		d.Decision = "allow"
	}
	if d.DecidedBy == "" {
		switch res.Status {
		case tools.StatusBlocked, tools.StatusDenied:
			d.DecidedBy = "policy"
		case tools.StatusExpired:
			d.DecidedBy = "nobody (the card expired)"
		default:
			d.DecidedBy = "countersign"
		}
	}
	if d.Reason == "" {
		d.Reason = res.Message
		if res.Error != "" {
			d.Reason = res.Error
		}
	}
	return d
}

// channelName is how an agent's channel is named in words.
func channelName(a *agentOf) string {
	if a.conv.Platform == "terminal" {
		return "the terminal"
	}
	return a.conv.Platform + " channel " + a.conv.Channel
}

// known reports whether tool is a configured tool.
func (s *Server) known(tool string) bool {
	return slices.ContainsFunc(s.specs, func(sp tools.Spec) bool { return sp.Name == tool })
}

// toolNames are the tools agent a may call.
func (s *Server) toolNames(a *agentOf) []string {
	var out []string
	for _, sp := range s.specs {
		if a.may(sp.Name) {
			out = append(out, sp.Name)
		}
	}
	return out
}

// clip shortens what a caller wrote for an error sentence.
func clip(s string) string {
	if len(s) <= 100 {
		return s
	}
	return strings.ToValidUTF8(s[:100], "") + "…"
}
