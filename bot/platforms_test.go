package bot_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
	"github.com/countersign/countersign/adapters/terminal"
	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/agent/llm"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/memstore"
	"github.com/countersign/countersign/approval/redisstore"
	"github.com/countersign/countersign/bot"
	"github.com/countersign/countersign/internal/testenv"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
	"github.com/countersign/countersign/tools/httptool"
	"github.com/countersign/countersign/tools/shelltool"
)

// rig is one bot process: its fake platforms, its store, a folder for the
// shell tool, and what it logs.
type rig struct {
	dir   string
	fakes map[string]*adaptertest.Fake
	store approval.Store
	log   *syncBuffer
	done  chan error
	bot   *bot.Bot
	// sweeps counts the bot's sweep rounds (bot.Observer).
	sweeps atomic.Int64
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// rigOptions shape a rig.
type rigOptions struct {
	platforms []string
	store     approval.Store
	dir       string // the shell tool's folder; a new one when empty
	files     []string
	ttl       time.Duration // agent.approval_ttl
	sweep     time.Duration // bot.sweep_interval
	model     *agenttest.Server
	extra     []tools.Tool
}

// startRig runs one bot over fake platforms named o.platforms.
func startRig(t *testing.T, o rigOptions) *rig {
	t.Helper()
	r := &rig{dir: o.dir, fakes: map[string]*adaptertest.Fake{}, store: o.store, log: &syncBuffer{}, done: make(chan error, 1)}
	if r.dir == "" {
		r.dir = t.TempDir()
	}
	for _, f := range o.files {
		if err := os.WriteFile(filepath.Join(r.dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	log := slog.New(slog.NewJSONHandler(r.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if r.store == nil {
		s := memstore.New(memstore.Options{Logger: log})
		t.Cleanup(func() { _ = s.Close() })
		r.store = s
	}
	sh, err := shelltool.New(shelltool.Config{Root: r.dir})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tools.NewRegistry(append([]tools.Tool{sh}, o.extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := risk.New(risk.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var model agent.Model
	if o.model != nil {
		m, err := llm.New(llm.Config{BaseURL: o.model.BaseURL(), APIKey: "test-key", Model: "fake-model", MaxAttempts: 1}, o.model.Client())
		if err != nil {
			t.Fatal(err)
		}
		model = m
	}
	var ads []adapters.Adapter
	for _, name := range o.platforms {
		f := adaptertest.NewFake(name)
		r.fakes[name] = f
		ads = append(ads, f)
	}
	r.bot, err = bot.New(bot.Config{SweepInterval: o.sweep}, ads, agent.Config{ApprovalTTL: o.ttl},
		bot.Deps{Model: model, Tools: reg, Policy: pol, Store: r.store, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	r.bot.Observe(bot.Observer{Swept: func() { r.sweeps.Add(1) }})
	go func() { r.done <- r.bot.Run(context.Background()) }()
	t.Cleanup(func() { r.end(t) })
	return r
}

// end ends every platform's input and waits for Run.
func (r *rig) end(t *testing.T) {
	t.Helper()
	if r.done == nil {
		return
	}
	for _, f := range r.fakes {
		f.End(t)
	}
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("Run = %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("the bot did not return at the end of input")
	}
	r.done = nil
}

// cards returns the cards a fake shows, by ref.
func cards(f *adaptertest.Fake) map[string]adapters.Card {
	refs, contents := f.Messages()
	out := map[string]adapters.Card{}
	for i, c := range contents {
		if c.Card != nil {
			out[refs[i]] = *c.Card
		}
	}
	return out
}

// onlyIn checks that every message of f went to channel.
func onlyIn(t *testing.T, f *adaptertest.Fake, channel string) {
	t.Helper()
	refs, contents := f.Messages()
	for i, ref := range refs {
		if !strings.HasPrefix(ref, channel+"/") {
			t.Errorf("%s got a message in %s, which is not its conversation: %s", f.Name(), ref, adaptertest.Flatten(contents[i]))
		}
	}
}

// waitState waits until the one card of f is in state.
func waitState(t *testing.T, f *adaptertest.Fake, state string) (string, adapters.Card) {
	t.Helper()
	var ref string
	var c adapters.Card
	waitFor(t, f.Name()+" card "+state, func() bool {
		for r, cd := range cards(f) {
			if cd.State == state {
				ref, c = r, cd
				return true
			}
		}
		return false
	})
	return ref, c
}

// TestTwoPlatformsInOneProcess: one bot serves two platforms; each card,
// expiry and reply reaches the platform and channel it belongs to, and the
// other platform sees nothing of it.
func TestTwoPlatformsInOneProcess(t *testing.T) {
	r := startRig(t, rigOptions{platforms: []string{"slack", "discord"}, files: []string{"tmp_a", "tmp_b"},
		ttl: 300 * time.Millisecond, sweep: 100 * time.Millisecond})
	slack, discord := r.fakes["slack"], r.fakes["discord"]
	slack.Say(t, adaptertest.Alice, adapters.Place{Channel: "C1", Thread: "T1"}, "!run rm -f ./tmp_a")
	discord.Say(t, adaptertest.Alice, adapters.Place{Channel: "D1", Thread: "T9"}, "!run rm -f ./tmp_b")
	waitState(t, slack, "expired")
	waitState(t, discord, "expired")
	waitFor(t, "both replies", func() bool {
		return strings.Contains(flattenAll(slack), "did not run") && strings.Contains(flattenAll(discord), "did not run")
	})
	r.end(t)
	onlyIn(t, slack, "C1")
	onlyIn(t, discord, "D1")
	if n, m := len(cards(slack)), len(cards(discord)); n != 1 || m != 1 {
		t.Errorf("cards: slack %d, discord %d; want one each", n, m)
	}
	for _, f := range []string{"tmp_a", "tmp_b"} {
		if _, err := os.Stat(filepath.Join(r.dir, f)); err != nil {
			t.Errorf("%s is gone: an expired call ran", f)
		}
	}
}

func flattenAll(f *adaptertest.Fake) string {
	_, contents := f.Messages()
	var b strings.Builder
	for _, c := range contents {
		b.WriteString(adaptertest.Flatten(c) + "\n")
	}
	return b.String()
}

// TestTwoProcessesTwoPlatformsOneStore: a Slack bot and a Discord bot share
// one store, as two replicas do. The Discord bot's sweeper leaves the Slack
// card alone (it once posted its expiry into the Slack channel id through
// Discord); the Slack bot expires it on Slack and its turn's reply lands
// there; and a decision on Slack resumes its turn on Slack.
func TestTwoProcessesTwoPlatformsOneStore(t *testing.T) {
	for _, st := range sharedStores() {
		t.Run(st.name, func(t *testing.T) {
			storeS, storeD := st.pair(t)
			dir := t.TempDir()
			// The Discord process sweeps often; the Slack one not at all yet.
			disc := startRig(t, rigOptions{platforms: []string{"discord"}, store: storeD, dir: dir, sweep: 100 * time.Millisecond, ttl: 200 * time.Millisecond})
			sl := startRig(t, rigOptions{platforms: []string{"slack"}, store: storeS, dir: dir, files: []string{"tmp_a", "tmp_b"}, sweep: time.Hour, ttl: 200 * time.Millisecond})
			place := adapters.Place{Channel: "C1", Thread: "T1"}
			sl.fakes["slack"].Say(t, adaptertest.Alice, place, "!run rm -f ./tmp_a")
			_, c := waitState(t, sl.fakes["slack"], "pending")

			// Ten of the Discord process's sweeps after the deadline (its
			// sweeps come every 100ms; the card's deadline is 200ms away).
			swept := disc.sweeps.Load()
			waitFor(t, "twelve sweeps of the Discord process", func() bool { return disc.sweeps.Load() >= swept+12 })
			if a, err := storeS.Get(context.Background(), c.ApprovalID); err != nil || a.State != approval.Pending {
				t.Fatalf("the Slack approval after the Discord process swept: %+v, %v; want it left pending for a Slack process", a, err)
			}
			disc.end(t)
			if refs, _ := disc.fakes["discord"].Messages(); len(refs) != 0 {
				t.Errorf("the Discord process posted %d messages for a Slack conversation", len(refs))
			}

			// A second Slack process (the first one's sweeper is asleep)
			// expires it, on Slack.
			sl2 := startRig(t, rigOptions{platforms: []string{"slack"}, store: storeS, dir: dir, sweep: 100 * time.Millisecond, ttl: 200 * time.Millisecond})
			waitFor(t, "the expiry on slack", func() bool {
				return strings.Contains(flattenAll(sl2.fakes["slack"]), "expired") && strings.Contains(flattenAll(sl2.fakes["slack"]), "did not run")
			})
			sl2.end(t)
			onlyIn(t, sl2.fakes["slack"], "C1")

			// A decision on Slack: the turn resumes on Slack.
			sl.fakes["slack"].Say(t, adaptertest.Alice, place, "!run rm -f ./tmp_b")
			var ref string
			var pend adapters.Card
			waitFor(t, "a second card", func() bool {
				for r, cd := range cards(sl.fakes["slack"]) {
					if cd.State == "pending" && cd.ApprovalID != c.ApprovalID {
						ref, pend = r, cd
						return true
					}
				}
				return false
			})
			sl.fakes["slack"].Click(t, adaptertest.Bob, place, ref, pend.Buttons[0], "")
			waitFor(t, "the run's reply on slack", func() bool { return strings.Contains(flattenAll(sl.fakes["slack"]), "`rm -f ./tmp_b` exit code 0") })
			sl.end(t)
			onlyIn(t, sl.fakes["slack"], "C1")
		})
	}
}

// sharedStores are two handles on one backend: the memory store shared,
// and two Redis clients on one prefix.
func sharedStores() []struct {
	name string
	pair func(t *testing.T) (approval.Store, approval.Store)
} {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	return []struct {
		name string
		pair func(t *testing.T) (approval.Store, approval.Store)
	}{
		{"memstore", func(t *testing.T) (approval.Store, approval.Store) {
			s := memstore.New(memstore.Options{Logger: quiet})
			t.Cleanup(func() { _ = s.Close() })
			return s, s
		}},
		{"redis", func(t *testing.T) (approval.Store, approval.Store) {
			opt, err := redis.ParseURL(testenv.RedisURL(t))
			if err != nil {
				t.Fatalf("parse Redis URL: %v", err)
			}
			prefix := "cst-plat-" + approval.NewID()
			open := func() approval.Store {
				s := redisstore.New(redis.NewClient(opt), redisstore.Options{Prefix: prefix, Logger: quiet})
				t.Cleanup(func() { _ = s.Close() })
				return s
			}
			return open(), open()
		}},
	}
}

// stalling is a store whose Get waits until its context ends while
// stalled is set, as a Redis that stopped answering does.
type stalling struct {
	approval.Store
	stalled atomic.Bool
}

func (s *stalling) Get(ctx context.Context, id string) (*approval.Approval, error) {
	if s.stalled.Load() {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return s.Store.Get(ctx, id)
}

// TestStalledStoreRefusesClicks: with the store stalled, a click is
// handed back to the platform at once (its acknowledgement cannot wait),
// is refused with a notice to try again, and nothing runs.
func TestStalledStoreRefusesClicks(t *testing.T) {
	mem := memstore.New(memstore.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { _ = mem.Close() })
	st := &stalling{Store: mem}
	r := startRig(t, rigOptions{platforms: []string{"slack"}, store: st, files: []string{"tmp_a"}})
	f := r.fakes["slack"]
	place := adapters.Place{Channel: "C1", Thread: "T1"}
	f.Say(t, adaptertest.Alice, place, "!run rm -f ./tmp_a")
	_, c := waitState(t, f, "pending")

	st.stalled.Store(true)
	click := adapters.Event{ID: "click-1", User: adaptertest.Bob, Place: place,
		Decision: &adapters.Decision{ApprovalID: c.ApprovalID, Approve: true}, Reply: "click-1"}
	start := time.Now()
	r.bot.Handler("slack").Handle(context.Background(), click)
	if took := time.Since(start); took > 100*time.Millisecond {
		t.Errorf("Handle took %s with the store stalled; the platform's acknowledgement cannot wait", took)
	}
	waitFor(t, "a notice to bob", func() bool { return len(f.Notices(adaptertest.Bob)) > 0 })
	if n := f.Notices(adaptertest.Bob)[0]; !strings.Contains(n, "nothing changed; try again") {
		t.Errorf("bob was told %q", n)
	}
	if got := f.Replies(); len(got) != 1 || got[0] != "click-1" {
		t.Errorf("the notice answered %v; want the click's own reply handle", got)
	}
	st.stalled.Store(false)
	r.end(t)
	if a, err := mem.Get(context.Background(), c.ApprovalID); err != nil || a.State != approval.Pending {
		t.Errorf("after the refused click the approval is %+v, %v; want it still pending", a, err)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "tmp_a")); err != nil {
		t.Error("tmp_a is gone: the refused click ran the command")
	}
}

// TestRateLimitedUpdates: the adapter gives up on a card's update (it
// waits out rate limits itself, until the send's deadline: see
// adapters.Sender) and then loses its message; the bot does not try the
// refused update again, posts the card again once, never more, and it ends
// showing its final state.
func TestRateLimitedUpdates(t *testing.T) {
	tests := []struct {
		name      string
		fail      func(ref string, n int) error
		wantCards int
	}{
		{"rate limited once", func(_ string, n int) error {
			if n <= 1 {
				return &adapters.RateLimitError{RetryAfter: 30 * time.Millisecond}
			}
			return nil
		}, 1},
		{"rate limited, then gone", func(ref string, n int) error {
			if strings.HasSuffix(ref, "/2") || strings.HasSuffix(ref, "/3") {
				return nil // the card posted again
			}
			if n == 1 {
				return &adapters.RateLimitError{RetryAfter: 30 * time.Millisecond}
			}
			return adapters.ErrGone
		}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := startRig(t, rigOptions{platforms: []string{"slack"}, files: []string{"tmp_a"}})
			f := r.fakes["slack"]
			place := adapters.Place{Channel: "C1", Thread: "T1"}
			// A run long enough for its card to say it runs (runningAfter):
			// that update is the one refused.
			f.Say(t, adaptertest.Alice, place, "!run sleep 0.5; rm -f ./tmp_a")
			ref, c := waitState(t, f, "pending")
			f.FailUpdates(tc.fail)
			f.Click(t, adaptertest.Bob, place, ref, c.Buttons[0], "")
			waitFor(t, "the reply", func() bool { return strings.Contains(flattenAll(f), "rm -f ./tmp_a` exit code 0") })
			r.end(t)
			all := cards(f)
			if len(all) != tc.wantCards {
				t.Errorf("%d cards posted, want %d: %v", len(all), tc.wantCards, all)
			}
			done := 0
			for _, cd := range all {
				if cd.State == "done" {
					done++
				}
			}
			if done != 1 {
				t.Errorf("%d cards show the final state, want 1: %v", done, all)
			}
		})
	}
}

// TestSecretsNeverShown: an HTTP call with an Authorization header goes
// through every path (auto-run, card, refused click, approval, late click,
// expiry); the header's value never reaches a card, a notice, a reply, the
// audit log or the log. What runs still sends it.
func TestSecretsNeverShown(t *testing.T) {
	const secret = "s3cr3t-t0ken-value"
	carol := adapters.User{ID: "carol", Name: "carol"}
	var sent atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get("Authorization") == "Bearer "+secret {
			sent.Add(1)
		}
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(target.Close)
	ht, err := httptool.New(httptool.Config{AllowCIDRs: []string{"127.0.0.0/8"}})
	if err != nil {
		t.Fatal(err)
	}
	call := func(id, method, url string) agenttest.WireToolCall {
		args, _ := json.Marshal(map[string]any{"method": method, "url": url, "headers": map[string]string{"Authorization": "Bearer " + secret, "X-Api-Key": secret}})
		return agenttest.Call(id, "http_request", string(args))
	}
	pw := strings.Replace(target.URL, "http://", "http://admin:"+secret+"@", 1)
	model := agenttest.NewServer(t,
		agenttest.Calls(call("c1", "GET", target.URL+"/health")), agenttest.Text("healthy"),
		agenttest.Calls(call("c2", "POST", pw+"/restart?token="+secret)), agenttest.Text("restarted"),
		agenttest.Calls(call("c3", "POST", target.URL+"/flush")), agenttest.Text("nobody approved the flush"),
	)
	r := startRig(t, rigOptions{platforms: []string{"slack"}, model: model, extra: []tools.Tool{ht},
		ttl: time.Second, sweep: 100 * time.Millisecond})
	f := r.fakes["slack"]
	place := adapters.Place{Channel: "C1", Thread: "T1"}

	f.Say(t, adaptertest.Alice, place, "is it healthy?")
	waitFor(t, "the auto-run answer", func() bool { return strings.Contains(flattenAll(f), "healthy") })
	f.Say(t, adaptertest.Alice, place, "restart it")
	ref, c := waitState(t, f, "pending")
	f.Click(t, adaptertest.Alice, place, ref, c.Buttons[0], "") // refused: her own call
	waitFor(t, "the refusal", func() bool { return len(f.Notices(adaptertest.Alice)) > 0 })
	f.Click(t, adaptertest.Bob, place, ref, c.Buttons[0], "")
	waitFor(t, "the answer", func() bool { return strings.Contains(flattenAll(f), "restarted") })
	f.Click(t, carol, place, ref, c.Buttons[0], "") // late
	waitFor(t, "the late notice", func() bool { return len(f.Notices(carol)) > 0 })
	f.Say(t, adaptertest.Alice, place, "flush it")
	waitFor(t, "the expiry", func() bool { return strings.Contains(flattenAll(f), "nobody approved the flush") })
	r.end(t)

	if n := sent.Load(); n != 2 {
		t.Errorf("the target got the header %d times, want 2 (the auto-run GET and the approved POST)", n)
	}
	shown := flattenAll(f) + strings.Join(f.Notices(adaptertest.Alice), "\n") + strings.Join(f.Notices(adaptertest.Bob), "\n") +
		strings.Join(f.Notices(carol), "\n")
	if strings.Contains(shown, secret) {
		t.Errorf("the chat shows the secret:\n%s", shown)
	}
	if !strings.Contains(flattenAll(f), tools.Mask) {
		t.Errorf("no card says a value is masked:\n%s", flattenAll(f))
	}
	events, err := r.store.AuditLog(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[approval.Kind]int{}
	for _, e := range events {
		kinds[e.Kind]++
		if b, _ := json.Marshal(e); strings.Contains(string(b), secret) {
			t.Errorf("the audit log holds the secret: %s", b)
		}
	}
	for _, k := range []approval.Kind{approval.KindAssessment, approval.KindCard, approval.KindRefusedClick, approval.KindClick, approval.KindExecution, approval.KindExpiry} {
		if kinds[k] == 0 {
			t.Errorf("no %s event: the test did not go through every path (%v)", k, kinds)
		}
	}
	if strings.Contains(r.log.String(), secret) {
		t.Errorf("the log holds the secret")
	}
}

// TestRestartKeepsEveryLine: a terminal session, then another (a restart)
// on the same shared store. Every line of the second is answered: the
// terminal once numbered its events t1, t2, … afresh in every process, and
// the store then took the new lines for repeats of the old ones.
func TestRestartKeepsEveryLine(t *testing.T) {
	for _, st := range sharedStores() {
		t.Run(st.name, func(t *testing.T) {
			first, second := st.pair(t)
			for i, store := range []approval.Store{first, second} {
				var out syncBuffer
				term := terminal.New(strings.NewReader("!pending\n!pending\n!pending\n"), &out, terminal.Options{User: "alice", Color: "never"})
				reg, _ := tools.NewRegistry()
				pol, _ := risk.New(risk.Config{})
				b, err := bot.New(bot.Config{}, []adapters.Adapter{term}, agent.Config{},
					bot.Deps{Tools: reg, Policy: pol, Store: store, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
				if err != nil {
					t.Fatal(err)
				}
				if err := b.Run(context.Background()); err != nil {
					t.Fatal(err)
				}
				if n := strings.Count(out.String(), "No approvals are waiting"); n != 3 {
					t.Errorf("session %d: %d of 3 lines answered:\n%s", i+1, n, out.String())
				}
			}
		})
	}
}

// TestNothingWaitsBehindTheModel: while the model hangs, the conversation
// is told the bot is working, !pending and !help answer at once, and
// !cancel stops the turn.
func TestNothingWaitsBehindTheModel(t *testing.T) {
	model := agenttest.NewServer(t, agenttest.Reply{Content: "too late", Delay: 10 * time.Second})
	r := startRig(t, rigOptions{platforms: []string{"slack"}, model: model})
	f := r.fakes["slack"]
	place := adapters.Place{Channel: "C1", Thread: "T1"}
	f.Say(t, adaptertest.Alice, place, "what is using the disk?")
	waitFor(t, "the working line", func() bool { return strings.Contains(flattenAll(f), "Working on it") })
	f.Say(t, adaptertest.Alice, place, "!pending")
	waitFor(t, "the pending list", func() bool { return strings.Contains(flattenAll(f), "No approvals are waiting") })
	if !strings.Contains(flattenAll(f), "Working on it") {
		t.Errorf("the answer to !pending took the place of the turn's working line:\n%s", flattenAll(f))
	}
	f.Say(t, adaptertest.Bob, place, "!cancel")
	waitFor(t, "the cancel", func() bool { return strings.Contains(flattenAll(f), "Cancelled the model's turn, as bob asked") })
	waitFor(t, "the working line replaced", func() bool { return !strings.Contains(flattenAll(f), "Working on it") })
	r.end(t)
	if strings.Contains(flattenAll(f), "too late") {
		t.Error("the cancelled turn still answered")
	}
	if strings.Contains(flattenAll(f), "could not finish") {
		t.Errorf("the cancelled turn was reported as a failure:\n%s", flattenAll(f))
	}
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}

// TestStopKillsTheRun: an approved command that runs too long is stopped
// from the chat with its Stop button: its whole process group dies, the
// card and the audit log say who stopped it, and the model is told it
// stopped part-way. Someone who may not stop it is refused.
func TestStopKillsTheRun(t *testing.T) {
	model := agenttest.NewServer(t,
		agenttest.Calls(agenttest.Call("c1", "execute_command", `{"command":"echo $$ > parent.pid; (echo $BASHPID > child.pid; exec sleep 30) & sleep 30","risk_level":"high"}`)),
		agenttest.Text("It was stopped."))
	r := startRig(t, rigOptions{platforms: []string{"slack"}, model: model})
	f := r.fakes["slack"]
	place := adapters.Place{Channel: "C1", Thread: "T1"}
	f.Say(t, adaptertest.Alice, place, "run the long job")
	ref, c := waitState(t, f, "pending")
	f.Click(t, adaptertest.Bob, place, ref, c.Buttons[0], "")
	_, running := waitState(t, f, "running")
	var pids []int
	waitFor(t, "both processes", func() bool {
		pids = pids[:0]
		for _, name := range []string{"parent.pid", "child.pid"} {
			b, err := os.ReadFile(filepath.Join(r.dir, name))
			n, err2 := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil || err2 != nil {
				return false
			}
			pids = append(pids, n)
		}
		return true
	})
	if len(running.Buttons) != 1 || !running.Buttons[0].Stop {
		t.Fatalf("the running card offers %+v; want a Stop button", running.Buttons)
	}
	start := time.Now()
	f.Click(t, adaptertest.Bob, place, ref, running.Buttons[0], "")
	_, failed := waitState(t, f, "failed")
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the stop took %s", took)
	}
	if !strings.Contains(failed.StateLine, "stopped by bob") {
		t.Errorf("the card says %q; want who stopped it", failed.StateLine)
	}
	waitFor(t, "the model's answer", func() bool { return strings.Contains(flattenAll(f), "It was stopped.") })
	r.end(t)
	reqs := model.Requests()
	last := reqs[len(reqs)-1].Messages
	if res := last[len(last)-1].Content; !strings.Contains(res, "may have taken effect in part") {
		t.Errorf("the model was told %s; want that the call stopped part-way", res)
	}
	for _, pid := range pids {
		waitFor(t, fmt.Sprintf("process %d to die", pid), func() bool { return !alive(pid) })
	}
	events, _ := r.store.AuditLog(context.Background(), 100)
	stops := 0
	for _, e := range events {
		if e.Kind == approval.KindStop && e.Actor == "bob" {
			stops++
		}
	}
	if stops != 1 {
		t.Errorf("%d stop events by bob in the audit log, want 1", stops)
	}
}

// TestShutdownTellsTheTurn: a shutdown with a short grace interrupts an
// approved run; its turn is told before the process ends, so the model
// answers and the thread hears of it.
func TestShutdownTellsTheTurn(t *testing.T) {
	model := agenttest.NewServer(t,
		agenttest.Calls(agenttest.Call("c1", "execute_command", `{"command":"sleep 20","risk_level":"high"}`)),
		agenttest.Text("The job was interrupted by a shutdown."))
	m, err := llm.New(llm.Config{BaseURL: model.BaseURL(), APIKey: "k", Model: "m", MaxAttempts: 1}, model.Client())
	if err != nil {
		t.Fatal(err)
	}
	sh, err := shelltool.New(shelltool.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := tools.NewRegistry(sh)
	pol, _ := risk.New(risk.Config{})
	store := memstore.New(memstore.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { _ = store.Close() })
	f := adaptertest.NewFake("slack")
	b, err := bot.New(bot.Config{ShutdownGrace: 100 * time.Millisecond}, []adapters.Adapter{f}, agent.Config{},
		bot.Deps{Model: m, Tools: reg, Policy: pol, Store: store, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	place := adapters.Place{Channel: "C1", Thread: "T1"}
	f.Say(t, adaptertest.Alice, place, "run the job")
	ref, c := waitState(t, f, "pending")
	f.Click(t, adaptertest.Bob, place, ref, c.Buttons[0], "")
	waitState(t, f, "running")
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("Run did not return after the shutdown grace")
	}
	if !strings.Contains(flattenAll(f), "The job was interrupted by a shutdown.") {
		t.Errorf("the thread never heard how the run ended:\n%s", flattenAll(f))
	}
	if n := len(model.Requests()); n != 2 {
		t.Errorf("%d model requests, want 2: the turn was not told of its interrupted run", n)
	}
}
