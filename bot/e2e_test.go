package bot_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/terminal"
	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/agent/llm"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/memstore"
	"github.com/countersign/countersign/bot"
	"github.com/countersign/countersign/internal/testenv"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
	"github.com/countersign/countersign/tools/filetool"
	"github.com/countersign/countersign/tools/shelltool"
	"github.com/countersign/countersign/tools/sqltool"
	"github.com/go-sql-driver/mysql"
)

const waitLimit = 15 * time.Second

// screen is the terminal's output, which the test reads as a person would.
type screen struct {
	mu   sync.Mutex
	b    strings.Builder
	read int // how far the test has read
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor waits until the output after what was read so far matches re,
// and moves the reading point past the match. It returns the submatches.
func (s *screen) waitFor(t *testing.T, re string) []string {
	t.Helper()
	rx := regexp.MustCompile(re)
	var m []string
	var out string
	found := testenv.Within(waitLimit, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		out = s.b.String()[s.read:]
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
	})
	if !found {
		t.Fatalf("no output matching %q within %s; the screen after the last match:\n%s", re, waitLimit, out)
	}
	return m
}

// clock is a settable clock shared by the agent, the store and the bot.
type clock = testenv.Clock

// world is one running bot on a terminal, with real tools in a folder.
type world struct {
	dir    string
	in     *io.PipeWriter
	screen *screen
	store  *memstore.Store
	bot    *bot.Bot
	clock  *clock
	done   chan error
	cancel context.CancelFunc
}

type setup struct {
	model     agent.Model
	extra     []tools.Tool
	botCfg    bot.Config
	agentCfg  agent.Config
	files     []string
	user      string
	fakeClock bool
}

func newWorld(t *testing.T, s setup) *world {
	t.Helper()
	dir := t.TempDir()
	for _, f := range s.files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sh, err := shelltool.New(shelltool.Config{Root: dir})
	if err != nil {
		t.Fatalf("shelltool: %v", err)
	}
	ft, err := filetool.New(filetool.Config{Root: dir})
	if err != nil {
		t.Fatalf("filetool: %v", err)
	}
	t.Cleanup(func() { _ = ft.Close() })
	reg, err := tools.NewRegistry(append([]tools.Tool{sh, ft}, s.extra...)...)
	if err != nil {
		t.Fatalf("registry: %v", err)
	}
	if len(s.extra) == 0 {
		// As main wires it when no database is configured.
		reg.Off(sqltool.Name, sqltool.DirectCommand, "SQL is off here: no database is configured (add a connection under tools.execute_sql.connections in the configuration).")
	}
	pol, err := risk.New(risk.Config{})
	if err != nil {
		t.Fatalf("risk policy: %v", err)
	}
	w := &world{dir: dir, screen: &screen{}, done: make(chan error, 1)}
	now := time.Now
	if s.fakeClock {
		w.clock = testenv.NewClock(time.Date(2026, 11, 22, 5, 40, 0, 0, time.UTC))
		now = w.clock.Now
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	w.store = memstore.New(memstore.Options{Logger: log, Now: now})
	t.Cleanup(func() { _ = w.store.Close() })

	r, in := io.Pipe()
	w.in = in
	user := s.user
	if user == "" {
		user = "alice"
	}
	term := terminal.New(r, w.screen, terminal.Options{User: user, Color: "never"})
	if s.botCfg.SweepInterval == 0 {
		s.botCfg.SweepInterval = 100 * time.Millisecond
	}
	w.bot, err = bot.New(s.botCfg, []adapters.Adapter{term}, s.agentCfg, bot.Deps{
		Model: s.model, Tools: reg, Policy: pol, Store: w.store, Now: now, Log: log,
	})
	if err != nil {
		t.Fatalf("bot.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go func() { w.done <- w.bot.Run(ctx) }()
	t.Cleanup(func() {
		if t.Failed() || testing.Verbose() {
			t.Logf("the terminal showed:\n%s", w.screen.String())
		}
		cancel()
		_ = in.Close()
		select {
		case <-w.done:
		case <-time.After(waitLimit):
			t.Error("the bot did not stop")
		}
	})
	return w
}

// say types lines into the terminal.
func (w *world) say(t *testing.T, lines ...string) {
	t.Helper()
	if _, err := io.WriteString(w.in, strings.Join(lines, "\n")+"\n"); err != nil {
		t.Fatalf("type %q: %v", lines, err)
	}
}

// end closes the input and waits for the bot to finish its work and return.
func (w *world) end(t *testing.T) {
	t.Helper()
	_ = w.in.Close()
	w.returned(t, "at the end of input")
}

// stop cancels the bot's context and waits for it to shut down and return.
func (w *world) stop(t *testing.T) {
	t.Helper()
	w.cancel()
	w.returned(t, "after cancel")
}

// returned waits for Run to return nil; when is the moment, for messages.
func (w *world) returned(t *testing.T, when string) {
	t.Helper()
	select {
	case err := <-w.done:
		if err != nil {
			t.Errorf("Run %s = %v, want nil", when, err)
		}
		w.done <- nil // for the cleanup
	case <-time.After(waitLimit):
		t.Fatalf("the bot did not return %s", when)
	}
}

func (w *world) exists(name string) bool {
	_, err := os.Stat(filepath.Join(w.dir, name))
	return err == nil
}

func (w *world) audit(t *testing.T, kind approval.Kind, id string) []approval.Event {
	t.Helper()
	log, err := w.store.AuditLog(context.Background(), 1000)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	var out []approval.Event
	for _, e := range log {
		if e.Kind == kind && (id == "" || e.ApprovalID == id) {
			out = append(out, e)
		}
	}
	return out
}

// cardRE finds a pending card and its id, from the words it tells you to type.
const cardRE = `type: approve ([a-z2-7]{26})`

// TestDoneWhen is issue 5's "done when", as a test: no model, a folder with
// tmp_a, tmp_b and keep.txt.
func TestDoneWhen(t *testing.T) {
	w := newWorld(t, setup{files: []string{"tmp_a", "tmp_b", "keep.txt"}})

	w.say(t, "!run ls")
	w.screen.waitFor(t, `(?s)keep\.txt.*tmp_a.*tmp_b`)

	w.say(t, "!run rm -rf ./tmp_*")
	card := w.screen.waitFor(t, `(?s)rm -rf \./tmp_\*.*tmp_a.*tmp_b.*`+cardRE)
	id := card[1]
	if !w.exists("tmp_a") || !w.exists("tmp_b") {
		t.Fatal("the files went before anyone approved")
	}

	w.say(t, "/as bob", "approve "+id)
	w.screen.waitFor(t, `approved by bob at .* · done: exit code 0`)
	w.end(t)
	if w.exists("tmp_a") || w.exists("tmp_b") {
		t.Error("tmp_a or tmp_b is still there after the approval")
	}
	if !w.exists("keep.txt") {
		t.Error("keep.txt is gone")
	}
}

// fakeModel is an OpenAI-compatible chat completions server. It plays an
// assistant that cleans up temp files and reports what happened.
type fakeModel struct {
	srv *httptest.Server

	mu      sync.Mutex
	results []toolResult // every tool result it was sent, in order
}

type toolResult struct {
	CallID string
	Status tools.Status
	Result map[string]any
}

func newFakeModel(t *testing.T) *fakeModel {
	f := &fakeModel{}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeModel) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	var req agenttest.ChatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	last := req.Messages[len(req.Messages)-1]
	var msg agenttest.WireMessage
	finish := "stop"
	switch {
	case last.Role == "user" && strings.Contains(last.Content, "clean up the temp files"):
		call := agenttest.Call("call_cleanup", "execute_command", `{"command":"rm -rf ./tmp_*","risk_level":"medium"}`)
		msg = agenttest.WireMessage{Role: "assistant", ToolCalls: []agenttest.WireToolCall{call}}
		finish = "tool_calls"
	case last.Role == "tool":
		var res map[string]any
		_ = json.Unmarshal([]byte(last.Content), &res)
		status, _ := res["status"].(string)
		f.mu.Lock()
		f.results = append(f.results, toolResult{CallID: last.ToolCallID, Status: tools.Status(status), Result: res})
		f.mu.Unlock()
		switch tools.Status(status) {
		case tools.StatusOK:
			msg = agenttest.WireMessage{Role: "assistant", Content: "Done: I removed the temp files."}
		case tools.StatusCancelled:
			msg = agenttest.WireMessage{Role: "assistant", Content: "Nothing was done: the cleanup was cancelled."}
		case tools.StatusExpired:
			msg = agenttest.WireMessage{Role: "assistant", Content: "Nothing was done: nobody approved the cleanup in time."}
		default:
			msg = agenttest.WireMessage{Role: "assistant", Content: "The cleanup ended with status " + status + "."}
		}
	default:
		msg = agenttest.WireMessage{Role: "assistant", Content: "I can clean up temp files."}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1763790000, "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]int{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	})
}

func (f *fakeModel) model(t *testing.T) agent.Model {
	t.Helper()
	m, err := llm.New(llm.Config{BaseURL: f.srv.URL + "/v1", APIKey: "test-key", Model: "fake-model", MaxAttempts: 1}, f.srv.Client())
	if err != nil {
		t.Fatalf("llm.New: %v", err)
	}
	return m
}

func (f *fakeModel) toolResults() []toolResult {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]toolResult(nil), f.results...)
}

func TestCleanUpTheTempFiles(t *testing.T) {
	fm := newFakeModel(t)
	w := newWorld(t, setup{model: fm.model(t), files: []string{"tmp_a", "tmp_b", "keep.txt"}})

	w.say(t, "clean up the temp files")
	card := w.screen.waitFor(t, `(?s)rm -rf \./tmp_\*.*tmp_a.*tmp_b.*`+cardRE)
	id := card[1]

	// The requester's own approval is refused under require_second_person
	// (the default): nothing runs, alice is told privately, and it is audited.
	w.say(t, "approve "+id)
	w.screen.waitFor(t, `\(to alice only\) You cannot approve `+id+`: You asked for this call, so your approval does not count`)
	if !w.exists("tmp_a") {
		t.Fatal("the requester's own approval ran the command")
	}
	if got := w.audit(t, "refused_click", id); len(got) != 1 || got[0].Actor != "alice" {
		t.Errorf("refused clicks audited: %+v, want one by alice", got)
	}

	w.say(t, "/as bob", "approve "+id)
	w.screen.waitFor(t, `approved by bob at .* · done: exit code 0`)
	w.screen.waitFor(t, `countersign: Done: I removed the temp files\.`)

	// A second approve of the same id does nothing.
	w.say(t, "approve "+id)
	w.screen.waitFor(t, `\(to bob only\) Approval `+id+` is already done \(by bob at`)
	w.end(t)

	if w.exists("tmp_a") || w.exists("tmp_b") || !w.exists("keep.txt") {
		t.Errorf("after the approval: tmp_a %v, tmp_b %v, keep.txt %v; want only keep.txt", w.exists("tmp_a"), w.exists("tmp_b"), w.exists("keep.txt"))
	}
	if got := fm.toolResults(); len(got) != 1 || got[0].Status != tools.StatusOK || got[0].CallID != "call_cleanup" {
		t.Errorf("the model got the tool results %+v; want one ok result for call_cleanup", got)
	}
	if got := w.audit(t, "execution", id); len(got) != 1 {
		t.Errorf("audited executions of %s: %d, want exactly 1: %+v", id, len(got), got)
	}
}

func TestCleanUpCancelled(t *testing.T) {
	fm := newFakeModel(t)
	w := newWorld(t, setup{model: fm.model(t), files: []string{"tmp_a", "tmp_b"}})

	w.say(t, "clean up the temp files")
	id := w.screen.waitFor(t, cardRE)[1]
	w.say(t, "cancel "+id+" wrong folder")
	w.screen.waitFor(t, `cancelled by alice at .*: wrong folder`)
	w.screen.waitFor(t, `countersign: Nothing was done: the cleanup was cancelled\.`)
	w.end(t)

	if !w.exists("tmp_a") || !w.exists("tmp_b") {
		t.Error("the cancelled command ran")
	}
	got := fm.toolResults()
	if len(got) != 1 || got[0].Status != tools.StatusCancelled || got[0].Result["executed"] != false {
		t.Fatalf("the model got %+v; want one cancelled, not executed result", got)
	}
	if got[0].Result["reason"] != "wrong folder" {
		t.Errorf("the cancelled result's reason = %v, want %q", got[0].Result["reason"], "wrong folder")
	}
}

func TestCleanUpExpired(t *testing.T) {
	fm := newFakeModel(t)
	w := newWorld(t, setup{model: fm.model(t), files: []string{"tmp_a"}, fakeClock: true})

	w.say(t, "clean up the temp files")
	id := w.screen.waitFor(t, cardRE)[1]
	w.clock.Advance(16 * time.Minute) // past the default 15 minutes
	w.screen.waitFor(t, `● expired at 05:5\d:\d\d UTC: nobody decided in time`)
	w.screen.waitFor(t, `countersign: Nothing was done: nobody approved the cleanup in time\.`)

	// A late approval changes nothing.
	w.say(t, "/as bob", "approve "+id)
	w.screen.waitFor(t, `\(to bob only\) Approval `+id+` is already expired`)
	w.end(t)
	clicks := w.audit(t, "click", id)
	if len(clicks) != 1 || clicks[0].Actor != "bob" || clicks[0].Outcome != approval.OutcomeLost || clicks[0].Detail != "already expired" {
		t.Errorf("the late click is audited as %+v; want bob's one lost click", clicks)
	}

	if !w.exists("tmp_a") {
		t.Error("the expired command ran")
	}
	if got := fm.toolResults(); len(got) != 1 || got[0].Status != tools.StatusExpired {
		t.Errorf("the model got %+v; want one expired result", got)
	}
}

// TestApprovalPastTheDeadline: an approval that arrives after the deadline
// but before the sweep expires the card instead, and the approver is told.
func TestApprovalPastTheDeadline(t *testing.T) {
	w := newWorld(t, setup{files: []string{"tmp_a"}, fakeClock: true, botCfg: bot.Config{SweepInterval: time.Hour}})
	w.say(t, "!run rm -rf ./tmp_*")
	id := w.screen.waitFor(t, cardRE)[1]
	w.clock.Advance(16 * time.Minute)
	w.say(t, "/as bob", "approve "+id)
	w.screen.waitFor(t, `● expired at `)
	w.screen.waitFor(t, `\(to bob only\) Approval `+id+` expired before your approval arrived, so it did not run\.`)
	w.end(t)
	if !w.exists("tmp_a") {
		t.Error("the late approval ran the command")
	}
}

func TestDecisionPolicy(t *testing.T) {
	no := false
	tests := []struct {
		name    string
		cfg     bot.Config
		as      string // who decides
		verb    string
		refusal string // the private notice, or "" when the decision goes through
	}{
		{"an approver approves", bot.Config{Default: bot.Policy{Approvers: []string{"carol"}}}, "carol", "approve", ""},
		{"a stranger cannot approve", bot.Config{Default: bot.Policy{Approvers: []string{"carol"}}}, "bob", "approve", "Only @carol may approve this."},
		{"a stranger cannot cancel", bot.Config{Default: bot.Policy{Approvers: []string{"carol"}}}, "bob", "cancel", "Only the requester or @carol may cancel this."},
		{"the requester may cancel", bot.Config{Default: bot.Policy{Approvers: []string{"carol"}}}, "alice", "cancel", ""},
		{"the requester approves when allowed", bot.Config{Channels: map[string]bot.Policy{"terminal": {RequireSecondPerson: &no}}}, "alice", "approve", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, setup{botCfg: tc.cfg, files: []string{"tmp_a"}})
			w.say(t, "!run rm -rf ./tmp_*")
			id := w.screen.waitFor(t, cardRE)[1]
			w.say(t, "/as "+tc.as, tc.verb+" "+id)
			if tc.refusal != "" {
				w.screen.waitFor(t, `\(to `+tc.as+` only\) You cannot `+tc.verb+` `+id+`: `+regexp.QuoteMeta(tc.refusal))
				w.say(t, "!pending")
				w.screen.waitFor(t, `1 approval waiting in this channel:\n\s+`+id)
			} else {
				w.screen.waitFor(t, `(approved|cancelled) by `+tc.as+` at `)
			}
			w.end(t)
			if ran := !w.exists("tmp_a"); ran != (tc.refusal == "" && tc.verb == "approve") {
				t.Errorf("the command ran: %v", ran)
			}
			refused := w.audit(t, "refused_click", id)
			if (len(refused) == 1) != (tc.refusal != "") {
				t.Errorf("refused clicks audited: %+v", refused)
			}
		})
	}
}

func TestDirectCommands(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{"help", []string{"!help"}, `!run <command>`},
		{"help says there is no model", []string{"!help"}, `No model is configured: set OPENAI_API_KEY`},
		{"unknown command", []string{"!deploy prod"}, `I do not know !deploy\. !help lists the commands\.`},
		{"usage", []string{"!run"}, `Usage: !run <command>`},
		{"sql is off", []string{"!sql SELECT 1"}, `SQL is off here`},
		{"nothing pending", []string{"!pending"}, `No approvals are waiting in this channel\.`},
		{"a pending list marks an operation it cuts", []string{"!file write notes.txt hi", "!pending"}, `[a-z2-7]{26}  file_operations: write notes\.txt … \(asked by alice`},
		{"talk without a model", []string{"what is using the disk?"}, `(?i)no (language )?model is configured`},
		{"blocked", []string{"!run rm -rf /"}, `(?i)block`},
		{"file list runs at once", []string{"!file write notes.txt hi", "!file list"}, `(?s)type: approve [a-z2-7]{26}.*countersign: .*keep\.txt`},
		{"a file outside the root is blocked", []string{"!file read ../../etc/passwd"}, `(?i)did not run`},
		{"words that look like a decision get an answer, never the model", []string{"cancel everything"}, `\(to alice only\) There is no approval everything waiting in this channel`},
		{"a bare approve with no card waiting", []string{"approve"}, `\(to alice only\) No card in this conversation waits for your decision`},
		{"a prefix too short", []string{"approve abc"}, `\(to alice only\) "abc" names no card: give at least 4 characters`},
		{"an unknown approval", []string{"approve aaaaaaaaaaaaaaaaaaaaaaaaaa"}, `\(to alice only\) There is no approval aaaaaaaaaaaaaaaaaaaaaaaaaa`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, setup{files: []string{"keep.txt"}})
			w.say(t, tc.lines...)
			w.screen.waitFor(t, tc.want)
			w.end(t)
		})
	}
}

// TestRedeliveredEventsRunOnce hands the bot the same event twice, as a
// platform does when unsure: the command runs once.
func TestRedeliveredEventsRunOnce(t *testing.T) {
	w := newWorld(t, setup{files: []string{"a"}})
	e := adapters.Event{ID: "evt-1", User: adapters.User{ID: "alice"}, Place: adapters.Place{Channel: terminal.Channel, Thread: terminal.Thread}, Text: "!run echo marker-$((6*7))"}
	w.bot.Handler("terminal").Handle(context.Background(), e)
	e.Redelivered = true
	w.bot.Handler("terminal").Handle(context.Background(), e)
	w.end(t)
	if n := strings.Count(w.screen.String(), "marker-42"); n != 1 {
		t.Errorf("the command's output appears %d times, want once:\n%s", n, w.screen.String())
	}
}

// TestEndOfInputWaitsForRuns: piped input ends right after an approval; the
// bot returns only once the approved run has finished.
func TestEndOfInputWaitsForRuns(t *testing.T) {
	w := newWorld(t, setup{})
	w.say(t, "!run sleep 0.5 && touch finished")
	id := w.screen.waitFor(t, cardRE)[1]
	w.say(t, "/as bob", "approve "+id)
	w.end(t)
	if !w.exists("finished") {
		t.Error("the bot returned before the approved run finished")
	}
	if !strings.Contains(w.screen.String(), "done: exit code 0") {
		t.Errorf("the card never showed the outcome:\n%s", w.screen.String())
	}
}

// TestShutdownKeepsPendingApprovals: a cancelled context stops the bot;
// undecided approvals stay pending in the store.
func TestShutdownKeepsPendingApprovals(t *testing.T) {
	w := newWorld(t, setup{files: []string{"tmp_a"}})
	w.say(t, "!run rm -rf ./tmp_*")
	id := w.screen.waitFor(t, cardRE)[1]
	w.stop(t)
	a, err := w.store.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if a.State != approval.Pending {
		t.Errorf("after shutdown the approval is %s, want pending", a.State)
	}
}

// TestShutdownStartsNoQueuedWork: messages queued behind one in flight
// are not started once a shutdown begins; their senders are told.
func TestShutdownStartsNoQueuedWork(t *testing.T) {
	w := newWorld(t, setup{})
	w.say(t, "!run sleep 1.0599", "!run echo marker-$((6*7))")
	testenv.Eventually(t, waitLimit, func() bool { return testenv.Running("sleep 1.0599") }, "the sleep running, the echo waiting behind it")
	w.stop(t)
	w.screen.waitFor(t, `\(to alice only\) I am shutting down, so I did not act on your message "!run echo marker-\$\(\(6\*7\)\)"`)
	if strings.Contains(w.screen.String(), "marker-42") {
		t.Error("a message queued before the shutdown was run during it")
	}
}

// TestSQLWithoutAModel: against the test MariaDB, with no model, a SELECT
// runs at once and a DELETE waits for a card; approved by a second person,
// it deletes exactly its row.
func TestSQLWithoutAModel(t *testing.T) {
	rootDSN := testenv.MySQLDSN(t)
	admin, err := sql.Open("mysql", rootDSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	db := fmt.Sprintf("cs_bot_%d", time.Now().UnixNano()%1_000_000_000)
	for _, q := range []string{
		"CREATE DATABASE " + db,
		"CREATE TABLE " + db + ".orders (id INT PRIMARY KEY, item VARCHAR(20))",
		"INSERT INTO " + db + ".orders VALUES (1, 'apple'), (2, 'pear'), (3, 'plum')",
	} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() { _, _ = admin.Exec("DROP DATABASE " + db) })
	cfg, err := mysql.ParseDSN(rootDSN)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = db
	st, err := sqltool.New(sqltool.Config{Connections: map[string]sqltool.Connection{"shop": {Description: "test shop", DSN: cfg.FormatDSN()}}})
	if err != nil {
		t.Fatalf("sqltool: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })

	w := newWorld(t, setup{extra: []tools.Tool{st}})
	w.say(t, "!sql SELECT id, item FROM orders ORDER BY id")
	w.screen.waitFor(t, `(?s)countersign: .*apple.*pear.*plum`)
	if strings.Contains(w.screen.String(), "type: approve") {
		t.Fatal("the SELECT waited for an approval")
	}

	w.say(t, "!sql DELETE FROM orders WHERE id = 2")
	id := w.screen.waitFor(t, `(?s)DELETE FROM orders WHERE id = 2.*`+cardRE)[1]
	var n int
	if err := admin.QueryRow("SELECT COUNT(*) FROM " + db + ".orders").Scan(&n); err != nil || n != 3 {
		t.Fatalf("before the approval: %d rows (%v), want 3", n, err)
	}
	w.say(t, "/as bob", "approve "+id)
	w.screen.waitFor(t, `approved by bob at .* · done: 1 row affected`)
	w.end(t)
	var items []string
	rows, err := admin.Query("SELECT item FROM " + db + ".orders ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var it string
		if err := rows.Scan(&it); err != nil {
			t.Fatal(err)
		}
		items = append(items, it)
	}
	if strings.Join(items, ",") != "apple,plum" {
		t.Errorf("after the approved DELETE the table holds %v, want [apple plum]", items)
	}
}

// TestShutdownInterruptsLongRuns: after the grace period a cancelled bot
// interrupts the run in flight, which is recorded as failed, and returns.
func TestShutdownInterruptsLongRuns(t *testing.T) {
	w := newWorld(t, setup{botCfg: bot.Config{ShutdownGrace: 300 * time.Millisecond}})
	w.say(t, "!run sleep 30 && touch finished")
	id := w.screen.waitFor(t, cardRE)[1]
	w.say(t, "/as bob", "approve "+id)
	w.screen.waitFor(t, `approved by bob at .* running`)
	w.stop(t)
	a, err := w.store.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if a.State != approval.Failed {
		t.Errorf("the interrupted run is %s, want failed", a.State)
	}
	if w.exists("finished") {
		t.Error("the run was not interrupted")
	}
}

// TestTypedDecisionFromAnyAdapter: an adapter that passes "approve <id>"
// through as text (a chat platform without buttons) gets the same decision.
func TestTypedDecisionFromAnyAdapter(t *testing.T) {
	w := newWorld(t, setup{files: []string{"tmp_a"}})
	w.say(t, "!run rm -rf ./tmp_*")
	id := w.screen.waitFor(t, cardRE)[1]
	w.bot.Handler("terminal").Handle(context.Background(), adapters.Event{
		ID: "slack-evt-9", User: adapters.User{ID: "bob", Name: "bob"},
		Place: adapters.Place{Channel: terminal.Channel, Thread: terminal.Thread}, Text: "Approve " + strings.ToUpper(id),
	})
	w.screen.waitFor(t, `approved by bob at .* · done: exit code 0`)
	w.end(t)
	if w.exists("tmp_a") {
		t.Error("the typed approval did not run the command")
	}
}

// TestShortDecisions: a card can be named by a prefix of its id, and a
// bare approve names the only card waiting for this person.
func TestShortDecisions(t *testing.T) {
	tests := []struct {
		name string
		say  func(id string) string
	}{
		{"a prefix of 4", func(id string) string { return "approve " + id[:4] }},
		{"a prefix, shouted", func(id string) string { return "APPROVE " + strings.ToUpper(id[:6]) }},
		{"bare approve", func(string) string { return "approve" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, setup{files: []string{"tmp_a"}})
			w.say(t, "!run rm -rf ./tmp_*")
			id := w.screen.waitFor(t, cardRE)[1]
			// The requester's own bare approve: no card waits for her.
			w.say(t, "approve")
			w.screen.waitFor(t, `\(to alice only\) No card in this conversation waits for your decision`)
			w.say(t, "/as bob", tc.say(id))
			w.screen.waitFor(t, `approved by bob at .* · done: exit code 0`)
			w.end(t)
			if w.exists("tmp_a") {
				t.Error("the short approval did not run the command")
			}
		})
	}
}

// TestCardBindsWhatItShowed: a path that matches the card's wildcard is
// created between the card and the click; the approval does not run, the
// card shows the new preview and asks again, and a second approval runs
// what it now shows.
func TestCardBindsWhatItShowed(t *testing.T) {
	w := newWorld(t, setup{files: []string{"tmp_a", "tmp_b", "keep.txt"}})
	w.say(t, "!run rm -rf ./tmp_*")
	id := w.screen.waitFor(t, cardRE)[1]
	if err := os.WriteFile(filepath.Join(w.dir, "tmp_c"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	w.say(t, "/as bob", "approve "+id)
	w.screen.waitFor(t, `(?s)- ./tmp_c.*type: approve `+id)
	w.screen.waitFor(t, `\(to bob only\) Nothing ran: since the card was posted, it now covers 3 items \(1 not on the card\) where the card showed 2`)
	for _, f := range []string{"tmp_a", "tmp_b", "tmp_c"} {
		if !w.exists(f) {
			t.Fatalf("%s is gone: the call ran although its blast radius changed", f)
		}
	}
	w.say(t, "approve "+id)
	w.screen.waitFor(t, `approved by bob at .* · done: exit code 0`)
	w.end(t)
	for _, f := range []string{"tmp_a", "tmp_b", "tmp_c"} {
		if w.exists(f) {
			t.Errorf("%s is still there after the second approval", f)
		}
	}
	if !w.exists("keep.txt") {
		t.Error("keep.txt is gone")
	}
	if got := w.audit(t, approval.KindClick, id); len(got) < 1 || got[0].Outcome != approval.OutcomeReasked {
		t.Errorf("the first click is audited as %+v; want it reasked", got)
	}
}
