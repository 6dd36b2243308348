package main

// Issue 13's two-replica proof: two `countersign run` processes, built from
// this source, on one real Redis (append-only), each with a Socket Mode
// connection to one in-process fake Slack that sends each envelope to one
// connection in turn, and one fake model that answers by the user's words.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/countersign/countersign/adapters/slack"
	"github.com/countersign/countersign/adapters/slack/slacktest"
	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/internal/testenv"
)

// replicaFigures are what the proof measured, logged at the end of each
// part (go test -v) for the README.
type replicaFigures struct {
	mu sync.Mutex
	m  map[string]string
}

func (f *replicaFigures) set(t *testing.T, k, v string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string]string{}
	}
	f.m[k] = v
	t.Logf("figure: %s = %s", k, v)
}

var (
	dave     = slacktest.User{ID: "U0DAVE", Name: "dave"}
	erin     = slacktest.User{ID: "U0ERIN", Name: "erin"}
	clickers = []slacktest.User{bob, carol, dave, erin}
)

// ---- the fake model ----

// wordModel is a fake chat model that two processes can share: it answers
// by what was said, not in a scripted order. "please append TOKEN" asks
// for `echo TOKEN >> ./runs.log` (a write: a card); "please append-slow
// TOKEN" for the same and then a minute of sleep, the shell's pid in
// ./TOKEN.pid. A tool result is answered "Finished TOKEN." and recorded:
// each call id's results are the turn's resumptions.
type wordModel struct {
	srv *httptest.Server
	mu  sync.Mutex
	// results holds the tool results the model was given, per call id.
	results map[string][]string
}

var askRE = regexp.MustCompile(`please (append|append-slow) ([a-z0-9-]+)`)

func newWordModel(t *testing.T) *wordModel {
	m := &wordModel{results: map[string][]string{}}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *wordModel) serve(w http.ResponseWriter, r *http.Request) {
	var req agenttest.ChatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	last := req.Messages[len(req.Messages)-1]
	msg := map[string]any{"role": "assistant", "content": "ok"}
	finish := "stop"
	switch {
	case last.Role == "tool":
		m.mu.Lock()
		m.results[last.ToolCallID] = append(m.results[last.ToolCallID], last.Content)
		m.mu.Unlock()
		msg["content"] = "Finished " + strings.TrimPrefix(last.ToolCallID, "call-") + "."
	case last.Role == "user" && askRE.MatchString(last.Content):
		g := askRE.FindStringSubmatch(last.Content)
		cmd := "echo " + g[2] + " >> ./runs.log"
		if g[1] == "append-slow" {
			cmd = "echo $$ > ./" + g[2] + ".pid; " + cmd + "; sleep 60"
		}
		args, _ := json.Marshal(map[string]string{"command": cmd})
		msg["tool_calls"] = []agenttest.WireToolCall{agenttest.Call("call-"+g[2], "execute_command", string(args))}
		finish = "tool_calls"
	}
	if req.Stream {
		// A streamed turn: the whole answer in one chunk, then the finish.
		w.Header().Set("Content-Type", "text/event-stream")
		delta := map[string]any{"role": "assistant", "content": msg["content"]}
		if calls, ok := msg["tool_calls"].([]agenttest.WireToolCall); ok {
			var wire []any
			for i, c := range calls {
				wire = append(wire, map[string]any{"index": i, "id": c.ID, "type": "function",
					"function": map[string]any{"name": c.Function.Name, "arguments": c.Function.Arguments}})
			}
			delta["tool_calls"] = wire
		}
		for _, ch := range []map[string]any{
			{"index": 0, "delta": delta, "finish_reason": nil},
			{"index": 0, "delta": map[string]any{}, "finish_reason": finish},
		} {
			b, _ := json.Marshal(map[string]any{"id": "chatcmpl-replicas", "object": "chat.completion.chunk",
				"created": time.Now().Unix(), "model": req.Model, "choices": []any{ch}})
			_, _ = io.WriteString(w, "data: "+string(b)+"\n\n")
		}
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-replicas", "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]int{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
	})
}

// resumed returns the tool results the model was given for token's call.
func (m *wordModel) resumed(token string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.results["call-"+token])
}

// ---- Redis, a real server of our own ----

// redisServer is a redis-server on a loopback port, append-only, that the
// test can stop and start again on the same port and folder.
type redisServer struct {
	t    *testing.T
	bin  string
	port int
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

// newRedis starts a redis-server, or skips (fails under make test) when
// there is none on PATH.
func newRedis(t *testing.T) *redisServer {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("COUNTERSIGN_TEST_SERVICES") != "" || os.Getenv("CI") != "" {
			t.Fatal("redis-server is not on PATH although make test (.ci/services) should have installed it")
		}
		t.Skip("skipping: needs redis-server on PATH; run `make test`, which installs it")
	}
	r := &redisServer{t: t, bin: bin, port: freePort(t), dir: t.TempDir()}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func (r *redisServer) url(db int) string {
	return fmt.Sprintf("redis://127.0.0.1:%d/%d", r.port, db)
}

// start starts the server and waits until it answers PING with its data
// loaded.
func (r *redisServer) start() {
	r.t.Helper()
	r.cmd = exec.Command(r.bin, "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--appendonly", "yes", "--appendfsync", "always", "--save", "", "--dir", r.dir,
		"--logfile", filepath.Join(r.dir, "redis.log"))
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(r.cmd, r.done)
	if !testenv.Within(10*time.Second, r.ping) {
		log, _ := os.ReadFile(filepath.Join(r.dir, "redis.log"))
		r.t.Fatalf("redis-server did not answer within 10s; its log:\n%s", log)
	}
}

func (r *redisServer) ping() bool {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", r.port), time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

// stop stops the server as an operator would (SIGTERM: the append-only
// file is flushed) and waits for it to exit.
func (r *redisServer) stop() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.done
	}
	r.cmd = nil
}

// ---- the replicas ----

// replica is one `countersign run` process.
type replica struct {
	name string
	cmd  *exec.Cmd
	conn int    // the number of its Socket Mode connection at the fake
	log  string // its stderr
	done chan struct{}
	err  error // its exit, once done is closed
}

// replicaEnv is what the scenarios share: the binary, the fakes, Redis,
// and the tools' folder both processes work in.
type replicaEnv struct {
	t     *testing.T
	bin   string
	root  string
	fake  *slacktest.Server
	model *wordModel
	redis *redisServer
	db    int
	cfg   string
}

// buildBinary builds countersign once for the test.
func buildBinary(t *testing.T) string {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("skipping: needs the go command on PATH to build countersign")
	}
	bin := filepath.Join(t.TempDir(), "countersign")
	out, err := exec.Command(goBin, "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// waitOrFalse polls cond every 10ms for up to d and reports whether it
// came true, so that the caller can say what it saw when it did not.
func waitOrFalse(d time.Duration, cond func() bool) bool {
	return testenv.Within(d, cond)
}

// pollUntil waits up to d for cond, checking it every 10ms: for what the
// fake Slack does not see (a process's files, its log), where the fake's
// Wait, which checks at each change of the fake, would miss the moment;
// a streamed turn makes no Slack call for seconds while a command runs.
func pollUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	testenv.Eventually(t, d, cond, what)
}

// replicaConfig is the configuration of both processes: approval_ttl as
// given, recovery in seconds, a short sweep, four approvers, and metrics
// on as configs/container.yaml ships them, so that the kill -9 and burst
// trials run through the metering wrappers the shipped image has.
func replicaConfig(redisURL string, ttl time.Duration) string {
	return fmt.Sprintf(`
ops:
  listen: 127.0.0.1:0
agent:
  approval_ttl: %s
  recovery_grace: 3s
  run_lease: 3s
store:
  redis_url: %s
bot:
  default:
    approvers: [U0BOB, U0CAROL, U0DAVE, U0ERIN]
    require_second_person: true
  sweep_interval: 250ms
  shutdown_grace: 10s
  inbox_lease: 2s
tools:
  execute_command:
    allow_root: true # run as root, commands would run as nobody, who may not enter the test's folders
log:
  level: info
`, ttl, redisURL)
}

// start starts a replica named name and waits until its socket is open.
func (e *replicaEnv) start(name string) *replica {
	t := e.t
	t.Helper()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "countersign.yaml")
	if err := os.WriteFile(cfgPath, []byte(e.cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &replica{name: name, log: filepath.Join(dir, "stderr.log"), done: make(chan struct{})}
	logf, err := os.Create(r.log)
	if err != nil {
		t.Fatal(err)
	}
	before := e.fake.Open()
	r.cmd = exec.Command(e.bin, "run", "--config", cfgPath, "--root", e.root)
	r.cmd.Dir = dir
	r.cmd.Stdout, r.cmd.Stderr = logf, logf
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "OPENAI_BASE_URL=" + e.model.srv.URL + "/v1", "OPENAI_MODEL=test-model"}
	for k, v := range e.fake.Env() {
		env = append(env, k+"="+v)
	}
	r.cmd.Env = env
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r.err = r.cmd.Wait()
		logf.Close()
		close(r.done)
	}()
	t.Cleanup(func() { e.stop(r) })
	e.fake.Wait(t, name+"'s socket", func() bool {
		select {
		case <-r.done:
			return true
		default:
		}
		return len(e.fake.Open()) > len(before)
	})
	select {
	case <-r.done:
		t.Fatalf("%s exited at start: %v\n%s", name, r.err, r.stderr())
	default:
	}
	open := e.fake.Open()
	r.conn = open[len(open)-1]
	return r
}

func (r *replica) stderr() string {
	b, _ := os.ReadFile(r.log)
	return string(b)
}

// stop ends a replica with SIGTERM and waits; a replica still there after
// 20 seconds is killed and the test fails.
func (e *replicaEnv) stop(r *replica) {
	select {
	case <-r.done:
		return
	default:
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(20 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.done
		e.t.Errorf("%s did not stop within 20s of SIGTERM", r.name)
	}
}

// toward makes r's socket the one the next envelope goes to, by sending
// events the bot ignores (a reaction) until it is its turn.
func (e *replicaEnv) toward(r *replica) {
	e.t.Helper()
	for range 10 {
		if e.fake.NextConn() == r.conn {
			return
		}
		e.fake.Deliver(map[string]any{"type": "reaction_added", "user": carol.ID, "reaction": "eyes",
			"item": map[string]any{"type": "message", "channel": slackChannel, "ts": "1.000001"}, "event_ts": "1.000002"})
	}
	e.t.Fatalf("the fake never turned to %s's socket %d (open: %v)", r.name, r.conn, e.fake.Open())
}

// connOf is the socket the envelope id went to last.
func (e *replicaEnv) connOf(id string) int {
	for _, x := range e.fake.Envelopes() {
		if x.ID == id {
			return x.Conn
		}
	}
	return 0
}

// runs counts token's lines in runs.log: how many times its call ran.
func (e *replicaEnv) runs(token string) int {
	b, _ := os.ReadFile(filepath.Join(e.root, "runs.log"))
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if l == token {
			n++
		}
	}
	return n
}

// ask mentions the bot with "please append token" through r's socket and
// returns the thread and the card it gets.
func (e *replicaEnv) ask(r *replica, verb, token string) (thread string, card slacktest.Message) {
	e.t.Helper()
	e.toward(r)
	thread = e.fake.MentionOnce(alice, slackChannel, "", "please "+verb+" "+token)
	return thread, e.card(thread)
}

// card waits for the card in thread.
func (e *replicaEnv) card(thread string) slacktest.Message {
	e.t.Helper()
	var card slacktest.Message
	e.fake.Wait(e.t, "a card in thread "+thread, func() bool {
		c := cards(e.fake, thread)
		if len(c) > 0 {
			card = c[0]
		}
		return len(c) > 0
	})
	return card
}

// click delivers user's click through r's socket and returns the envelope.
func (e *replicaEnv) click(r *replica, u slacktest.User, card slacktest.Message, approve bool, id string) *slacktest.Envelope {
	e.t.Helper()
	e.toward(r)
	action := slack.ActionCancel
	if approve {
		action = slack.ActionApprove
	}
	env := e.fake.Click(u, slackChannel, card.TS, action, id)
	if got := e.connOf(env.ID); got != r.conn {
		e.t.Fatalf("the click went to socket %d, want %s's %d", got, r.name, r.conn)
	}
	return env
}

// view is the card's current view.
func (e *replicaEnv) view(card slacktest.Message) string {
	m, _ := e.fake.Message(slackChannel, card.TS)
	return slacktest.View(m)
}

// noticeTo waits for a private notice to u that answers env (its
// response_url) and returns its text.
func (e *replicaEnv) noticeTo(u slacktest.User, env *slacktest.Envelope) string {
	e.t.Helper()
	url := responseURL(e.t, env)
	var text string
	e.fake.Wait(e.t, "a notice to "+u.Name+" answering "+env.ID, func() bool {
		for _, n := range e.fake.Ephemerals(u.ID) {
			if n.ResponseURL == url {
				text = n.Text
				return true
			}
		}
		return false
	})
	return text
}

func responseURL(t *testing.T, env *slacktest.Envelope) string {
	var p struct {
		ResponseURL string `json:"response_url"`
	}
	if err := json.Unmarshal(env.Payload, &p); err != nil || p.ResponseURL == "" {
		t.Fatalf("envelope %s has no response_url: %v", env.ID, err)
	}
	return p.ResponseURL
}

func newReplicaEnv(t *testing.T, bin string, redis *redisServer, db int, ttl time.Duration) *replicaEnv {
	fake := slacktest.New(t)
	fake.MaxConnections = 10
	return &replicaEnv{t: t, bin: bin, root: t.TempDir(), fake: fake, model: newWordModel(t), redis: redis, db: db,
		cfg: replicaConfig(redis.url(db), ttl)}
}

// TestReplicas is issue 13's proof with real processes.
func TestReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the two-process test in -short mode")
	}
	redis := newRedis(t)
	bin := buildBinary(t)
	var figures replicaFigures

	t.Run("card on A, click on B", func(t *testing.T) {
		e := newReplicaEnv(t, bin, redis, 1, 5*time.Minute)
		a, b := e.start("A"), e.start("B")
		thread, card := e.ask(a, "append", "s1")
		id := approvalID(t, card)
		click := e.click(b, bob, card, true, id)
		e.fake.Acked(t, click)
		threadHas(t, e.fake, thread, "Finished s1.")
		e.fake.Wait(t, "the card's final state", func() bool {
			v := e.view(card)
			return strings.Contains(v, "approved by bob") && strings.Contains(v, "exit code 0")
		})
		if n := e.runs("s1"); n != 1 {
			t.Errorf("s1 ran %d times, want 1", n)
		}
		t.Logf("the card after the click on B:\n%s", e.view(card))
		if n := len(cards(e.fake, thread)); n != 1 {
			t.Errorf("%d cards in the thread, want 1", n)
		}
		if r := e.model.resumed("s1"); len(r) != 1 {
			t.Errorf("the turn was resumed %d times, want once: %q", len(r), r)
		}
		// A and B agree on the card: a late click on either is told the
		// same decision, and nothing runs again.
		for _, late := range []struct {
			r       *replica
			u       slacktest.User
			approve bool
		}{{a, carol, true}, {b, dave, false}, {a, erin, false}} {
			n := e.noticeTo(late.u, e.click(late.r, late.u, card, late.approve, id))
			if !strings.Contains(n, "already done") || !strings.Contains(n, "by bob") {
				t.Errorf("a late click on %s was told %q; want already done, by bob", late.r.name, n)
			}
		}
		if n := e.runs("s1"); n != 1 {
			t.Errorf("s1 ran %d times after late clicks, want 1", n)
		}
	})

	t.Run("64 concurrent clicks x 100 rounds", func(t *testing.T) {
		e := newReplicaEnv(t, bin, redis, 2, 5*time.Minute)
		reps := []*replica{e.start("A"), e.start("B")}
		const rounds, clicks = 100, 64
		start := time.Now()
		var doubleRuns, approved, cancelled int
		perConn := map[int]int{}
		for round := range rounds {
			token := fmt.Sprintf("r%03d", round)
			thread, card := e.ask(reps[round%2], "append", token)
			id := approvalID(t, card)
			envs := make([]*slacktest.Envelope, clicks)
			var wg sync.WaitGroup
			for i := range clicks {
				wg.Add(1)
				go func() {
					defer wg.Done()
					action := slack.ActionApprove
					if i%2 == 1 {
						action = slack.ActionCancel
					}
					envs[i] = e.fake.Click(clickers[i%len(clickers)], slackChannel, card.TS, action, id)
				}()
			}
			wg.Wait()
			urls := map[string]int{} // response_url → click index
			for i, env := range envs {
				urls[responseURL(t, env)] = i
			}
			// Every loser hears back; the winner's turn ends.
			answered := func() map[int]slacktest.Ephemeral {
				got := map[int]slacktest.Ephemeral{}
				for _, u := range clickers {
					for _, n := range e.fake.Ephemerals(u.ID) {
						if i, ok := urls[n.ResponseURL]; ok {
							if _, dup := got[i]; dup {
								t.Errorf("round %d: click %d was answered twice", round, i)
							}
							got[i] = n
						}
					}
				}
				return got
			}
			// The turn's end: a message after the card says so. Not
			// necessarily the last one: the model's words from before the
			// card ("ok", said beside its tool call) may reach a streamed
			// thread after the answer (see the closing note of issue 21).
			ended := func() bool {
				msgs := e.fake.Thread(slackChannel, thread)
				for _, m := range msgs[min(1, len(msgs)):] {
					if strings.Contains(slacktest.View(m), "Finished "+token) {
						return true
					}
				}
				return false
			}
			if !waitOrFalse(30*time.Second, func() bool { return len(answered()) >= clicks-1 && ended() }) {
				var views []string
				for _, m := range e.fake.Thread(slackChannel, thread) {
					views = append(views, slacktest.View(m))
				}
				t.Fatalf("round %d: after 30s, %d of %d notices, turn ended %v; the thread:\n%s",
					round, len(answered()), clicks-1, ended(), strings.Join(views, "\n---\n"))
			}
			for _, env := range envs {
				e.fake.Acked(t, env)
				perConn[e.connOf(env.ID)]++
			}
			view := e.view(card)
			m := regexp.MustCompile(`(approved|cancelled) by ([a-z]+)`).FindStringSubmatch(view)
			if m == nil {
				for _, r := range reps {
					for _, l := range strings.Split(r.stderr(), "\n") {
						if strings.Contains(l, id) {
							t.Logf("%s: %s", r.name, l)
						}
					}
				}
				t.Fatalf("round %d: the card names no decision:\n%s", round, view)
			}
			state, winner := m[1], m[2]
			if n := len(cards(e.fake, thread)); n != 1 {
				t.Errorf("round %d: %d cards in the thread, want 1", round, n)
			}
			got := answered()
			var silent []int
			for i := range clicks {
				n, ok := got[i]
				if !ok {
					silent = append(silent, i)
					continue
				}
				if !strings.Contains(n.Text, "by "+winner) {
					t.Errorf("round %d: a losing click was told %q, not who won (%s)", round, n.Text, winner)
				}
			}
			if len(silent) != 1 {
				t.Fatalf("round %d: %d clicks were not answered, want exactly one winner: %v", round, len(silent), silent)
			}
			w := silent[0]
			if clickers[w%len(clickers)].Name != winner || (w%2 == 0) != (state == "approved") {
				t.Errorf("round %d: the silent click %d is not the winner the card shows (%s by %s)", round, w, state, winner)
			}
			runs := e.runs(token)
			switch {
			case state == "approved" && runs == 1:
				approved++
			case state == "cancelled" && runs == 0:
				cancelled++
			default:
				doubleRuns += max(runs-1, 0)
				t.Errorf("round %d: %s, ran %d times", round, state, runs)
			}
			if r := e.model.resumed(token); len(r) != 1 {
				t.Errorf("round %d: the turn was resumed %d times, want once", round, len(r))
			}
		}
		took := time.Since(start)
		figures.set(t, "concurrent clicks", fmt.Sprintf("%d rounds x %d clicks in %s: %d approved (ran once), %d cancelled (never ran), double runs %d, envelopes per socket %v",
			rounds, clicks, took.Round(time.Millisecond), approved, cancelled, doubleRuns, perConn))
		if len(perConn) != 2 {
			t.Errorf("the clicks went to sockets %v, want both replicas", perConn)
		}
	})

	t.Run("kill -9 of A", func(t *testing.T) {
		const pending = 100
		ttl := 12 * time.Second
		e := newReplicaEnv(t, bin, redis, 3, ttl)
		a, b := e.start("A"), e.start("B")
		type asked struct {
			token, thread string
			card          slacktest.Message
			expires       time.Time
		}
		var all []asked
		for i := range pending {
			token := fmt.Sprintf("p%03d", i)
			thread, card := e.ask(a, "append", token)
			all = append(all, asked{token: token, thread: thread, card: card, expires: cardExpiry(t, card)})
		}
		// One approved command running on A when it dies.
		slowThread, slow := e.ask(a, "append-slow", "k1")
		e.fake.Acked(t, e.click(a, bob, slow, true, approvalID(t, slow)))
		pidFile := filepath.Join(e.root, "k1.pid")
		pollUntil(t, 10*time.Second, "the slow command running", func() bool {
			_, err := os.Stat(pidFile)
			return err == nil && e.runs("k1") == 1 && strings.Contains(e.view(slow), "running")
		})
		t.Cleanup(func() { killGroup(pidFile) }) // kill -9 leaves the command's own process group behind
		if time.Now().After(all[0].expires) {
			t.Fatalf("the cards expired before the kill: making %d took longer than their %s", pending, ttl)
		}

		if err := a.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		<-a.done

		// The running call: outcome unknown on its card and to the model,
		// never run again.
		e.fake.WaitFor(t, 30*time.Second, "the running call ended as outcome unknown", func() bool {
			return strings.Contains(e.view(slow), "failed")
		})
		recovered := time.Since(killed)
		// The card says what is known: when it started, when it was
		// recorded as lost, and that the outcome is unknown; never the
		// time until recovery as if it were the run time.
		v := e.view(slow)
		if !strings.Contains(v, "outcome is unknown") || !regexp.MustCompile(`started \d\d:\d\d:\d\d UTC, recorded \d\d:\d\d:\d\d UTC`).MatchString(v) ||
			!strings.Contains(v, "no heartbeat for over 3s") || regexp.MustCompile(`unknown in \d`).MatchString(v) {
			t.Errorf("the recovered card does not say what is known:\n%s", v)
		}
		threadHas(t, e.fake, slowThread, "Finished k1.")
		if r := e.model.resumed("k1"); len(r) != 1 || !strings.Contains(r[0], "outcome is unknown") {
			t.Errorf("the model was told %q about the running call; want once, outcome unknown", r)
		}
		// Every card expires on time, by B, and every turn resumes once.
		e.fake.WaitFor(t, ttl+30*time.Second, fmt.Sprintf("%d cards expired and their turns resumed", pending), func() bool {
			for _, x := range all {
				if !strings.Contains(e.view(x.card), "expired") || len(e.fake.Thread(slackChannel, x.thread)) < 2 {
					return false
				}
			}
			return true
		})
		var latest time.Duration
		for _, x := range all {
			m, _ := e.fake.Message(slackChannel, x.card.TS)
			late := m.UpdatedAt.Sub(x.expires)
			latest = max(latest, late)
			if late < -time.Second || late > 3*time.Second {
				t.Errorf("card %s expired %s after its deadline, want within the sweep (250ms) and a second", x.token, late)
			}
			threadHas(t, e.fake, x.thread, "Finished "+x.token+".")
			if r := e.model.resumed(x.token); len(r) != 1 || !strings.Contains(r[0], "expired") {
				t.Errorf("turn %s was resumed %d times (%q), want once, expired", x.token, len(r), r)
			}
			if n := e.runs(x.token); n != 0 {
				t.Errorf("%s ran %d times", x.token, n)
			}
		}
		if n := e.runs("k1"); n != 1 {
			t.Errorf("the running call ran %d times, want once: recovery must never run it again", n)
		}
		if n := len(e.fake.Open()); n != 1 || e.fake.Open()[0] != b.conn {
			t.Errorf("open sockets %v after the kill, want only B's %d", e.fake.Open(), b.conn)
		}
		figures.set(t, "kill -9", fmt.Sprintf("%d pending cards and 1 running call; running call ended as outcome unknown %s after the kill (run_lease 3s); cards expired by B at most %s after their deadline; %d turns resumed once each; re-runs 0",
			pending, recovered.Round(100*time.Millisecond), latest.Round(10*time.Millisecond), pending+1))
	})

	t.Run("kill -9 with queued messages", func(t *testing.T) {
		// 120 !run messages acknowledged to Slack by A and not finished
		// when A is killed: B tells every sender, none is lost silently,
		// none is run again blind.
		const queued = 120
		const command = "sleep 33.25"
		e := newReplicaEnv(t, bin, redis, 6, 5*time.Minute)
		a, b := e.start("A"), e.start("B")
		for range queued {
			e.toward(a)
			e.fake.MentionOnce(alice, slackChannel, "", "!run "+command)
		}
		e.fake.Wait(t, "every message acknowledged", func() bool {
			envs := e.fake.Envelopes()
			acked := 0
			for _, env := range envs {
				if !env.AckedAt.IsZero() {
					acked++
				}
			}
			return acked == len(envs)
		})
		// Killed at the instant of the last acknowledgement: Slack's
		// adapter acknowledges an envelope once the bot has recorded it
		// (Event.Recorded), so nothing acknowledged is unrecorded.
		if err := a.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		rc := goredis.NewClient(mustRedisOptions(t, e.redis.url(e.db)))
		t.Cleanup(func() { _ = rc.Close() })
		inInbox, _ := rc.HLen(t.Context(), "cs:{inbox}:e").Result()
		<-a.done
		told := func() int {
			n := 0
			for _, x := range e.fake.Ephemerals(alice.ID) {
				if strings.Contains(x.Text, "I stopped") && strings.Contains(x.Text, command) {
					n++
				}
			}
			return n
		}
		if !testenv.Within(60*time.Second-time.Since(killed), func() bool { return told() >= queued }) {
			n, _ := rc.HLen(t.Context(), "cs:{inbox}:e").Result()
			t.Fatalf("after 60s alice was told of %d of %d messages; %d left in the inbox; B's log ends:\n%s", told(), queued, n, lastLines(b.stderr(), 30))
		}
		took := time.Since(killed)
		orphans := killCommands(command)
		if n := told(); n != queued {
			t.Errorf("alice was told of %d messages, want %d", n, queued)
		}
		for _, m := range e.fake.Messages(slackChannel) {
			if strings.Contains(m.Text, "exit code 0") && strings.Contains(m.Text, command) {
				t.Errorf("a message of the killed replica was run again: %q", m.Text)
			}
		}
		if inInbox != queued {
			t.Errorf("%d of %d acknowledged messages were in the inbox at the kill, want all", inInbox, queued)
		}
		figures.set(t, "kill -9 with queued messages", fmt.Sprintf("%d !run messages acknowledged and not finished, killed at the last acknowledgement with %d in the inbox; %d senders told by B within %s of the kill (inbox_lease 2s); lost silently %d; run again 0; commands of A still running after the kill %d (killed by the test)",
			queued, inInbox, told(), took.Round(100*time.Millisecond), queued-told(), orphans))
	})

	t.Run("429 storm on cards", func(t *testing.T) { stormOnCards(t, bin, redis, &figures) })
	t.Run("forced quit during an approved sleep", func(t *testing.T) { forcedQuit(t, bin, redis, &figures) })

	t.Run("Redis restarted, then unreachable; SIGTERM and start", func(t *testing.T) {
		e := newReplicaEnv(t, bin, redis, 4, 5*time.Minute)
		a, b := e.start("A"), e.start("B")
		type asked struct {
			token, thread string
			card          slacktest.Message
			id            string
		}
		var q []asked
		for i, r := range []*replica{a, b, a, b} {
			token := fmt.Sprintf("q%d", i+1)
			thread, card := e.ask(r, "append", token)
			q = append(q, asked{token, thread, card, approvalID(t, card)})
		}
		// Restarted (SIGTERM, append-only file): every card is still there,
		// and its buttons work on either replica.
		redis.stop()
		redis.start()
		for i, x := range q[:2] {
			r := []*replica{b, a}[i]
			e.fake.Acked(t, e.click(r, bob, x.card, true, x.id))
			threadHas(t, e.fake, x.thread, "Finished "+x.token+".")
			if n := e.runs(x.token); n != 1 {
				t.Errorf("%s ran %d times after the restart, want once", x.token, n)
			}
		}
		// Unreachable: every click is refused with a notice, and nothing runs.
		redis.stop()
		refused := 0
		for _, c := range []struct {
			r       *replica
			u       slacktest.User
			approve bool
		}{{a, bob, true}, {b, carol, true}, {a, dave, false}, {b, erin, false}} {
			n := e.noticeTo(c.u, e.click(c.r, c.u, q[2].card, c.approve, q[2].id))
			if !strings.Contains(n, "try again") || !strings.Contains(n, "nothing changed") {
				t.Errorf("a click on %s while Redis was down was told %q; want a refusal that says to try again", c.r.name, n)
				continue
			}
			refused++
		}
		if v := e.view(q[2].card); !strings.Contains(v, "waiting for a decision") || e.runs(q[2].token) != 0 {
			t.Errorf("clicks refused while Redis was down changed the card or ran it (%d runs):\n%s", e.runs(q[2].token), v)
		}
		// Back: the same card works.
		redis.start()
		e.fake.Acked(t, e.click(b, dave, q[2].card, true, q[2].id))
		threadHas(t, e.fake, q[2].thread, "Finished q3.")
		if n := e.runs("q3"); n != 1 {
			t.Errorf("q3 ran %d times once Redis was back, want once", n)
		}

		// SIGTERM both, start two new ones: they say what they found, and
		// the last card's buttons work.
		for _, r := range []*replica{a, b} {
			e.stop(r)
			if r.err != nil {
				t.Errorf("%s exited with %v after SIGTERM, want 0:\n%s", r.name, r.err, r.stderr())
			}
		}
		a2, b2 := e.start("A2"), e.start("B2")
		for _, r := range []*replica{a2, b2} {
			pollUntil(t, 10*time.Second, r.name+" saying what it found", func() bool {
				return strings.Contains(r.stderr(), "found 1 pending approval in Redis")
			})
		}
		e.fake.Acked(t, e.click(a2, erin, q[3].card, true, q[3].id))
		threadHas(t, e.fake, q[3].thread, "Finished q4.")
		for _, x := range q {
			if n, r := e.runs(x.token), e.model.resumed(x.token); n != 1 || len(r) != 1 {
				t.Errorf("%s ran %d times and its turn resumed %d times, want once each", x.token, n, len(r))
			}
		}
		figures.set(t, "redis", fmt.Sprintf("Redis restarted once with 4 cards pending: 4 of 4 ran once after it; clicks refused while Redis was down: %d of 4, with nothing run; replicas restarted with SIGTERM: both exited 0, the new ones found 1 pending approval and its buttons worked", refused))
	})
}

// cardExpiry reads a pending card's deadline off its date token.
func cardExpiry(t *testing.T, card slacktest.Message) time.Time {
	m := regexp.MustCompile(`!date\^([0-9]+)\^`).FindStringSubmatch(string(card.Blocks))
	if m == nil {
		t.Fatalf("the card shows no deadline:\n%s", card.Blocks)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return time.Unix(n, 0)
}

// killGroup kills the process group whose leader's pid is in file.
func killGroup(file string) {
	b, err := os.ReadFile(file)
	if err != nil {
		return
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 1 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

// mustRedisOptions parses a Redis URL.
func mustRedisOptions(t *testing.T, url string) *goredis.Options {
	t.Helper()
	opt, err := goredis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	return opt
}

// killCommands kills the processes whose command line holds command (a
// killed replica's commands, when nothing killed them with it) and says
// how many there were.
func killCommands(command string) int {
	want := strings.ReplaceAll(command, " ", "\x00")
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && (strings.Contains(string(b), want) || strings.Contains(string(b), command)) {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				n++
			}
		}
	}
	return n
}

func lastLines(s string, n int) string {
	l := strings.Split(s, "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}
