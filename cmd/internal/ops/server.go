package ops

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/approval"
)

// The time limits of the readiness checks, and how long a model dial's
// answer is reused: a load balancer probing every second must not dial
// the model server every second.
const (
	storeCheckTimeout = time.Second
	modelDialTimeout  = time.Second
	modelCheckTTL     = 5 * time.Second
)

// Server serves /metrics, /healthz and /readyz on ops.listen.
type Server struct {
	m        *Metrics
	store    approval.Store     // the store itself, not the metered one: probes are not operations
	adapters []adapters.Adapter // the adapters themselves
	modelURL string             // the model's base URL; "" when there is no model
	log      *slog.Logger

	ln   net.Listener
	srv  *http.Server
	done chan struct{}

	dial      func(ctx context.Context, network, addr string) (net.Conn, error)
	modelMu   sync.Mutex
	modelAt   time.Time // when modelErr was found
	modelErr  error
	modelOnce bool // modelErr holds an answer
}

// NewServer builds the server that reports m and probes store, ads and
// the model at modelURL (empty: no model); Listen starts it. Give it the
// undecorated store and adapters: probes are not operations.
func NewServer(m *Metrics, store approval.Store, ads []adapters.Adapter, modelURL string, log *slog.Logger) *Server {
	var d net.Dialer
	return &Server{m: m, store: store, adapters: ads, modelURL: modelURL, log: log, dial: d.DialContext}
}

// Handler is the server's routes.
func (o *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(o.m.reg, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(o.log.Handler(), slog.LevelError),
		ErrorHandling: promhttp.ContinueOnError,
	}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", o.readyz)
	return mux
}

// Listen binds addr and serves until Close.
func (o *Server) Listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("ops.listen: %w", err)
	}
	o.ln = ln
	o.srv = &http.Server{Handler: o.Handler(), ReadHeaderTimeout: 5 * time.Second}
	o.done = make(chan struct{})
	go func() {
		defer close(o.done)
		if err := o.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			o.log.Error("ops server stopped", "err", err)
		}
	}()
	return nil
}

// Addr is the bound address (the port chosen when ops.listen ends in :0).
func (o *Server) Addr() string { return o.ln.Addr().String() }

// Close stops the server, letting a scrape in flight finish briefly.
func (o *Server) Close() {
	if o.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = o.srv.Shutdown(ctx)
	<-o.done
}

// readyz answers 200 when the store answers, every adapter is connected
// and the model is reachable or not configured; else 503, naming each
// check that failed.
func (o *Server) readyz(w http.ResponseWriter, r *http.Request) {
	fails := o.check(r.Context())
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if len(fails) > 0 {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = fmt.Fprintf(w, "not ready:\n%s\n", strings.Join(fails, "\n"))
		return
	}
	_, _ = fmt.Fprintln(w, "ready")
}

// check runs the readiness checks and returns one line per failure.
func (o *Server) check(ctx context.Context) []string {
	var fails []string
	if err := o.checkStore(ctx); err != nil {
		fails = append(fails, "store: "+err.Error())
	}
	for _, ad := range o.adapters {
		// An adapter without a connection (Extras.Link: the terminal)
		// counts as connected.
		if l := ad.Extras().Link; l != nil && !l.Connected() {
			fails = append(fails, "adapter "+ad.Name()+": not connected")
		}
	}
	if err := o.checkModel(ctx); err != nil {
		fails = append(fails, "model: "+err.Error())
	}
	return fails
}

// checkStore asks the store for an approval that does not exist: one
// cheap read, answered with ErrNotFound when the store works.
func (o *Server) checkStore(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, storeCheckTimeout)
	defer cancel()
	_, err := o.store.Get(ctx, "readyz-probe")
	switch {
	case err == nil || errors.Is(err, approval.ErrNotFound):
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("no answer within %s", storeCheckTimeout)
	}
	// The detail goes to the log: /readyz may be seen by more people.
	o.log.Warn("readiness: the store does not answer", "err", err)
	return errors.New("does not answer (see the log)")
}

// checkModel dials the model server's host, and reuses the answer for
// modelCheckTTL. No model configured is ready: direct commands work.
func (o *Server) checkModel(ctx context.Context) error {
	if o.modelURL == "" {
		return nil
	}
	o.modelMu.Lock()
	defer o.modelMu.Unlock()
	if o.modelOnce && time.Since(o.modelAt) < modelCheckTTL {
		return o.modelErr
	}
	o.modelErr = o.dialModel(ctx)
	o.modelAt, o.modelOnce = time.Now(), true
	return o.modelErr
}

func (o *Server) dialModel(ctx context.Context) error {
	addr, err := dialAddr(o.modelURL)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, modelDialTimeout)
	defer cancel()
	conn, err := o.dial(ctx, "tcp", addr)
	if err != nil {
		// The address only: a dial error can quote what the URL holds.
		return fmt.Errorf("cannot reach %s", addr)
	}
	_ = conn.Close()
	return nil
}

// dialAddr is host:port of a base URL, the port from the scheme when the
// URL has none.
func dialAddr(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return "", errors.New("the base URL has no host")
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}
