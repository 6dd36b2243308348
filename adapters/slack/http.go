package slack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/webhook"
)

// limits bound what strangers can make the endpoint hold: Slack's
// requests are a few kilobytes (a click's carries its card, well under the
// 1 MiB cap), a few at a time.
var limits = webhook.Defaults

// replayWindow is how long a signed request stays valid (Slack's rule), and
// so how long its signature is remembered to refuse a replay.
const replayWindow = 5 * time.Minute

// runHTTP serves the Events API and the interactivity endpoint on one
// listener until ctx is done or the app is uninstalled.
func (a *Adapter) runHTTP(ctx context.Context, q *queue) error {
	ln, err := webhook.Listen(a.cfg.Listen, limits)
	if err != nil {
		return fmt.Errorf("slack.listen: %w", err)
	}
	end := make(chan struct{})
	var once sync.Once
	h := a.handler(q, func() { once.Do(func() { close(end) }) })
	srv := webhook.Server(h, limits)
	srv.RegisterOnShutdown(h.bodies.CutAll)
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
func (a *Adapter) handler(q *queue, end func()) *httpHandler {
	return &httpHandler{a: a, q: q, seen: webhook.NewReplays(maxReplays, replayWindow+time.Minute), bodies: webhook.NewBodies(limits), end: end}
}

// maxReplays bounds the signatures remembered: far more than Slack sends
// in the replay window.
const maxReplays = 100000

// httpHandler serves Slack's requests: it verifies the signature before it
// parses anything, queues the event for the worker, and answers once the
// bot has recorded it (at most ackWithin later).
type httpHandler struct {
	a   *Adapter
	q   *queue
	end func()

	seen   *webhook.Replays // signatures inside the replay window
	bodies *webhook.Bodies  // bodies not yet verified: deadline and budget
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a := h.a
	if r.Method != http.MethodPost {
		webhook.Close(w)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	// The signature's headers and timestamp are checked before a byte
	// of the body is read: a stranger without them holds nothing.
	sig, err := signature(r.Header, a.now())
	if err != nil {
		a.log.Warn("refused a slack request with a bad or stale signature", "remote", r.RemoteAddr, "path", r.URL.Path, "err", err)
		webhook.Close(w)
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	body, err := h.bodies.Read(w, r)
	if err != nil {
		webhook.Close(w)
		switch {
		case errors.Is(err, webhook.ErrTooLarge):
			a.log.Warn("refused a slack request over the body cap", "remote", r.RemoteAddr, "err", err)
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		case errors.Is(err, webhook.ErrSlow):
			a.log.Warn("cut a slack request whose body did not arrive in time", "remote", r.RemoteAddr, "err", err)
			http.Error(w, "body too slow", http.StatusRequestTimeout)
		default:
			http.Error(w, "could not read the body", http.StatusBadRequest)
		}
		return
	}
	sv, err := slackapi.NewSecretsVerifier(r.Header, a.secret)
	if err == nil {
		_, _ = sv.Write(body)
		err = sv.Ensure()
	}
	if err != nil {
		a.log.Warn("refused a slack request with a bad or stale signature", "remote", r.RemoteAddr, "path", r.URL.Path, "err", err)
		webhook.Close(w)
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	if h.seen.Seen(sig) {
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
		ak, answered := answerer(a.ackWithin)
		h.q.push(func(ctx context.Context) []adapters.Event { return a.fromClick(ctx, cb, retried) }, ak)
		waitAnswer(r, answered)
		w.WriteHeader(http.StatusOK)
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
	ak, answered := answerer(a.ackWithin)
	end := a.queueEventsAPI(ev, retried, h.q, ak)
	waitAnswer(r, answered)
	w.WriteHeader(http.StatusOK)
	if end && h.end != nil {
		h.end()
	}
}

// answerer is the acknowledgement of one request: the response, sent once
// answered is closed (the bot recorded its events, or within passed).
func answerer(within time.Duration) (*acker, <-chan struct{}) {
	answered := make(chan struct{})
	return newAcker(within, func() { close(answered) }), answered
}

// waitAnswer waits until the request may be answered, or its client left.
func waitAnswer(r *http.Request, answered <-chan struct{}) {
	select {
	case <-answered:
	case <-r.Context().Done():
	}
}

// signature checks a request's signature headers before its body is read:
// a timestamp within the replay window of now, and a signature of the
// right form ("v0=" and 32 bytes in hex, either case). It returns the
// signature's bytes, which key the replay cache.
func signature(h http.Header, now time.Time) ([]byte, error) {
	ts, err := strconv.ParseInt(h.Get("X-Slack-Request-Timestamp"), 10, 64)
	if err != nil {
		return nil, errors.New("no X-Slack-Request-Timestamp")
	}
	if !webhook.Fresh(ts, now, replayWindow) {
		return nil, errors.New("X-Slack-Request-Timestamp is outside the replay window")
	}
	v, ok := strings.CutPrefix(h.Get("X-Slack-Signature"), "v0=")
	if !ok {
		return nil, errors.New("X-Slack-Signature is not v0=<hex>")
	}
	sig, err := hex.DecodeString(v)
	if err != nil || len(sig) != sha256.Size {
		return nil, errors.New("X-Slack-Signature is not 32 bytes in hex")
	}
	return sig, nil
}
