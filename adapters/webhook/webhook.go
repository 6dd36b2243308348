// Package webhook holds what the adapters' public HTTP endpoints (Slack's
// Events API and interactivity in HTTP mode, Discord's interactions
// endpoint) share against strangers: a server whose slow readers time out,
// a body read that is capped, has its own deadline, shares a bounded
// budget and happens only after the signature's headers have been checked,
// and a bounded cache of the signatures already seen, keyed by their bytes.
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
//
// A stranger can forge well-formed signature headers and then send its
// body slowly: the signature is checked only once the body is in. Such a
// client is cut by deadlines (ReadHeaderTimeout, then BodyTimeout from the
// moment its headers are in), and the bytes of bodies not yet verified are
// bounded by BodyBudget, the oldest read cut first when a newer request
// needs room. No slot is held for a connection, so a genuine request, whose
// body follows its headers at once, is never queued behind slow ones.
type Limits struct {
	// MaxBody is the largest body read, in bytes.
	MaxBody int64
	// BodyBudget is how many bytes of bodies not yet verified are held
	// at once (each read reserves its Content-Length, or MaxBody when it
	// declares none).
	BodyBudget int64
	// MaxConns bounds the open connections, only so that a flood cannot
	// take every file descriptor: it is far above what deadlines let slow
	// clients hold.
	MaxConns int
	// ReadHeaderTimeout ends a request whose headers are not in by then;
	// BodyTimeout one whose body is not in that long after its headers;
	// IdleTimeout a kept-alive connection that sends nothing.
	ReadHeaderTimeout, BodyTimeout, WriteTimeout, IdleTimeout time.Duration
}

// Defaults are the limits of an endpoint that takes a platform's small
// signed requests: Slack and Discord send a request's headers and body at
// once and want an answer within 3 seconds.
var Defaults = Limits{
	MaxBody:           1 << 20,
	BodyBudget:        32 << 20,
	MaxConns:          4096,
	ReadHeaderTimeout: 2 * time.Second,
	BodyTimeout:       2 * time.Second,
	WriteTimeout:      10 * time.Second,
	IdleTimeout:       10 * time.Second,
}

// Server is an http.Server for h with l's timeouts. Its ReadTimeout is
// only a backstop: the body's deadline is set per request by Bodies.Read.
func Server(h http.Handler, l Limits) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadHeaderTimeout + l.BodyTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    16 << 10,
	}
}

// Listen listens on addr and keeps at most l.MaxConns connections open.
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

// ErrSlow is Bodies.Read's error for a body that did not arrive within
// its deadline, or whose read was cut to make room for a newer request.
var ErrSlow = errors.New("the request body did not arrive in time")

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

// Bodies reads the bodies of requests not yet verified within a deadline
// and a budget of bytes shared by the endpoint: when a request needs room
// the budget has not, the reads that began first are cut (a genuine body
// is in within milliseconds of its headers, so the oldest reads are the
// slow ones). Its zero value is not usable: use NewBodies.
type Bodies struct {
	l Limits

	mu    sync.Mutex
	freed sync.Cond // a read gave its bytes back
	used  int64
	reads []*bodyRead // oldest first
}

type bodyRead struct {
	size   int64
	cut    func() // ends the read: its deadline passes now
	wasCut bool   // guarded by Bodies.mu
}

// NewBodies reads bodies within l's MaxBody, BodyTimeout and BodyBudget.
func NewBodies(l Limits) *Bodies {
	b := &Bodies{l: l}
	b.freed.L = &b.mu
	return b
}

// Read reads r's body like ReadBody, within the body deadline and the
// budget: ErrTooLarge for a body over the cap, ErrSlow for one that did
// not arrive in time or was cut for a newer request. Call it only once the
// request's signature headers and timestamp have been checked; an error
// answer should close the connection (Close).
func (b *Bodies) Read(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.ContentLength > b.l.MaxBody {
		return nil, fmt.Errorf("%w: Content-Length %d, cap %d", ErrTooLarge, r.ContentLength, b.l.MaxBody)
	}
	size := r.ContentLength
	if size < 0 {
		size = b.l.MaxBody
	}
	rc := http.NewResponseController(w)
	if b.l.BodyTimeout > 0 {
		_ = rc.SetReadDeadline(time.Now().Add(b.l.BodyTimeout))
	}
	read := &bodyRead{size: size, cut: func() { _ = rc.SetReadDeadline(time.Unix(1, 0)) }}
	b.admit(read)
	var body []byte
	var err error
	if r.ContentLength >= 0 {
		// Exactly the reservation, so that the budget is the memory.
		body = make([]byte, r.ContentLength)
		_, err = io.ReadFull(r.Body, body)
	} else {
		body, err = ReadBody(w, r, b.l.MaxBody)
	}
	b.mu.Lock()
	wasCut := read.wasCut
	b.release(read)
	b.mu.Unlock()
	if err == nil {
		// The answer may wait on the request's context (the bot's
		// record): the body's deadline must not end it once the body is
		// in.
		_ = rc.SetReadDeadline(time.Time{})
		return body, nil
	}
	// The rest of a refused body is not read either: the server would
	// otherwise drain it after the answer, for as long as its sender likes.
	_ = rc.SetReadDeadline(time.Unix(1, 0))
	if ne, ok := errors.AsType[net.Error](err); wasCut || ok && ne.Timeout() {
		return nil, fmt.Errorf("%w: %w", ErrSlow, err)
	}
	return nil, err
}

// admit reserves read's size, cutting the oldest reads until it fits. A
// cut read gives its bytes back when its Read returns, at once since its
// deadline has passed: until then admit waits, so that the budget bounds
// the bodies held, not only those still being read.
func (b *Bodies) admit(read *bodyRead) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.l.BodyBudget > 0 && b.used+read.size > b.l.BodyBudget && len(b.reads) > 0 {
		if old := b.oldestUncut(); old != nil {
			old.cut()
			old.wasCut = true
			continue
		}
		b.freed.Wait()
	}
	b.reads = append(b.reads, read)
	b.used += read.size
}

// oldestUncut is the read that began first and has not been cut; b.mu is
// held.
func (b *Bodies) oldestUncut() *bodyRead {
	for _, r := range b.reads {
		if !r.wasCut {
			return r
		}
	}
	return nil
}

// release gives back read's reservation; b.mu is held.
func (b *Bodies) release(read *bodyRead) {
	for i, r := range b.reads {
		if r == read {
			b.reads = append(b.reads[:i], b.reads[i+1:]...)
			b.used -= read.size
			b.freed.Broadcast()
			return
		}
	}
}

// CutAll cuts every read under way: at shutdown, a stranger's slow body
// is not waited for.
func (b *Bodies) CutAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range b.reads {
		if !r.wasCut {
			r.cut()
			r.wasCut = true
		}
	}
}

// Held is the bytes reserved by reads under way.
func (b *Bodies) Held() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Close marks the answer to a refused request as the connection's last: a
// stranger does not keep it open, idle, after its refusal.
func Close(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
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
