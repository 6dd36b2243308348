// Package webhook holds what the adapters' public HTTP endpoints (Slack's
// Events API and interactivity in HTTP mode, Discord's interactions
// endpoint) share against strangers: a server whose slow readers time out,
// a listener that caps concurrent connections, a body read that is capped
// and happens only after the signature's headers have been checked, and a
// bounded cache of the signatures already seen, keyed by their bytes.
package webhook

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
)

// Limits bound what one endpoint lets strangers hold.
type Limits struct {
	// MaxBody is the largest body read, in bytes.
	MaxBody int64
	// MaxConns is how many connections are served at once; more wait in
	// the kernel's queue, holding no memory of the process.
	MaxConns int
	// ReadHeaderTimeout and ReadTimeout end a request whose headers or
	// whole body are not in by then; IdleTimeout ends a kept-alive
	// connection that sends nothing.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
}

// Defaults are the limits of an endpoint that takes a platform's small
// signed requests.
var Defaults = Limits{
	MaxBody:           1 << 20,
	MaxConns:          32,
	ReadHeaderTimeout: 5 * time.Second,
	ReadTimeout:       10 * time.Second,
	WriteTimeout:      10 * time.Second,
	IdleTimeout:       30 * time.Second,
}

// Server is an http.Server for h with l's timeouts.
func Server(h http.Handler, l Limits) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    16 << 10,
	}
}

// Listen listens on addr and serves at most l.MaxConns connections at once.
func Listen(addr string, l Limits) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return LimitListener(ln, l.MaxConns), nil
}

// LimitListener returns a listener that accepts at most n connections at
// once: Accept waits until one of them closes.
func LimitListener(ln net.Listener, n int) net.Listener {
	if n <= 0 {
		return ln
	}
	return &limitListener{Listener: ln, sem: make(chan struct{}, n), done: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	sem       chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// ErrTooLarge is ReadBody's error for a body over the cap.
var ErrTooLarge = errors.New("the request body is over the cap")

// ReadBody reads r's body, at most max bytes: a Content-Length over max is
// refused before a byte is read, and a body that runs past it is cut off.
// Call it only once the request's signature headers and timestamp have
// been checked.
func ReadBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	if r.ContentLength > max {
		return nil, fmt.Errorf("%w: Content-Length %d, cap %d", ErrTooLarge, r.ContentLength, max)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return nil, fmt.Errorf("%w: cap %d", ErrTooLarge, max)
	}
	return body, err
}

// Fresh reports whether a request signed at unix second ts is within
// window of now, either way.
func Fresh(ts int64, now time.Time, window time.Duration) bool {
	d := now.Sub(time.Unix(ts, 0))
	return d < window && d > -window
}

// Replays remembers the signatures of accepted requests for as long as
// they are valid, to refuse a second delivery of the same signed request.
// It is keyed by the signature's bytes, so a signature spelt another way
// (hex in upper case) is the same signature.
type Replays struct {
	seen *expirable.LRU[string, struct{}]
	mu   sync.Mutex
}

// NewReplays remembers at most size signatures for ttl each. A flood of
// valid requests beyond size forgets the oldest first; size should exceed
// what the platform sends in ttl.
func NewReplays(size int, ttl time.Duration) *Replays {
	return &Replays{seen: expirable.NewLRU[string, struct{}](size, nil, ttl)}
}

// Seen remembers sig and reports whether it was already remembered.
func (r *Replays) Seen(sig []byte) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen.Contains(string(sig)) {
		return true
	}
	r.seen.Add(string(sig), struct{}{})
	return false
}
