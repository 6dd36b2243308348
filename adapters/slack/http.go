package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/countersign/countersign/adapters"
)

// maxBody caps a request body; Slack's are a few kilobytes.
const maxBody = 1 << 20

// replayWindow is how long a signed request stays valid (Slack's rule), and
// so how long its signature is remembered to refuse a replay.
const replayWindow = 5 * time.Minute

// runHTTP serves the Events API and the interactivity endpoint on one
// listener until ctx is done or the app is uninstalled.
func (a *Adapter) runHTTP(ctx context.Context, q *queue) error {
	ln, err := net.Listen("tcp", a.cfg.Listen)
	if err != nil {
		return fmt.Errorf("slack.listen: %w", err)
	}
	end := make(chan struct{})
	var once sync.Once
	srv := &http.Server{Handler: a.handler(q, func() { once.Do(func() { close(end) }) }), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	a.up.Store(true)
	defer a.up.Store(false)
	a.log.Info("slack http mode listening", "addr", ln.Addr().String())
	if a.onHTTPReady != nil {
		a.onHTTPReady(ln.Addr().String())
	}
	var result error
	select {
	case <-ctx.Done():
		result = ctx.Err()
	case <-end:
	case err := <-served:
		return fmt.Errorf("slack http mode on %s: %w", a.cfg.Listen, err)
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shut)
	return result
}

// handler is the HTTP mode handler; end is called when the input ends.
func (a *Adapter) handler(q *queue, end func()) http.Handler {
	return &httpHandler{a: a, q: q, seen: map[string]time.Time{}, end: end}
}

// httpHandler serves Slack's requests: it verifies the signature before it
// parses anything, answers at once, and queues the event for the worker.
type httpHandler struct {
	a   *Adapter
	q   *queue
	end func()

	mu   sync.Mutex
	seen map[string]time.Time // signatures inside the replay window
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a := h.a
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			a.log.Warn("refused a slack request over the body cap", "remote", r.RemoteAddr, "cap", maxBody)
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "could not read the body", http.StatusBadRequest)
		return
	}
	sv, err := slackapi.NewSecretsVerifier(r.Header, a.secret)
	if err == nil {
		_, _ = sv.Write(body)
		err = sv.Ensure()
	}
	if err != nil {
		a.log.Warn("refused a slack request with a bad or stale signature", "remote", r.RemoteAddr, "path", r.URL.Path, "err", err)
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	sig := r.Header.Get("X-Slack-Signature")
	if h.replayed(sig) {
		// A valid request seen before inside the window: answered, not
		// acted on twice.
		a.log.Warn("ignored a replayed slack request", "remote", r.RemoteAddr, "path", r.URL.Path)
		w.WriteHeader(http.StatusOK)
		return
	}
	retried := false
	if n, err := strconv.Atoi(r.Header.Get("X-Slack-Retry-Num")); err == nil && n > 0 {
		retried = true
	}
	if form, err := url.ParseQuery(string(body)); err == nil && form.Get("payload") != "" {
		var cb slackapi.InteractionCallback
		if err := json.Unmarshal([]byte(form.Get("payload")), &cb); err != nil {
			a.log.Warn("acknowledged an interactivity request that could not be decoded; it is not acted on", "err", err)
			w.WriteHeader(http.StatusOK)
			return
		}
		w.WriteHeader(http.StatusOK)
		h.q.push(func(ctx context.Context) []adapters.Event { return a.fromClick(ctx, cb, retried) })
		return
	}
	ev, err := slackevents.ParseEvent(body, slackevents.OptionNoVerifyToken())
	if err != nil {
		a.log.Warn("acknowledged an events api request that could not be decoded; it is not acted on", "err", err)
		w.WriteHeader(http.StatusOK)
		return
	}
	if ev.Type == slackevents.URLVerification {
		var ch struct {
			Challenge string `json:"challenge"`
		}
		_ = json.Unmarshal(body, &ch)
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, ch.Challenge)
		return
	}
	w.WriteHeader(http.StatusOK)
	if a.queueEventsAPI(ev, retried, h.q) && h.end != nil {
		h.end()
	}
}

// replayed remembers sig and reports whether it was seen inside the window.
func (h *httpHandler) replayed(sig string) bool {
	now := h.a.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	for s, at := range h.seen {
		if now.Sub(at) > replayWindow+time.Minute {
			delete(h.seen, s)
		}
	}
	if _, ok := h.seen[sig]; ok {
		return true
	}
	h.seen[sig] = now
	return false
}
