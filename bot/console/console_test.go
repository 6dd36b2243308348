package console_test

import (
	"context"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/terminal"
	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/auditsink"
	"github.com/countersign/countersign/approval/memstore"
	"github.com/countersign/countersign/approval/redisstore"
	"github.com/countersign/countersign/bot"
	"github.com/countersign/countersign/bot/console"
	"github.com/countersign/countersign/internal/testenv"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
	"github.com/countersign/countersign/tools/filetool"
	"github.com/countersign/countersign/tools/shelltool"
	"github.com/redis/go-redis/v9"
)

const waitLimit = 15 * time.Second

// screen is the terminal's output, read as a person would.
type screen struct {
	mu   sync.Mutex
	b    strings.Builder
	read int
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// waitFor waits until the output after what was read matches re, moves
// the reading point past it, and returns the submatches.
func (s *screen) waitFor(t testing.TB, re string) []string {
	t.Helper()
	rx := regexp.MustCompile(re)
	var m []string
	if !testenv.Within(waitLimit, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		out := s.b.String()[s.read:]
		loc := rx.FindStringSubmatchIndex(out)
		if loc == nil {
			return false
		}
		m = make([]string, len(loc)/2)
		for i := range m {
			if loc[2*i] >= 0 {
				m[i] = out[loc[2*i]:loc[2*i+1]]
			}
		}
		s.read += loc[1]
		return true
	}) {
		s.mu.Lock()
		out := s.b.String()[s.read:]
		s.mu.Unlock()
		t.Fatalf("no output matching %q within %s; the screen after the last match:\n%s", re, waitLimit, out)
	}
	return m
}

// clock is the console's settable clock.
type clock struct {
	mu sync.Mutex
	d  time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.d)
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.d += d
}

// world is a bot on the terminal, with real tools in a folder, the
// in-memory store, and the console served over HTTP.
type world struct {
	dir    string
	in     *io.PipeWriter
	screen *screen
	store  approval.Store
	mem    *memstore.Store // the store, when in memory
	clock  *clock
	srv    *httptest.Server
	// trail: the requests served, and the browsers' words (TestInChromium).
	trail *trail
	con   *console.Server
}

func newWorld(t testing.TB, botCfg bot.Config, files ...string) *world {
	t.Helper()
	mem := memstore.New(memstore.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { _ = mem.Close() })
	w := newReplica(t, botCfg, mem, "", t.TempDir(), files...)
	w.mem = mem
	return w
}

// newReplica is a world on store, in dir, whose console signs with the
// key in the variable CONSOLE_KEY when key is set.
func newReplica(t testing.TB, botCfg bot.Config, store approval.Store, key, dir string, files ...string) *world {
	t.Helper()
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sh, err := shelltool.New(shelltool.Config{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	ft, err := filetool.New(filetool.Config{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ft.Close() })
	reg, err := tools.NewRegistry(sh, ft)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := risk.New(risk.Config{})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	w := &world{dir: dir, screen: &screen{}, clock: &clock{}, store: store, trail: &trail{}}
	cc := console.Config{}
	if key != "" {
		cc.SecretEnv = "CONSOLE_KEY"
	}

	// The console's address is known before the bot, which names it in
	// its sign-in links.
	w.srv = httptest.NewUnstartedServer(nil)
	cc.Listen = w.srv.Listener.Addr().String()
	w.con, err = console.New(cc, console.Deps{
		Store: w.store, Audit: auditsink.Stream(w.store, 0), Now: w.clock.Now, Log: log,
		Getenv: func(string) string { return key },
	})
	if err != nil {
		t.Fatalf("console.New: %v", err)
	}
	r, in := io.Pipe()
	w.in = in
	term := terminal.New(r, w.screen, terminal.Options{User: "alice", Color: "never"})
	botCfg.SweepInterval = 100 * time.Millisecond
	b, err := bot.New(botCfg, []adapters.Adapter{term}, agent.Config{}, bot.Deps{
		Tools: reg, Policy: pol, Store: w.store, Log: log, Login: w.con.Login,
	})
	if err != nil {
		t.Fatalf("bot.New: %v", err)
	}
	w.srv.Config.Handler = w.trail.serve(w.con.Handler(b))
	w.srv.Start()
	t.Cleanup(w.srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	t.Cleanup(func() {
		if t.Failed() || testing.Verbose() {
			t.Logf("the terminal showed:\n%s", w.screen.b.String())
		}
		cancel()
		_ = in.Close()
		select {
		case <-done:
		case <-time.After(waitLimit):
			t.Error("the bot did not stop")
		}
	})
	return w
}

// say types lines into the terminal.
func (w *world) say(t testing.TB, lines ...string) {
	t.Helper()
	if _, err := io.WriteString(w.in, strings.Join(lines, "\n")+"\n"); err != nil {
		t.Fatalf("type %q: %v", lines, err)
	}
}

func (w *world) exists(name string) bool {
	_, err := os.Stat(filepath.Join(w.dir, name))
	return err == nil
}

// cardRE finds a pending card's id in the words it tells you to type.
const cardRE = `type: approve ([a-z2-7]{26})`

// linkRE finds a sign-in link in a private notice.
const linkRE = `(http://[^ \n]+/login\?t=[A-Za-z0-9_.-]+)`

// browser is one person's browser: a cookie jar, no redirects followed
// unless asked.
type browser struct {
	c *http.Client
}

func newBrowser(t testing.TB) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{c: &http.Client{Jar: jar, Timeout: waitLimit}}
}

// get fetches u and returns the status and the body.
func (b *browser) get(t testing.TB, u string) (int, string) {
	t.Helper()
	resp, err := b.c.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	return read(t, resp)
}

func (b *browser) post(t testing.TB, u string, form url.Values) (int, string) {
	t.Helper()
	resp, err := b.c.PostForm(u, form)
	if err != nil {
		t.Fatalf("POST %s: %v", u, err)
	}
	return read(t, resp)
}

func read(t testing.TB, resp *http.Response) (int, string) {
	t.Helper()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, html.UnescapeString(string(body))
}

var (
	tokenRE = regexp.MustCompile(`name="t" value="([^"]+)"`)
	csrfRE  = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
)

// signIn types !login as user in the terminal, opens the link, and signs
// in; it returns the pending page.
func (w *world) signIn(t testing.TB, b *browser, user string) string {
	t.Helper()
	w.say(t, "/as "+user, "!login")
	link := w.screen.waitFor(t, `\(to `+user+` only\) Your sign-in link for the web console[^\n]*?`+linkRE)[1]
	return b.spend(t, link)
}

// spend opens a sign-in link and presses its Sign in.
func (b *browser) spend(t testing.TB, link string) string {
	t.Helper()
	status, body := b.get(t, link)
	m := tokenRE.FindStringSubmatch(body)
	if status != http.StatusOK || m == nil {
		t.Fatalf("the sign-in page: %d\n%s", status, body)
	}
	u, _ := url.Parse(link)
	u.RawQuery = ""
	status, body = b.post(t, u.String(), url.Values{"t": {m[1]}})
	if status != http.StatusOK {
		t.Fatalf("signing in: %d\n%s", status, body)
	}
	return body
}

func csrfOf(t testing.TB, page string) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token on the page:\n%s", page)
	}
	return m[1]
}

// TestApproveInTheBrowser is the walk-through over HTTP: a card for
// rm -rf ./tmp_* asked in the terminal; the requester signs in, sees it,
// and her Approve is refused by the bot's one check; a second person signs
// in with !login, approves, and the terminal shows the run; the history
// shows the whole story.
func TestApproveInTheBrowser(t *testing.T) {
	w := newWorld(t, bot.Config{}, "tmp_a", "tmp_b", "keep.txt")
	w.say(t, "!run rm -rf ./tmp_*")
	id := w.screen.waitFor(t, `(?s)rm -rf \./tmp_\*.*`+cardRE)[1]

	alice := newBrowser(t)
	page := w.signIn(t, alice, "alice")
	for _, want := range []string{"rm -rf ./tmp_*", id, "tmp_a", "tmp_b", "alice · terminal"} {
		if !strings.Contains(page, want) {
			t.Errorf("alice's pending page lacks %q:\n%s", want, page)
		}
	}
	_, body := alice.post(t, w.srv.URL+"/decide", url.Values{"csrf": {csrfOf(t, page)}, "id": {id}, "action": {"approve"}})
	if !strings.Contains(body, "You cannot approve "+id+": You asked for this call") {
		t.Errorf("the requester's approval in the browser: want the bot's refusal, got:\n%s", body)
	}
	if !w.exists("tmp_a") {
		t.Fatal("the requester's own approval ran the command")
	}

	bob := newBrowser(t)
	page = w.signIn(t, bob, "bob")
	if !strings.Contains(page, "rm -rf ./tmp_*") {
		t.Fatalf("bob's pending page lacks the card:\n%s", page)
	}
	_, body = bob.post(t, w.srv.URL+"/decide", url.Values{"csrf": {csrfOf(t, page)}, "id": {id}, "action": {"approve"}})
	w.screen.waitFor(t, `approved by bob at .* · done: exit code 0`)
	if w.exists("tmp_a") || w.exists("tmp_b") || !w.exists("keep.txt") {
		t.Errorf("after bob's approval: tmp_a %v, tmp_b %v, keep.txt %v; want only keep.txt", w.exists("tmp_a"), w.exists("tmp_b"), w.exists("keep.txt"))
	}
	if !strings.Contains(body, "Approval "+id) {
		t.Errorf("the answer to bob's approval:\n%s", body)
	}
	_, page = bob.get(t, w.srv.URL+"/")
	if strings.Contains(page, id) {
		t.Errorf("the decided card is still listed:\n%s", page)
	}

	_, story := bob.get(t, w.srv.URL+"/approval/"+id)
	for _, want := range []string{"assessment", "card", "refused_click", "click", "execution", "approve"} {
		if !strings.Contains(story, ">"+want+"<") {
			t.Errorf("the story of %s lacks %q:\n%s", id, want, story)
		}
	}
	_, ins := bob.get(t, w.srv.URL+"/insights")
	if !strings.Contains(ins, "1 cards asked, 0 expired") || !strings.Contains(ins, "<td>bob</td><td>1</td>") {
		t.Errorf("the insights after one approval by bob:\n%s", ins)
	}
	_, hist := bob.get(t, w.srv.URL+"/history?decision=approve&person=bob")
	if !strings.Contains(hist, id) || strings.Contains(hist, "refused_click") {
		t.Errorf("history filtered to bob's approvals:\n%s", hist)
	}
}

// TestRefusals: each bad request is refused with a page that says why,
// and nothing is decided.
func TestRefusals(t *testing.T) {
	w := newWorld(t, bot.Config{}, "tmp_a")
	w.say(t, "!run rm -rf ./tmp_*")
	id := w.screen.waitFor(t, cardRE)[1]

	bob := newBrowser(t)
	w.say(t, "/as bob", "!login")
	link := w.screen.waitFor(t, linkRE)[1]
	page := bob.spend(t, link)
	csrf := csrfOf(t, page)

	w.say(t, "/as carol", "!login")
	late := w.screen.waitFor(t, linkRE)[1]

	cases := []struct {
		name   string
		do     func(t *testing.T) (int, string)
		status int
		want   string
	}{
		{"a used link", func(t *testing.T) (int, string) {
			_, body := newBrowser(t).get(t, link)
			tok := tokenRE.FindStringSubmatch(body)[1]
			return newBrowser(t).post(t, w.srv.URL+"/login", url.Values{"t": {tok}})
		}, http.StatusUnauthorized, "it was used already"},
		{"an expired link", func(t *testing.T) (int, string) {
			w.clock.Advance(6 * time.Minute)
			defer w.clock.Advance(-6 * time.Minute)
			return newBrowser(t).get(t, late)
		}, http.StatusUnauthorized, "it has expired"},
		{"a forged link", func(t *testing.T) (int, string) {
			return newBrowser(t).get(t, strings.Replace(late, "t=", "t=x", 1))
		}, http.StatusUnauthorized, "not signed by this console"},
		{"a forged cookie", func(t *testing.T) (int, string) {
			f := newBrowser(t)
			u, _ := url.Parse(w.srv.URL)
			f.c.Jar.SetCookies(u, []*http.Cookie{{Name: "countersign_session", Value: "eyJrIjoic2Vzc2lvbiJ9.AAAA"}})
			return f.post(t, w.srv.URL+"/decide", url.Values{"csrf": {csrf}, "id": {id}, "action": {"approve"}})
		}, http.StatusUnauthorized, "not signed by this console"},
		{"no session", func(t *testing.T) (int, string) {
			return newBrowser(t).post(t, w.srv.URL+"/decide", url.Values{"id": {id}, "action": {"approve"}})
		}, http.StatusUnauthorized, "to the bot in the chat"},
		{"a missing CSRF token", func(t *testing.T) (int, string) {
			return bob.post(t, w.srv.URL+"/decide", url.Values{"id": {id}, "action": {"approve"}})
		}, http.StatusForbidden, "CSRF token"},
		{"a wrong CSRF token", func(t *testing.T) (int, string) {
			return bob.post(t, w.srv.URL+"/decide", url.Values{"csrf": {csrf + "x"}, "id": {id}, "action": {"approve"}})
		}, http.StatusForbidden, "CSRF token"},
		{"a form of another site", func(t *testing.T) (int, string) {
			req, _ := http.NewRequest(http.MethodPost, w.srv.URL+"/decide", strings.NewReader(url.Values{"csrf": {csrf}, "id": {id}, "action": {"approve"}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", "https://evil.example")
			resp, err := bob.c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			return read(t, resp)
		}, http.StatusForbidden, "a page of another site"},
		{"an expired session", func(t *testing.T) (int, string) {
			w.clock.Advance(console.DefaultSession + time.Minute)
			defer w.clock.Advance(-console.DefaultSession - time.Minute)
			return bob.get(t, w.srv.URL+"/")
		}, http.StatusUnauthorized, "it has expired"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := c.do(t)
			if status != c.status || !strings.Contains(body, c.want) {
				t.Errorf("got %d, want %d with %q:\n%s", status, c.status, c.want, body)
			}
		})
	}
	a, err := w.store.Get(context.Background(), id)
	if err != nil || a.State != approval.Pending || !w.exists("tmp_a") {
		t.Errorf("after the refusals: %v %v, tmp_a there %v; want it pending and nothing run", a, err, w.exists("tmp_a"))
	}
}

// TestDecisionsThroughTheOneCheck: cancel with a reason where a rule
// wants one, and a person not among the approvers, each decided by the
// bot's own check.
func TestDecisionsThroughTheOneCheck(t *testing.T) {
	no := false
	cfg := bot.Config{Default: bot.Policy{Approvers: []string{"bob", "alice"}, RequireSecondPerson: &no}}
	w := newWorld(t, cfg, "tmp_a")
	w.say(t, "!run rm -rf ./tmp_*")
	id := w.screen.waitFor(t, cardRE)[1]

	mallory := newBrowser(t)
	page := w.signIn(t, mallory, "mallory")
	if strings.Contains(page, id) {
		t.Errorf("mallory, no approver, sees the card:\n%s", page)
	}
	_, body := mallory.post(t, w.srv.URL+"/decide", url.Values{"csrf": {csrfOf(t, page)}, "id": {id}, "action": {"approve"}})
	if !strings.Contains(body, "You cannot approve "+id) {
		t.Errorf("a decision by someone not allowed:\n%s", body)
	}

	bob := newBrowser(t)
	page = w.signIn(t, bob, "bob")
	_, body = bob.post(t, w.srv.URL+"/decide", url.Values{"csrf": {csrfOf(t, page)}, "id": {id}, "action": {"cancel"}, "reason": {"not today"}})
	if !strings.Contains(body, "is now cancelled") {
		t.Errorf("bob's cancel:\n%s", body)
	}
	w.screen.waitFor(t, `cancelled by bob`)
	if !w.exists("tmp_a") {
		t.Error("a cancelled call ran")
	}
}

// TestStoreDown: the store down shows a banner and decides nothing.
func TestStoreDown(t *testing.T) {
	w := newWorld(t, bot.Config{}, "tmp_a")
	w.say(t, "!run rm -rf ./tmp_*")
	id := w.screen.waitFor(t, cardRE)[1]
	bob := newBrowser(t)
	page := w.signIn(t, bob, "bob")
	_ = w.mem.Close()
	status, body := bob.get(t, w.srv.URL+"/")
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "The approval store cannot be reached") {
		t.Errorf("the pending page with the store down: %d\n%s", status, body)
	}
	status, body = bob.post(t, w.srv.URL+"/decide", url.Values{"csrf": {csrfOf(t, page)}, "id": {id}, "action": {"approve"}})
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "Nothing changed") {
		t.Errorf("a decision with the store down: %d\n%s", status, body)
	}
	if !w.exists("tmp_a") {
		t.Error("a decision ran with the store down")
	}
}

// TestHeaders: every page carries the policy with no inline script, and
// the session cookie its flags.
func TestHeaders(t *testing.T) {
	w := newWorld(t, bot.Config{})
	w.say(t, "/as bob", "!login")
	link := w.screen.waitFor(t, linkRE)[1]
	b := newBrowser(t)
	b.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	_, body := b.get(t, link)
	u, _ := url.Parse(link)
	u.RawQuery = ""
	resp, err := b.c.PostForm(u.String(), url.Values{"t": {tokenRE.FindStringSubmatch(body)[1]}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Content-Security-Policy"); !strings.Contains(got, "default-src 'self'") || strings.Contains(got, "unsafe-inline") {
		t.Errorf("CSP %q", got)
	}
	var ck *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "countersign_session" {
			ck = c
		}
	}
	if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Secure {
		t.Errorf("session cookie %+v: want HttpOnly, SameSite=Strict, not Secure on http loopback", ck)
	}
	if strings.Contains(body, "<script>") {
		t.Error("a page has an inline script")
	}
}

func TestConfig(t *testing.T) {
	cases := []struct {
		name string
		cfg  console.Config
		want string // "" ok, else part of the error
	}{
		{"loopback alone", console.Config{Listen: "127.0.0.1:8791"}, ""},
		{"https url", console.Config{Listen: "0.0.0.0:8791", URL: "https://cs.example.com"}, ""},
		{"no url off loopback", console.Config{Listen: "0.0.0.0:8791"}, "console.url is not set"},
		{"plain http off loopback", console.Config{Listen: "0.0.0.0:8791", URL: "http://cs.example.com"}, "plain http is only for a loopback"},
		{"bad listen", console.Config{Listen: "8791"}, "want host:port"},
		{"short session", console.Config{Listen: "127.0.0.1:1", Session: time.Second}, "at least 1m"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.cfg.WithDefaults()
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("WithDefaults() = %v, want %q", err, c.want)
			}
		})
	}
}

// TestLiveAndEdit: a live page hears of a new card asked anywhere, and an
// edit in the browser asks for the edited call as a new card, judged
// afresh.
func TestLiveAndEdit(t *testing.T) {
	w := newWorld(t, bot.Config{}, "tmp_a", "tmp_b")
	w.say(t, "!run rm -rf ./tmp_*")
	id := w.screen.waitFor(t, cardRE)[1]
	bob := newBrowser(t)
	page := w.signIn(t, bob, "bob")

	next := bob.events(t, w.srv.URL+"/events")
	waitEvent := func(want string) {
		t.Helper()
		for s := next(); !strings.Contains(s, want); s = next() {
			t.Logf("on the event stream, before %q: %q", want, s)
		}
	}
	// A stream that names no list it draws hears of the cards at once.
	waitEvent("data: 1\n")

	_, body := bob.post(t, w.srv.URL+"/edit", url.Values{"csrf": {csrfOf(t, page)}, "id": {id}, "operation": {"rm -rf ./tmp_a"}})
	if strings.Contains(body, "refused") {
		t.Errorf("the edit:\n%s", body)
	}
	w.screen.waitFor(t, `(?s)asked by bob.*rm -rf \./tmp_a\n.*`+cardRE)
	waitEvent("event: cards\n")
	_, cards := bob.get(t, w.srv.URL+"/cards")
	if !strings.Contains(cards, "rm -rf ./tmp_a") || strings.Contains(cards, "rm -rf ./tmp_*") {
		t.Errorf("the cards after the edit:\n%s", cards)
	}
	if !w.exists("tmp_a") {
		t.Error("an edit ran the call")
	}
}

// events opens the event stream at u and returns the func that gives
// what the stream sends next, failing the test when nothing comes within
// waitLimit.
func (b *browser) events(t testing.TB, u string) (next func() string) {
	t.Helper()
	resp, err := b.c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("events Content-Type %q", ct)
	}
	chunks := make(chan string, 64)
	go func() {
		defer close(chunks)
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				chunks <- string(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	return func() string {
		t.Helper()
		select {
		case s, ok := <-chunks:
			if !ok {
				t.Fatal("the event stream ended")
			}
			return s
		case <-time.After(waitLimit):
			t.Fatalf("nothing on the event stream within %s", waitLimit)
		}
		return ""
	}
}

// TestLiveFromWhatThePageShows: a live page's stream speaks first of a
// change to the cards the page drew, not of the cards it already shows.
// A stream that began by naming the drawn cards had the page fetch and
// redraw them just after it loaded, replacing the card a person (or
// TestInChromium, "No node with given id found") was about to read or
// click.
func TestLiveFromWhatThePageShows(t *testing.T) {
	w := newWorld(t, bot.Config{}, "tmp_a", "tmp_b")
	w.say(t, "!run rm -rf ./tmp_a")
	w.screen.waitFor(t, cardRE)
	bob := newBrowser(t)
	page := w.signIn(t, bob, "bob")
	m := regexp.MustCompile(`data-seen="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the pending page marks no list it draws:\n%s", page)
	}
	next := bob.events(t, w.srv.URL+"/events?seen="+url.QueryEscape(m[1]))
	w.say(t, "/as alice", "!run rm -rf ./tmp_b")
	w.screen.waitFor(t, cardRE)
	if first := next(); !strings.Contains(first, "event: cards\n") || !strings.Contains(first, "data: 2\n") {
		t.Errorf("the first event after a second card was asked: want the two cards, got:\n%s", first)
	}
}

// TestAcrossReplicas: two replicas on one Redis, their consoles sharing a
// key. A card asked on one is listed by the other's console; a link made
// by one is spent on the other, and once only; the decision made there
// runs the call.
func TestAcrossReplicas(t *testing.T) {
	opt, err := redis.ParseURL(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	prefix := "cs-console-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	newStore := func() approval.Store {
		c := redis.NewClient(opt)
		t.Cleanup(func() { _ = c.Close() })
		return redisstore.New(c, redisstore.Options{Prefix: prefix, Logger: quiet})
	}
	key := strings.Repeat("k", 40)
	dir := t.TempDir()
	a := newReplica(t, bot.Config{}, newStore(), key, dir, "tmp_a", "keep.txt")
	b := newReplica(t, bot.Config{}, newStore(), key, dir)

	a.say(t, "!run rm -rf ./tmp_*")
	id := a.screen.waitFor(t, cardRE)[1]
	a.say(t, "/as bob", "!login")
	link := a.screen.waitFor(t, linkRE)[1]
	onB := strings.Replace(link, a.srv.URL, b.srv.URL, 1)

	bob := newBrowser(t)
	page := bob.spend(t, onB)
	if !strings.Contains(page, id) || !strings.Contains(page, "rm -rf ./tmp_*") {
		t.Fatalf("replica b's console does not list the card asked on a:\n%s", page)
	}
	// The same link on replica a: spent already, across replicas.
	_, body := newBrowser(t).get(t, link)
	status, body := newBrowser(t).post(t, a.srv.URL+"/login", url.Values{"t": {tokenRE.FindStringSubmatch(body)[1]}})
	if status != http.StatusUnauthorized || !strings.Contains(body, "used already") {
		t.Errorf("a link spent on b, again on a: %d\n%s", status, body)
	}

	bob.post(t, b.srv.URL+"/decide", url.Values{"csrf": {csrfOf(t, page)}, "id": {id}, "action": {"approve"}})
	testenv.Eventually(t, waitLimit, func() bool {
		ap, err := a.store.Get(context.Background(), id)
		return err == nil && ap.State == approval.Done
	}, "approval "+id+" done after bob's approval on b")
	if a.exists("tmp_a") || !a.exists("keep.txt") {
		t.Error("the approved call did not run as asked")
	}
}

// TestSignOut: after signing out, the session is gone and a page asks to
// sign in again.
func TestSignOut(t *testing.T) {
	w := newWorld(t, bot.Config{})
	bob := newBrowser(t)
	page := w.signIn(t, bob, "bob")
	status, body := bob.post(t, w.srv.URL+"/logout", url.Values{"csrf": {csrfOf(t, page)}})
	if status != http.StatusOK || !strings.Contains(body, "You are signed out") {
		t.Fatalf("sign-out: %d\n%s", status, body)
	}
	status, body = bob.get(t, w.srv.URL+"/")
	if status != http.StatusUnauthorized || !strings.Contains(body, "to the bot in the chat") {
		t.Errorf("after sign-out: %d\n%s", status, body)
	}
}
