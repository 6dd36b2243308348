package gateway

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
)

// Gate is the agent's entry for other agents (agent/call.go);
// *agent.Agent is one.
type Gate interface {
	Call(ctx context.Context, c agent.AgentCall) (agent.CallOutcome, error)
	Outcome(ctx context.Context, agentName, id string) (agent.CallOutcome, error)
	Await(ctx context.Context, agentName, id string, each func(agent.CallOutcome)) (agent.CallOutcome, error)
	Judge(ctx context.Context, c agent.AgentCall) (*risk.Verdict, *tools.Result)
	Specs() []tools.Spec
}

// Server serves the gateway: /mcp and /v1.
type Server struct {
	cfg     Config
	gate    Gate
	cardURL func(ctx context.Context, id string) string
	log     *slog.Logger
	agents  map[string]*agentOf
	specs   []tools.Spec
	mux     *http.ServeMux
	mcp     map[string]http.Handler // agent name → its MCP handler

	mu  sync.Mutex
	srv *http.Server
	ln  net.Listener
}

// Deps are what the gateway needs from main.
type Deps struct {
	Gate Gate
	// Getenv reads the agents' tokens; nil is no environment.
	Getenv func(string) string
	// Serves reports whether this process shows cards of a platform; nil
	// means every platform.
	Serves func(platform string) bool
	// CardURL gives the address of a waiting call's card on its
	// platform, "" where there is none; nil gives none.
	CardURL func(ctx context.Context, id string) string
	Log     *slog.Logger
}

// New checks the configuration and builds the gateway; it does not
// listen yet (Listen).
func New(cfg Config, deps Deps) (*Server, error) {
	if deps.Gate == nil {
		return nil, errors.New("gateway: no gate")
	}
	if deps.Getenv == nil {
		deps.Getenv = func(string) string { return "" }
	}
	if deps.Log == nil {
		deps.Log = slog.Default()
	}
	if deps.CardURL == nil {
		deps.CardURL = func(context.Context, string) string { return "" }
	}
	specs := deps.Gate.Specs()
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	ags, err := cfg.agents(deps.Getenv, names, deps.Serves)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, gate: deps.Gate, cardURL: deps.CardURL, log: deps.Log.With("component", "gateway"), agents: ags, specs: specs, mcp: map[string]http.Handler{}}
	for name, a := range ags {
		s.mcp[name] = s.mcpHandler(a)
	}
	s.mux = http.NewServeMux()
	s.mux.Handle("/mcp", s.authed(s.serveMCP))
	s.mux.Handle("POST /v1/calls", s.authed(s.postCall))
	s.mux.Handle("GET /v1/calls/{id}", s.authed(s.getCall))
	s.mux.Handle("POST /v1/assess", s.authed(s.postAssess))
	s.mux.Handle("POST /v1/decide", s.authed(s.postDecide))
	s.mux.Handle("/v1/", s.authed(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", r.Method+" "+r.URL.Path+" is not part of the API: it is POST /v1/calls, GET /v1/calls/{id}, POST /v1/assess and POST /v1/decide")
	}))
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "there is nothing at "+r.URL.Path+"; the gateway serves /mcp and /v1/calls, /v1/assess, /v1/decide")
	})
	return s, nil
}

// Handler is the gateway's HTTP handler (for tests and a caller's own
// server).
func (s *Server) Handler() http.Handler { return s.mux }

// Listen starts serving on gateway.listen (HTTPS when a certificate is
// configured) and returns once the address is bound.
func (s *Server) Listen() error {
	srv := &http.Server{Handler: s.mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	if s.cfg.TLSCert != "" {
		// Loaded now, so that a bad pair stops the start, not the serving.
		cert, err := tls.LoadX509KeyPair(s.cfg.TLSCert, s.cfg.TLSKey)
		if err != nil {
			return fmt.Errorf("gateway.tls_cert and gateway.tls_key: %w", err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("gateway.listen: %w", err)
	}
	s.mu.Lock()
	s.srv, s.ln = srv, ln
	s.mu.Unlock()
	go func() {
		var err error
		if s.cfg.TLSCert != "" {
			err = srv.ServeTLS(ln, "", "")
		} else {
			err = srv.Serve(ln)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("the gateway stopped serving", "error", err)
		}
	}()
	return nil
}

// Addr is the address the gateway listens on, once it does.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Close stops serving; calls that wait end their wait (their cards stay).
func (s *Server) Close() error {
	s.mu.Lock()
	srv := s.srv
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		return srv.Close()
	}
	return nil
}

type ctxKey struct{}

// agentIn is the authenticated agent of a request.
func agentIn(r *http.Request) *agentOf {
	a, _ := r.Context().Value(ctxKey{}).(*agentOf)
	return a
}

// authed lets through a request with a known agent's bearer token, under
// its rate, with a body of at most 1 MiB.
func (s *Server) authed(next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := s.authenticate(r)
		if a == nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="countersign"`)
			writeError(w, http.StatusUnauthorized, "unauthorized", "a valid bearer token is needed: send Authorization: Bearer <the token in the agent's token_env>")
			return
		}
		if !a.rate.take(time.Now()) {
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusTooManyRequests, "rate_limited", fmt.Sprintf("agent %s is over its rate of %d requests a minute (gateway.rate); wait and try again", a.name, a.rate.perMinute))
			return
		}
		if r.ContentLength > maxBody {
			writeError(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("the request is %d bytes, over the limit of 1 MiB", r.ContentLength))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		next(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, a)))
	})
}

// authenticate finds the agent whose token the request carries, comparing
// every token in constant time.
func (s *Server) authenticate(r *http.Request) *agentOf {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return nil
	}
	var found *agentOf
	for _, a := range s.agents {
		if subtle.ConstantTimeCompare([]byte(tok), a.token) == 1 {
			found = a
		}
	}
	return found
}

// apiError is the body of every error: a code and a sentence.
type apiError struct {
	Code  string `json:"code"`
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, apiError{Code: code, Error: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// bucket is a token bucket: perMinute requests a minute, as a burst of as
// many.
type bucket struct {
	mu        sync.Mutex
	perMinute int
	tokens    float64
	at        time.Time
}

func newBucket(perMinute int) *bucket {
	return &bucket{perMinute: perMinute, tokens: float64(perMinute)}
}

// take spends one token, reporting false when none is left.
func (b *bucket) take(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.at.IsZero() {
		b.tokens = min(float64(b.perMinute), b.tokens+now.Sub(b.at).Minutes()*float64(b.perMinute))
	}
	b.at = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
