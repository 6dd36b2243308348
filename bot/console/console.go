// Package console is the web console of approvals: a person signs in with
// a one-time link the bot sends them privately (!login), and then sees,
// as that chat user, the cards they may decide across channels, replicas
// and restarts (from the store), decides them, and reads the history from
// the audit log. A decision in the browser is one more way to decide: the
// console hands it to the bot as a decision event of the person's
// platform, in the card's own conversation, through the one check a click
// in chat takes (bot.ConsoleDecide); it checks no permission itself.
//
// The pages are embedded (no build step, no CDN): plain HTML forms that
// work without JavaScript, and one small script for live updates
// (server-sent events). Every response carries a content security policy
// with no inline script; sessions are signed cookies (HttpOnly,
// SameSite=Strict, Secure unless the console is plain HTTP on loopback),
// and every state-changing request carries the session's CSRF token.
package console

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/auditsink"
	"github.com/countersign/countersign/bot"
)

//go:embed assets
var assets embed.FS

// Config is the console's section (console:).
type Config struct {
	// Listen is the address the console serves on ("127.0.0.1:8791");
	// empty means no console.
	Listen string `yaml:"listen"`
	// URL is the console's public base URL, which sign-in links name
	// (default: http:// and Listen, when Listen is a loopback address).
	// It must be https:// unless its host is a loopback address.
	URL string `yaml:"url"`
	// SecretEnv names the environment variable holding the key that
	// signs links and sessions (at least 32 characters). Replicas behind
	// one URL must share it; unset, each process makes its own key at
	// start, and its links and sessions end with it.
	SecretEnv string `yaml:"secret_env"`
	// Session is how long a sign-in lasts (default 8h).
	Session time.Duration `yaml:"session"`
	// OIDC signs people in through an OpenID Connect provider, beside
	// !login (oidc.go).
	OIDC OIDCConfig `yaml:"oidc"`
}

// DefaultSession is how long a sign-in lasts when Session is not set.
const DefaultSession = 8 * time.Hour

// WithDefaults fills the defaults and checks the section; an error names
// the key and the fix.
func (c Config) WithDefaults() (Config, error) {
	if c.Listen == "" {
		return c, nil
	}
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return c, fmt.Errorf("console.listen %q: want host:port, such as 127.0.0.1:8791", c.Listen)
	}
	if c.Session == 0 {
		c.Session = DefaultSession
	}
	if c.Session < time.Minute {
		return c, fmt.Errorf("console.session %s: give at least 1m", c.Session)
	}
	if c.URL == "" {
		if !loopback(host) {
			return c, fmt.Errorf("console.url is not set and console.listen %q is not a loopback address: set console.url to the https:// address people open", c.Listen)
		}
		c.URL = "http://" + c.Listen
	}
	u, err := url.Parse(c.URL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return c, fmt.Errorf("console.url %q: want an absolute http(s) URL, such as https://countersign.example.com", c.URL)
	}
	if u.Scheme == "http" && !loopback(u.Hostname()) {
		return c, fmt.Errorf("console.url %q: plain http is only for a loopback address; use https:// (a sign-in link and a session must not cross a network in clear)", c.URL)
	}
	c.URL = strings.TrimSuffix(c.URL, "/")
	return c, c.OIDC.check()
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Bot is what the console asks of the bot (bot.Bot is one).
type Bot interface {
	ConsolePending(ctx context.Context, who bot.ConsoleUser) ([]bot.PendingCard, error)
	ConsoleDecide(ctx context.Context, who bot.ConsoleUser, d adapters.Decision) (bot.ConsoleAnswer, error)
	ConsoleEdit(ctx context.Context, who bot.ConsoleUser, id, operation string) (bot.ConsoleAnswer, error)
	ConsoleMayRead(who bot.ConsoleUser, channel string) bool
}

var _ Bot = (*bot.Bot)(nil)

// Store is what the console reads of the shared store: an approval's
// state, and the one-time spending of a sign-in link across replicas.
type Store interface {
	Get(ctx context.Context, id string) (*approval.Approval, error)
	approval.Deduper
}

// Deps are what the console uses, wired in main.
type Deps struct {
	Store Store
	// Audit reads the history back; nil means no history page.
	Audit  auditsink.Reader
	Getenv func(string) string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Log; nil means slog.Default().
	Log *slog.Logger
}

// Server is the console.
type Server struct {
	cfg    Config
	key    []byte
	base   string
	secure bool
	store  Store
	audit  auditsink.Reader
	now    func() time.Time
	log    *slog.Logger
	pages  *template.Template
	// every is how often a live page asks the store whether its cards
	// changed.
	every time.Duration
	srv   *http.Server
	ln    net.Listener
	// stop ends the requests in flight (live pages) at Close.
	stop context.CancelFunc
	// oidc is the sign-in provider, when console.oidc is set.
	oidc *provider
	// derived: the base URL is http:// and the listening address (no
	// console.url), known for certain once Listen has the port (":0").
	derived bool
}

// minKey is the shortest signing key console.secret_env may hold.
const minKey = 32

// New builds the console of cfg (cfg.Listen set). Serve it with Handler or
// Listen once the bot is built: the bot takes Server.Login for !login.
func New(cfg Config, d Deps) (*Server, error) {
	derived := cfg.URL == ""
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.Listen == "" {
		return nil, errors.New("console: no console.listen")
	}
	if d.Store == nil {
		return nil, errors.New("console: no approval store")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	if d.Getenv == nil {
		d.Getenv = func(string) string { return "" }
	}
	var key []byte
	if cfg.SecretEnv != "" {
		v := d.Getenv(cfg.SecretEnv)
		if len(v) < minKey {
			return nil, fmt.Errorf("console.secret_env names %s, which holds %d characters: set it to a random secret of at least %d (openssl rand -hex 32)", cfg.SecretEnv, len(v), minKey)
		}
		key = []byte(v)
	} else {
		key = []byte(nonce() + nonce())
	}
	var op *provider
	if o := cfg.OIDC; o.Issuer != "" {
		secret := d.Getenv(o.ClientSecretEnv)
		if secret == "" {
			return nil, fmt.Errorf("console.oidc.client_secret_env names %s, which is empty: set it to the client's secret", o.ClientSecretEnv)
		}
		op = &provider{cfg: o, secret: secret, client: &http.Client{Timeout: 10 * time.Second}}
	}
	u, _ := url.Parse(cfg.URL) // checked by WithDefaults
	pages, err := template.New("").Funcs(funcs).ParseFS(assets, "assets/*.html")
	if err != nil {
		return nil, fmt.Errorf("console: pages: %w", err)
	}
	return &Server{
		cfg: cfg, key: key, base: cfg.URL, secure: !(u.Scheme == "http" && loopback(u.Hostname())),
		store: d.Store, audit: d.Audit, now: d.Now, log: d.Log.With("component", "console"),
		pages: pages, every: 2 * time.Second, derived: derived, oidc: op,
	}, nil
}

// Handler is the console's HTTP handler, acting through b.
func (s *Server) Handler(b Bot) http.Handler {
	static, _ := fs.Sub(assets, "assets/static")
	h := &handlers{s: s, bot: b}
	mux := http.NewServeMux()
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", h.pending)
	mux.HandleFunc("GET /cards", h.cards)
	mux.HandleFunc("GET /events", h.events)
	mux.HandleFunc("GET /login", h.loginPage)
	mux.HandleFunc("POST /login", h.login)
	mux.HandleFunc("POST /logout", h.logout)
	mux.HandleFunc("POST /decide", h.decide)
	mux.HandleFunc("POST /edit", h.edit)
	mux.HandleFunc("GET /history", h.history)
	mux.HandleFunc("GET /approval/{id}", h.story)
	mux.HandleFunc("GET /insights", h.insights)
	mux.HandleFunc("GET /oidc/start", h.oidcStart)
	mux.HandleFunc("GET /oidc/callback", h.oidcCallback)
	return secure(mux)
}

// secure sets the headers every response carries.
func secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "same-origin") // a sign-in link never leaves in a Referer; a POST keeps its Origin
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// Listen serves the console on cfg.Listen in the background, acting
// through b, until Close. Call it before the bot runs: the links made
// after it name the port it got.
func (s *Server) Listen(b Bot) error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("console: listen on %s (console.listen): %w", s.cfg.Listen, err)
	}
	s.ln = ln
	if s.derived {
		s.base = "http://" + ln.Addr().String()
	}
	ctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	s.srv = &http.Server{Handler: s.Handler(b), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("console stopped", "err", err)
		}
	}()
	return nil
}

// Addr is the address the console listens on, once Listen returned.
func (s *Server) Addr() string {
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// URL is the console's public base URL.
func (s *Server) URL() string { return s.base }

// Close stops serving; live pages end.
func (s *Server) Close() error {
	if s.srv == nil {
		return nil
	}
	s.stop() // live pages end at once, and Shutdown need not wait for them
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		return s.srv.Close()
	}
	return nil
}
