package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testenv"
)

// TestGatewayInspectorCLI is issue 26's "done when" with a client no one
// here wrote: the npm MCP inspector in CLI mode (installed by
// .ci/mcp-servers) lists the gateway's tools, runs ls at once, waits on
// rm -rf ./tmp_* until a second person approves it in the terminal, gets
// a cancelled error when a card is cancelled, and is refused with a wrong
// token.
func TestGatewayInspectorCLI(t *testing.T) {
	bin := filepath.Join(testenv.MCPDir(t), "node_modules", ".bin", "mcp-inspector")
	g := startGatewayBinary(t)
	inspect := func(ctx context.Context, token string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		all := append([]string{"--cli", g.base + "/mcp", "--transport", "http", "--header", "Authorization: Bearer " + token}, args...)
		out, err := exec.CommandContext(ctx, bin, all...).CombinedOutput()
		return string(out), err
	}
	ctx := context.Background()

	out, err := inspect(ctx, ciToken, "--method", "tools/list")
	if err != nil || !strings.Contains(out, `"execute_command"`) || !strings.Contains(out, "may wait for a person's approval in the terminal") {
		t.Fatalf("tools/list: %v\n%s", err, out)
	}
	out, err = inspect(ctx, ciToken, "--method", "tools/call", "--tool-name", "execute_command", "--tool-arg", "command=ls")
	if err != nil || !strings.Contains(out, "keep.txt") {
		t.Fatalf("ls: %v\n%s", err, out)
	}
	if regexp.MustCompile(`approve [a-z0-9]{20,}`).MatchString(g.out.String()) { // a card's id, not the log's words
		t.Fatalf("ls made a card:\n%s", g.out)
	}

	type answer struct {
		out string
		err error
	}
	call := func(cmd string) <-chan answer {
		ch := make(chan answer, 1)
		go func() {
			out, err := inspect(ctx, ciToken, "--method", "tools/call", "--tool-name", "execute_command", "--tool-arg", "command="+cmd)
			ch <- answer{out, err}
		}()
		return ch
	}
	rm := call("rm -rf ./tmp_*")
	id := g.card(1)
	if !g.exists("tmp_a") {
		t.Fatal("tmp_a is gone before anyone approved")
	}
	g.say("/as bob")
	g.say("approve " + id)
	a := <-rm
	if a.err != nil || !strings.Contains(a.out, `\"executed\":true`) || g.exists("tmp_a") {
		t.Fatalf("approved rm: %v, tmp_a there %v\n%s", a.err, g.exists("tmp_a"), a.out)
	}

	again := call("rm -rf ./keep.txt")
	id = g.card(2)
	g.say("cancel " + id)
	a = <-again
	if !strings.Contains(a.out, `"isError": true`) || !strings.Contains(a.out, `\"status\":\"cancelled\"`) || !g.exists("keep.txt") {
		t.Fatalf("cancelled rm: %v, keep.txt there %v\n%s", a.err, g.exists("keep.txt"), a.out)
	}

	if out, err := inspect(ctx, "wrong-token-0123456789abcdef", "--method", "tools/list"); err == nil || strings.Contains(out, "execute_command") {
		t.Fatalf("a wrong token listed the tools: %v\n%s", err, out)
	}
}

// startGatewayBinary is startGatewayRun in a process of its own, built
// from this package: the command tool reaps every child of its process
// that is not one of its commands, so a client started by the test must
// not be a child of the bot's process.
func startGatewayBinary(t *testing.T) *gatewayRun {
	t.Helper()
	bin := buildBinary(t)
	// A folder every user may enter and change: run as root, the bot runs
	// its commands as nobody.
	dir, err := os.MkdirTemp("", "countersign-gateway-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"tmp_a", "tmp_b", "keep.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(t.TempDir(), "countersign.yaml")
	if err := os.WriteFile(cfg, []byte(`gateway:
  listen: 127.0.0.1:0
  agents:
    ci-bot:
      token_env: CS_TEST_CI_TOKEN
      channel: terminal
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--config", cfg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CS_TEST_CI_TOKEN="+ciToken, DefaultRedisURLEnv+"=", "OPENAI_API_KEY=", "OPENAI_BASE_URL=")
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	g := &gatewayRun{t: t, dir: dir, out: out, in: in, w: bufio.NewWriter(in), done: done}
	t.Cleanup(func() {
		_ = in.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("countersign did not end at the end of its input")
		}
	})
	g.base = "http://" + waitFor(t, out, regexp.MustCompile(`gateway: http://([0-9.:]+)/mcp`))
	return g
}
