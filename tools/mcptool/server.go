package mcptool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// server is one configured MCP server and its current session. A
// supervisor restarts a stdio server that dies, with backoff, until the
// manager closes.
type server struct {
	name   string
	cfg    ServerConfig
	opts   Options
	log    *slog.Logger
	client *mcp.Client

	mu      sync.Mutex
	sess    *mcp.ClientSession
	proc    *program // the running program of a stdio server
	down    error    // why there is no session, while restarting
	closed  bool
	stderr  *tailBuffer
	stopped chan struct{} // closed by close
	done    chan struct{} // closed when the supervisor has returned
	// listed is its tools as last listed (listing.go).
	listed listing
	// life is cancelled by close, so that a restart in progress gives up.
	life   context.Context
	cancel context.CancelFunc
}

// Backoff between restarts of a server that died: doubling from
// restartMin up to restartMax.
var (
	restartMin = time.Second
	restartMax = time.Minute
)

func newServer(name string, cfg ServerConfig, opts Options) *server {
	life, cancel := context.WithCancel(context.Background())
	s := &server{
		life: life, cancel: cancel,
		name: name, cfg: cfg, opts: opts,
		log:     opts.Log.With("mcp_server", name),
		stopped: make(chan struct{}),
		done:    make(chan struct{}),
	}
	s.client = mcp.NewClient(&mcp.Implementation{Name: "countersign", Version: opts.Version},
		// No capabilities: no roots (a filesystem server would take the
		// client's roots instead of its configured folders), no
		// sampling, no elicitation.
		&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{},
			// A changed list is read again at the next call (listing.go).
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
				s.listed.reset()
				s.log.Info("MCP server's tool list changed; it is listed again at the next call")
			}})
	return s
}

// transport builds how to reach the server: its program with a scrubbed
// environment, or its URL with headers from the bot's environment.
func (s *server) transport() (mcp.Transport, *program, error) {
	if s.cfg.URL != "" {
		hdr := http.Header{}
		for h, env := range s.cfg.HeadersEnv {
			v, ok := s.opts.LookupEnv(env)
			if !ok || v == "" {
				return nil, nil, fmt.Errorf("the header %s comes from $%s, which is not set", h, env)
			}
			hdr.Set(h, v)
		}
		return &mcp.StreamableClientTransport{
			Endpoint:   s.cfg.URL,
			HTTPClient: &http.Client{Transport: headerTransport{hdr: hdr, next: http.DefaultTransport}},
			MaxRetries: -1,
		}, nil, nil
	}
	cmd := exec.Command(s.cfg.Command[0], s.cfg.Command[1:]...)
	cmd.Env = s.cfg.Environ(s.opts.LookupEnv, s.opts.Environ)
	cmd.Dir = s.cfg.Dir
	s.stderr = &tailBuffer{max: 4096}
	cmd.Stderr = s.stderr
	p, err := s.program(cmd)
	if err != nil {
		return nil, nil, err
	}
	return p, p, nil
}

// headerTransport adds fixed headers to every request.
type headerTransport struct {
	hdr  http.Header
	next http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.hdr {
		r.Header[k] = v
	}
	return h.next.RoundTrip(r)
}

// connect starts the server and opens a session, within start_timeout.
func (s *server) connect(ctx context.Context) (*mcp.ClientSession, *program, error) {
	t, p, err := s.transport()
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
	defer cancel()
	sess, err := s.client.Connect(ctx, t, nil)
	if err != nil {
		p.stop()
		return nil, nil, s.startError(err)
	}
	s.listed.reset() // a new session: its tools are listed afresh
	return sess, p, nil
}

// startError words a failed start, with the last line the program wrote
// on its standard error.
func (s *server) startError(err error) error {
	var ee *exec.Error
	var pe *fs.PathError
	switch {
	case errors.As(err, &ee):
		return fmt.Errorf("cannot run %s: %v; check mcp.servers.%s.command and PATH", ee.Name, ee.Err, s.name)
	case errors.As(err, &pe) && len(s.cfg.Command) > 0:
		return fmt.Errorf("cannot run %s: %v; check mcp.servers.%s.command and PATH", s.cfg.Command[0], pe.Err, s.name)
	case errors.Is(err, context.DeadlineExceeded):
		err = fmt.Errorf("it did not answer within %v (mcp.servers.%s.start_timeout)", s.cfg.StartTimeout, s.name)
	}
	if s.stderr != nil {
		if last := s.stderr.lastLine(); last != "" {
			return fmt.Errorf("%w; it said: %s", err, last)
		}
	}
	return err
}

// start connects for the first time and starts the supervisor.
func (s *server) start(ctx context.Context) (*mcp.ClientSession, error) {
	sess, p, err := s.connect(ctx)
	if err != nil {
		s.cancel()
		close(s.done)
		return nil, err
	}
	s.mu.Lock()
	s.sess, s.proc = sess, p
	s.mu.Unlock()
	go s.supervise(sess)
	return sess, nil
}

// supervise waits for the session to end and, unless the manager is
// closing, starts the server again with backoff.
func (s *server) supervise(sess *mcp.ClientSession) {
	defer close(s.done)
	for {
		err := sess.Wait()
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return
		}
		p := s.proc
		s.sess, s.proc = nil, nil
		s.down = fmt.Errorf("it stopped (%v) and is being restarted", cause(err))
		s.mu.Unlock()
		p.stop()
		s.log.Warn("MCP server stopped; restarting", "error", cause(err))

		wait := restartMin
		for {
			select {
			case <-s.stopped:
				return
			case <-time.After(wait):
			}
			ns, np, err := s.connect(s.life)
			if err == nil {
				s.mu.Lock()
				if s.closed {
					s.mu.Unlock()
					_ = ns.Close()
					np.stop()
					return
				}
				s.sess, s.proc, s.down = ns, np, nil
				s.mu.Unlock()
				s.log.Info("MCP server restarted")
				sess = ns
				break
			}
			s.mu.Lock()
			s.down = fmt.Errorf("it stopped and could not be restarted (%v); trying again in %v", err, wait)
			s.mu.Unlock()
			s.log.Warn("MCP server could not be restarted", "error", err, "retry_in", wait)
			wait = min(2*wait, restartMax)
		}
	}
}

func cause(err error) string {
	if err == nil {
		return "the connection closed"
	}
	return err.Error()
}

// session returns the current session, or why there is none.
func (s *server) session() (*mcp.ClientSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return nil, errors.New("the bot is shutting down")
	case s.sess == nil && s.down != nil:
		return nil, s.down
	case s.sess == nil:
		return nil, errors.New("it is not running")
	}
	return s.sess, nil
}

// close ends the session and the program, and waits for the supervisor.
func (s *server) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.stopped)
	s.cancel()
	sess, p := s.sess, s.proc
	s.sess, s.proc = nil, nil
	s.mu.Unlock()
	if sess != nil {
		_ = sess.Close()
	}
	p.stop()
	<-s.done
}

// tailBuffer keeps the last bytes a program wrote on standard error.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.b)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
