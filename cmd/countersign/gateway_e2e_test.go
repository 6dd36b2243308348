package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/countersign/countersign/adapters/slack"
	"github.com/countersign/countersign/adapters/slack/slacktest"
	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/internal/testenv"
)

// The tokens of the test's agents (gateway.agents.<name>.token_env).
const (
	ciToken    = "ci-bot-token-0123456789abcdef"
	filesToken = "files-only-token-0123456789abcdef"
)

// gatewayRun is `countersign run` in the terminal with the gateway on, in a
// folder holding tmp_a, tmp_b and keep.txt.
type gatewayRun struct {
	t    *testing.T
	dir  string
	base string // http://127.0.0.1:port
	out  *syncBuffer
	in   io.WriteCloser
	w    *bufio.Writer
	mu   sync.Mutex
	done <-chan error

	stopOnce sync.Once
}

func startGatewayRun(t *testing.T, extra string) *gatewayRun {
	t.Helper()
	t.Setenv(DefaultRedisURLEnv, "")
	dir := t.TempDir()
	for _, f := range []string{"tmp_a", "tmp_b", "keep.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(t.TempDir(), "countersign.yaml")
	yaml := `gateway:
  listen: 127.0.0.1:0
  agents:
    ci-bot:
      token_env: CS_TEST_CI_TOKEN
      channel: terminal
    files-only:
      token_env: CS_TEST_FILES_TOKEN
      channel: terminal
      tools: [file_operations]
` + extra
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	in, out, done := startRun(t, dir, cfg, "CS_TEST_CI_TOKEN", ciToken, "CS_TEST_FILES_TOKEN", filesToken)
	g := &gatewayRun{t: t, dir: dir, out: out, in: in, w: bufio.NewWriter(in), done: done}
	g.base = "http://" + waitFor(t, out, regexp.MustCompile(`gateway: http://([0-9.:]+)/mcp`))
	t.Cleanup(g.stop)
	return g
}

// stop ends the run as the end of its input does, once.
func (g *gatewayRun) stop() {
	g.stopOnce.Do(func() {
		_ = g.in.Close()
		select {
		case <-g.done:
		case <-time.After(10 * time.Second):
			g.t.Error("run did not return at the end of input")
		}
	})
}

// say types a line in the terminal.
func (g *gatewayRun) say(line string) {
	g.t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, err := g.w.WriteString(line + "\n"); err != nil {
		g.t.Fatal(err)
	}
	if err := g.w.Flush(); err != nil {
		g.t.Fatal(err)
	}
}

// card waits for the n-th card (1-based) in the terminal and returns its id.
func (g *gatewayRun) card(n int) string {
	g.t.Helper()
	re := regexp.MustCompile(`approve ([a-z0-9]{20,})`)
	var id string
	if !testenv.Within(10*time.Second, func() bool {
		seen := map[string]bool{}
		var ids []string
		for _, m := range re.FindAllStringSubmatch(g.out.String(), -1) {
			if !seen[m[1]] {
				seen[m[1]] = true
				ids = append(ids, m[1])
			}
		}
		if len(ids) >= n {
			id = ids[n-1]
		}
		return id != ""
	}) {
		g.t.Fatalf("no card #%d; output so far:\n%s", n, g.out.String())
	}
	return id
}

func (g *gatewayRun) exists(f string) bool {
	_, err := os.Stat(filepath.Join(g.dir, f))
	return err == nil
}

// bearer adds an agent's token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connectMCP connects the official SDK's client to the gateway as an agent.
func (g *gatewayRun) connectMCP(token string, progress func(*mcp.ProgressNotificationClientRequest)) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			if progress != nil {
				progress(r)
			}
		},
	})
	tr := &mcp.StreamableClientTransport{Endpoint: g.base + "/mcp", HTTPClient: &http.Client{Transport: bearer{token}}, MaxRetries: -1}
	return c.Connect(context.Background(), tr, nil)
}

func resultText(t *testing.T, r *mcp.CallToolResult) string {
	t.Helper()
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestGatewayMCP is issue 26's "done when" with the official Go SDK
// client: it lists the tools, runs ls at once, waits on rm -rf ./tmp_*
// until a second person approves in the terminal (with progress), gets a
// cancelled error result when a card is cancelled, and a wrong token is
// refused.
func TestGatewayMCP(t *testing.T) {
	g := startGatewayRun(t, "")
	ctx := context.Background()

	if _, err := g.connectMCP("not-the-token-at-all-0000", nil); err == nil {
		t.Fatal("a wrong token connected to /mcp")
	}

	var progressMu sync.Mutex
	var progress []string
	cs, err := g.connectMCP(ciToken, func(r *mcp.ProgressNotificationClientRequest) {
		progressMu.Lock()
		defer progressMu.Unlock()
		progress = append(progress, r.Params.Message)
	})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	// Cancelled before Close, which would wait for a call still waiting.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tl := range list.Tools {
		byName[tl.Name] = tl
	}
	for _, want := range []string{"execute_command", "file_operations"} {
		tl := byName[want]
		if tl == nil {
			t.Fatalf("tools/list has no %s: %v", want, byName)
		}
		if !strings.Contains(tl.Description, "may wait for a person's approval in the terminal") {
			t.Errorf("%s's description does not say where it may wait: %q", want, tl.Description)
		}
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "execute_command", Arguments: map[string]any{"command": "ls"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || !strings.Contains(resultText(t, res), "keep.txt") {
		t.Fatalf("ls: isError %v, %s", res.IsError, resultText(t, res))
	}
	if strings.Contains(g.out.String(), "approve ") {
		t.Fatalf("ls made a card:\n%s", g.out)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "execute_command", Arguments: map[string]any{"command": "rm -rf /"}})
	if err != nil {
		t.Fatal(err)
	}
	if text := resultText(t, res); !res.IsError || !strings.Contains(text, `"status":"blocked"`) || !strings.Contains(text, "did not run") {
		t.Fatalf("rm -rf /: isError %v, %s; want a blocked error at once", res.IsError, text)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "execute_command", Arguments: map[string]any{"cmd": "ls"}})
	if err != nil {
		t.Fatal(err)
	}
	if text := resultText(t, res); !res.IsError || !strings.Contains(text, "command") {
		t.Fatalf("arguments the schema refuses: isError %v, %s; want an error in the schema's words", res.IsError, text)
	}

	type called struct {
		res *mcp.CallToolResult
		err error
	}
	call := func(cmd string) <-chan called {
		ch := make(chan called, 1)
		go func() {
			p := &mcp.CallToolParams{Name: "execute_command", Arguments: map[string]any{"command": cmd}}
			p.SetProgressToken("rm-1")
			r, err := cs.CallTool(ctx, p)
			ch <- called{r, err}
		}()
		return ch
	}
	rm := call("rm -rf ./tmp_*")
	id := g.card(1)
	if !strings.Contains(g.out.String(), "agent ci-bot") {
		t.Errorf("the card does not name the agent as its requester:\n%s", g.out)
	}
	if !g.exists("tmp_a") {
		t.Fatal("tmp_a is gone before anyone approved")
	}
	select {
	case c := <-rm:
		t.Fatalf("the call returned before its card was decided: %+v %v", c.res, c.err)
	default:
	}
	g.say("/as bob")
	g.say("approve " + id)
	c := <-rm
	if c.err != nil {
		t.Fatal(c.err)
	}
	if c.res.IsError || !strings.Contains(resultText(t, c.res), `"executed":true`) {
		t.Fatalf("approved rm: isError %v, %s", c.res.IsError, resultText(t, c.res))
	}
	if g.exists("tmp_a") || g.exists("tmp_b") || !g.exists("keep.txt") {
		t.Fatal("the approved rm -rf ./tmp_* did not remove tmp_a and tmp_b, or removed keep.txt")
	}
	progressMu.Lock()
	got := strings.Join(progress, "\n")
	progressMu.Unlock()
	if !strings.Contains(got, "waiting for approval in the terminal: 0 of 1") {
		t.Errorf("no progress while it waited; got %q", got)
	}

	again := call("rm -rf ./keep.txt")
	id = g.card(2)
	g.say("cancel " + id + " not today")
	c = <-again
	if c.err != nil {
		t.Fatal(c.err)
	}
	text := resultText(t, c.res)
	if !c.res.IsError || !strings.Contains(text, `"status":"cancelled"`) || !strings.Contains(text, "did not run") {
		t.Fatalf("cancelled call: isError %v, %s", c.res.IsError, text)
	}
	if !g.exists("keep.txt") {
		t.Fatal("a cancelled call ran")
	}
}

// post sends a JSON body to the gateway as an agent.
func (g *gatewayRun) post(token, path, body string, header ...string) (int, map[string]any) {
	g.t.Helper()
	req, err := http.NewRequest(http.MethodPost, g.base+path, strings.NewReader(body))
	if err != nil {
		g.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return g.do(req)
}

func (g *gatewayRun) do(req *http.Request) (int, map[string]any) {
	g.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	data, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(data, &m); err != nil {
		g.t.Fatalf("%s %s: %d, not JSON: %q", req.Method, req.URL.Path, resp.StatusCode, data)
	}
	return resp.StatusCode, m
}

// TestGatewayAPI: the approval API's answers: 200 with the result, 202
// pending then a long poll, one card for a repeated Idempotency-Key,
// assess without running, and the errors with their codes.
func TestGatewayAPI(t *testing.T) {
	g := startGatewayRun(t, "")

	code, m := g.post(ciToken, "/v1/calls", `{"tool":"execute_command","args":{"command":"ls"},"reason":"look"}`)
	if code != 200 || m["status"] != "done" || !strings.Contains(m["result"].(map[string]any)["stdout"].(string), "keep.txt") {
		t.Fatalf("ls: %d %v", code, m)
	}

	rm := `{"tool":"execute_command","args":{"command":"rm -rf ./tmp_*"},"reason":"clean up"}`
	code, m = g.post(ciToken, "/v1/calls?wait=0", rm, "Idempotency-Key", "job-42")
	if code != 202 || m["status"] != "pending" || m["id"] == "" {
		t.Fatalf("rm: %d %v, want 202 pending", code, m)
	}
	id := m["id"].(string)
	code, m = g.post(ciToken, "/v1/calls?wait=0", rm, "Idempotency-Key", "job-42")
	if code != 202 || m["id"] != id {
		t.Fatalf("a repeat with the same Idempotency-Key: %d %v, want the same id %s", code, m, id)
	}
	if card := g.card(1); card != id {
		t.Fatalf("the card is %s, the call %s", card, id)
	}

	polled := make(chan map[string]any, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, g.base+"/v1/calls/"+id+"?wait=20", nil)
		req.Header.Set("Authorization", "Bearer "+ciToken)
		_, m := g.do(req)
		polled <- m
	}()
	g.say("approve " + id)
	m = <-polled
	if m["status"] != "done" || m["result"].(map[string]any)["executed"] != true {
		t.Fatalf("long poll after the approval: %v", m)
	}
	if g.exists("tmp_a") {
		t.Fatal("tmp_a is still there after the approval")
	}
	// The client came back after the decision: the same key gets the
	// result, and nothing runs again.
	code, m = g.post(ciToken, "/v1/calls?wait=0", rm, "Idempotency-Key", "job-42")
	if code != 200 || m["id"] != id || m["result"].(map[string]any)["executed"] != true {
		t.Fatalf("the same key after the decision: %d %v, want 200 with the result", code, m)
	}
	if n := strings.Count(g.out.String(), "approve "+id); n < 1 || len(regexp.MustCompile(`approve ([a-z0-9]{20,})`).FindAllString(g.out.String(), -1)) > n {
		t.Errorf("the repeated call posted another card:\n%s", g.out)
	}

	code, m = g.post(ciToken, "/v1/assess", `{"tool":"execute_command","args":{"command":"rm -rf ./keep.txt"}}`)
	if code != 200 || m["decision"] != "confirm" {
		t.Fatalf("assess: %d %v", code, m)
	}
	if !g.exists("keep.txt") {
		t.Fatal("assess ran the call")
	}
	code, m = g.post(ciToken, "/v1/assess", `{"tool":"execute_command","args":{"command":"ls","risk_level":"high"}}`)
	if code != 200 || m["decision"] != "confirm" {
		t.Fatalf("an agent's high risk_level did not raise ls: %d %v", code, m)
	}

	big := `{"tool":"execute_command","args":{"command":"` + strings.Repeat("x", 1<<20) + `"}}`
	for _, tc := range []struct {
		name, token, path, body, code string
		status                        int
	}{
		{"wrong token", "not-a-token-0123456789", "/v1/calls", `{"tool":"execute_command","args":{"command":"ls"}}`, "unauthorized", 401},
		{"tool not allowed", filesToken, "/v1/calls", `{"tool":"execute_command","args":{"command":"ls"}}`, "tool_not_allowed", 403},
		{"over 1 MiB", ciToken, "/v1/calls", big, "too_large", 413},
		{"unknown tool", ciToken, "/v1/calls", `{"tool":"launch_rockets","args":{}}`, "unknown_tool", 404},
		{"unknown path", ciToken, "/v1/call", `{}`, "not_found", 404},
		{"not JSON", ciToken, "/v1/decide", `{"tool":`, "bad_json", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, m := g.post(tc.token, tc.path, tc.body)
			if code != tc.status || m["code"] != tc.code || m["error"] == "" {
				t.Fatalf("%d %v, want %d %s with a sentence", code, m, tc.status, tc.code)
			}
		})
	}
}

// TestGatewayRate: past gateway.rate requests a minute an agent gets 429,
// and another agent is not held back by it.
func TestGatewayRate(t *testing.T) {
	g := startGatewayRun(t, "  rate: 3\n")
	ls := `{"tool":"file_operations","args":{"operation":"list","path":"."}}`
	for i := range 3 {
		if code, m := g.post(filesToken, "/v1/calls", ls); code != 200 {
			t.Fatalf("call %d: %d %v", i+1, code, m)
		}
	}
	if code, m := g.post(filesToken, "/v1/calls", ls); code != 429 || m["code"] != "rate_limited" {
		t.Fatalf("call 4: %d %v, want 429", code, m)
	}
	if code, m := g.post(ciToken, "/v1/calls", ls); code != 200 {
		t.Fatalf("another agent: %d %v", code, m)
	}
}

// TestGatewayHookClaudeCode: `countersign hook claude-code` with recorded
// PreToolUse payloads allows ls at once, and waits on rm -rf ./tmp_* until
// the card is cancelled, then denies naming who cancelled. Nothing runs
// in Countersign: Claude Code runs the tool itself.
func TestGatewayHookClaudeCode(t *testing.T) {
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	g := startGatewayRun(t, "")
	t.Setenv("COUNTERSIGN_GATEWAY_URL", g.base)
	t.Setenv("COUNTERSIGN_GATEWAY_TOKEN", ciToken)
	hook := func(payload string) (int, map[string]any, string) {
		data, err := os.ReadFile(filepath.Join(testdata, payload))
		if err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		code := dispatch([]string{"hook", "claude-code"}, bytes.NewReader(data), &out, &errOut)
		var m map[string]any
		if out.Len() > 0 {
			if err := json.Unmarshal(out.Bytes(), &m); err != nil {
				t.Fatalf("the hook printed no JSON: %q", out.String())
			}
		}
		return code, m, errOut.String()
	}
	decision := func(m map[string]any) (string, string) {
		s, _ := m["hookSpecificOutput"].(map[string]any)
		d, _ := s["permissionDecision"].(string)
		r, _ := s["permissionDecisionReason"].(string)
		return d, r
	}

	code, m, stderr := hook("claude-code-pretooluse-ls.json")
	if d, r := decision(m); code != 0 || d != "allow" || !strings.Contains(r, "policy") {
		t.Fatalf("ls: exit %d, %q (%q); stderr %s", code, d, r, stderr)
	}

	type answer struct {
		code int
		m    map[string]any
	}
	ch := make(chan answer, 1)
	go func() {
		code, m, _ := hook("claude-code-pretooluse-rm.json")
		ch <- answer{code, m}
	}()
	id := g.card(1)
	select {
	case a := <-ch:
		t.Fatalf("the hook answered before the card was decided: %v", a.m)
	default:
	}
	g.say("/as carol")
	g.say("cancel " + id + " not on a Friday")
	a := <-ch
	d, r := decision(a.m)
	if a.code != 0 || d != "deny" || !strings.Contains(r, "carol") || !strings.Contains(r, "not on a Friday") {
		t.Fatalf("cancelled rm: exit %d, %q (%q)", a.code, d, r)
	}
	if !g.exists("tmp_a") {
		t.Fatal("the hook's call ran in Countersign")
	}

	// Claude Code asking again about the same tool use gets the same
	// decision, from the same card.
	code, m, _ = hook("claude-code-pretooluse-rm.json")
	if d, r := decision(m); code != 0 || d != "deny" || !strings.Contains(r, "carol") {
		t.Fatalf("the same tool use again: exit %d, %q (%q)", code, d, r)
	}

	go func() {
		code, m, _ := hook("claude-code-pretooluse-write.json")
		ch <- answer{code, m}
	}()
	id = g.card(2)
	g.say("approve " + id)
	a = <-ch
	d, r = decision(a.m)
	if a.code != 0 || d != "allow" || !strings.Contains(r, "carol") {
		t.Fatalf("approved write: exit %d, %q (%q)", a.code, d, r)
	}
	if g.exists("notes.txt") {
		t.Fatal("an approved hook call was run by Countersign; Claude Code runs it itself")
	}
	// Its card does not claim a run that happened elsewhere.
	if !testenv.Within(10*time.Second, func() bool { return strings.Contains(g.out.String(), "Approved by carol: the agent runs it") }) {
		t.Errorf("the approved hook call's card does not say the agent runs it:\n%s", g.out.String())
	}
}

// TestGatewayMCPSlack: the official SDK client's rm -rf ./tmp_* waits on a
// card in the agent's Slack channel (the fake Slack) that needs two
// people; the client hears "1 of 2" while it waits, and the second
// person's click returns the run's result.
func TestGatewayMCPSlack(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"tmp_a", "tmp_b", "keep.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fake := slacktest.New(t)
	model := agenttest.NewServer(t)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	t.Setenv("CS_TEST_CI_TOKEN", ciToken)
	slackRun(t, dir, `
bot:
  default:
    approvals_required: 2
gateway:
  listen: `+addr+`
  agents:
    ci-bot:
      token_env: CS_TEST_CI_TOKEN
      channel: slack:`+slackChannel+`
`, fake, model)
	g := &gatewayRun{t: t, dir: dir, base: "http://" + addr}

	var mu sync.Mutex
	var progress []string
	cs, err := g.connectMCP(ciToken, func(r *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		defer mu.Unlock()
		progress = append(progress, r.Params.Message)
	})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	heard := func(want string) {
		t.Helper()
		if testenv.Within(10*time.Second, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return slices.ContainsFunc(progress, func(p string) bool { return strings.Contains(p, want) })
		}) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("no progress saying %q; heard %q", want, progress)
	}

	got := make(chan *mcp.CallToolResult, 1)
	go func() {
		p := &mcp.CallToolParams{Name: "execute_command", Arguments: map[string]any{"command": "rm -rf ./tmp_*"}}
		p.SetProgressToken(7)
		r, err := cs.CallTool(ctx, p)
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	var card slacktest.Message
	fake.Wait(t, "the agent's card in "+slackChannel, func() bool {
		for _, m := range fake.BotMessages(slackChannel) {
			if strings.Contains(string(m.Blocks), `"header"`) && strings.Contains(slacktest.View(m), "rm -rf ./tmp_*") {
				card = m
				return true
			}
		}
		return false
	})
	if v := slacktest.View(card); !strings.Contains(v, "agent ci-bot") {
		t.Errorf("the card does not name the agent:\n%s", v)
	}
	id := approvalID(t, card)
	heard("waiting for approval in slack channel " + slackChannel + ": 0 of 2")

	fake.Acked(t, fake.Click(alice, slackChannel, card.TS, slack.ActionApprove, id))
	heard(": 1 of 2")
	// The approval API says where the card waits, as a Slack link.
	req, err := http.NewRequest(http.MethodGet, g.base+"/v1/calls/"+id+"?wait=0", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+ciToken)
	want := "https://fake.slack.test/archives/" + slackChannel + "/p" + strings.ReplaceAll(card.TS, ".", "")
	if code, m := g.do(req); code != http.StatusAccepted || m["card_url"] != want {
		t.Errorf("GET /v1/calls/%s = %d %v; want 202 with card_url %s", id, code, m, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "tmp_a")); err != nil {
		t.Fatal("one approval of two ran the call")
	}
	select {
	case r := <-got:
		t.Fatalf("the call returned after one approval of two: %s", resultText(t, r))
	default:
	}

	fake.Acked(t, fake.Click(bob, slackChannel, card.TS, slack.ActionApprove, id))
	r := <-got
	if r == nil || r.IsError || !strings.Contains(resultText(t, r), `"executed":true`) {
		t.Fatalf("after the second approval: %+v", r)
	}
	for f, want := range map[string]bool{"tmp_a": false, "tmp_b": false, "keep.txt": true} {
		if _, err := os.Stat(filepath.Join(dir, f)); (err == nil) != want {
			t.Errorf("%s exists = %v, want %v", f, err == nil, want)
		}
	}
}

// TestGatewayRestart: a call waits on its card when its replica stops; the
// card is kept in Redis, a person approves it on the next replica, and the
// client's retry with the same Idempotency-Key gets the decision there.
func TestGatewayRestart(t *testing.T) {
	store := fmt.Sprintf("store:\n  redis_url: %s\n  prefix: gateway-restart-%d\n", testenv.RedisURL(t), time.Now().UnixNano())
	rm := `{"tool":"execute_command","args":{"command":"rm -rf ./tmp_*"}}`

	first := startGatewayRun(t, store)
	code, m := first.post(ciToken, "/v1/calls?wait=0", rm, "Idempotency-Key", "deploy-9")
	if code != 202 {
		t.Fatalf("rm: %d %v, want 202", code, m)
	}
	id := m["id"].(string)
	first.card(1)
	first.stop()

	second := startGatewayRun(t, store)
	code, m = second.post(ciToken, "/v1/calls?wait=0", rm, "Idempotency-Key", "deploy-9")
	if code != 202 || m["id"] != id {
		t.Fatalf("the retry on the next replica: %d %v, want 202 for %s", code, m, id)
	}
	if strings.Contains(second.out.String(), "approve ") {
		t.Fatalf("the retry posted another card:\n%s", second.out)
	}
	second.say("approve " + id)
	code, m = second.post(ciToken, "/v1/calls?wait=20", rm, "Idempotency-Key", "deploy-9")
	if code != 200 || m["id"] != id || m["result"].(map[string]any)["executed"] != true {
		t.Fatalf("the retry after the approval: %d %v, want 200 with the run's result", code, m)
	}
	if second.exists("tmp_a") {
		t.Fatal("the approved call did not run")
	}
}

// TestGatewayHookCodex: `countersign hook codex` asks about a Codex
// apply_patch one file at a time: the first file's card approved, the
// second's cancelled, the patch is denied naming who cancelled; nothing is
// written by Countersign.
func TestGatewayHookCodex(t *testing.T) {
	payload, err := os.ReadFile(filepath.Join("testdata", "codex-pretooluse-apply-patch.json"))
	if err != nil {
		t.Fatal(err)
	}
	ls, err := os.ReadFile(filepath.Join("testdata", "claude-code-pretooluse-ls.json")) // Codex's Bash is the same
	if err != nil {
		t.Fatal(err)
	}
	g := startGatewayRun(t, "")
	t.Setenv("COUNTERSIGN_GATEWAY_URL", g.base)
	t.Setenv("COUNTERSIGN_GATEWAY_TOKEN", ciToken)
	type answer struct {
		code     int
		out, err string
	}
	ch := make(chan answer, 1)
	go func() {
		var out, errOut bytes.Buffer
		code := dispatch([]string{"hook", "codex"}, bytes.NewReader(payload), &out, &errOut)
		ch <- answer{code, out.String(), errOut.String()}
	}()
	first := g.card(1)
	if !strings.Contains(g.out.String(), "notes.txt") {
		t.Errorf("the first card is not the patch's first file:\n%s", g.out)
	}
	g.say("approve " + first)
	second := g.card(2)
	g.say("/as dave")
	g.say("cancel " + second + " keep it as it is")
	a := <-ch
	if a.code != 0 || !strings.Contains(a.out, `"permissionDecision":"deny"`) || !strings.Contains(a.out, "dave") || !strings.Contains(a.out, "keep it as it is") {
		t.Fatalf("exit %d, %s (stderr %s); want a deny naming dave and his reason", a.code, a.out, a.err)
	}
	if g.exists("notes.txt") {
		t.Fatal("Countersign wrote the patch's file; Codex applies the patch itself")
	}
	if data, _ := os.ReadFile(filepath.Join(g.dir, "keep.txt")); string(data) != "keep.txt" {
		t.Fatalf("keep.txt changed: %q", data)
	}

	var out bytes.Buffer
	if code := dispatch([]string{"hook", "codex"}, bytes.NewReader(ls), &out, io.Discard); code != 0 || out.Len() != 0 {
		t.Fatalf("an allowed Bash ls: exit %d, %q; want Codex's empty answer", code, out.String())
	}
}

// keyed adds an agent's token and an Idempotency-Key to every request.
type keyed struct {
	bearer
	key string
}

func (k keyed) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Idempotency-Key", k.key)
	return k.bearer.RoundTrip(r)
}

// TestGatewayMCPDisconnect: an MCP client that gives up while its call
// waits leaves the card as it is; its retry in a new session with the
// same Idempotency-Key attaches to that card and gets the decision.
func TestGatewayMCPDisconnect(t *testing.T) {
	g := startGatewayRun(t, "")
	connect := func() *mcp.ClientSession {
		t.Helper()
		c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil)
		tr := &mcp.StreamableClientTransport{Endpoint: g.base + "/mcp", HTTPClient: &http.Client{Transport: keyed{bearer{ciToken}, "deploy-11"}}, MaxRetries: -1}
		cs, err := c.Connect(context.Background(), tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	rm := &mcp.CallToolParams{Name: "execute_command", Arguments: map[string]any{"command": "rm -rf ./tmp_*"}}

	first := connect()
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() {
		_, err := first.CallTool(ctx, rm)
		gaveUp <- err
	}()
	id := g.card(1)
	cancel()
	if err := <-gaveUp; err == nil {
		t.Fatal("the call returned a result after its client gave up")
	}
	_ = first.Close()
	req, _ := http.NewRequest(http.MethodGet, g.base+"/v1/calls/"+id+"?wait=0", nil)
	req.Header.Set("Authorization", "Bearer "+ciToken)
	if code, m := g.do(req); code != 202 || m["status"] != "pending" {
		t.Fatalf("the card after its client gave up: %d %v, want it still pending", code, m)
	}

	second := connect()
	defer second.Close()
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	got := make(chan *mcp.CallToolResult, 1)
	go func() {
		r, err := second.CallTool(ctx, rm)
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	g.say("approve " + id)
	r := <-got
	if r == nil || r.IsError || !strings.Contains(resultText(t, r), `"executed":true`) {
		t.Fatalf("the retry: %+v", r)
	}
	ids := map[string]bool{}
	for _, m := range regexp.MustCompile(`approve ([a-z0-9]{20,})`).FindAllStringSubmatch(g.out.String(), -1) {
		ids[m[1]] = true
	}
	if len(ids) != 1 || g.exists("tmp_a") {
		t.Fatalf("%d cards (want 1), tmp_a there %v:\n%s", len(ids), g.exists("tmp_a"), g.out)
	}
}
