package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/tools/fence"
)

// TestRunFencesTheModelsLow is issue 25's "tried as a new user would" for
// the fence, on the bot as shipped (no configuration): with the model
// saying low, a write outside the root and a connection are stopped by
// the kernel, the chat says which, and the write asked for again gets a
// card instead of running.
func TestRunFencesTheModelsLow(t *testing.T) {
	if _, err := fence.Probe(); err != nil {
		t.Skipf("no kernel fence here: %v", err)
	}
	dir, outside := t.TempDir(), t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	probe := fmt.Sprintf("#!/bin/bash\nexec 3<>/dev/tcp/127.0.0.1/%d && echo CONNECTED\n", ln.Addr().(*net.TCPAddr).Port)
	if err := os.WriteFile(filepath.Join(dir, "probe"), []byte(probe), 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(outside, "cron-x")
	write := `{"command":"touch ` + target + `","risk_level":"low"}`
	srv := agenttest.NewServer(t,
		agenttest.Calls(agenttest.Call("c1", "execute_command", write)),
		agenttest.Calls(agenttest.Call("c2", "execute_command", write)),
		agenttest.Text("It needs your approval."),
		// A program the judge cannot read into opens a connection.
		agenttest.Calls(agenttest.Call("c3", "execute_command", `{"command":"./probe","risk_level":"low"}`)),
		agenttest.Text("The network is closed to me."),
	)
	t.Setenv(DefaultRedisURLEnv, "")
	in, out, done := startRun(t, dir, "", "OPENAI_BASE_URL", srv.BaseURL(), "OPENAI_MODEL", "m", "OPENAI_API_KEY", "k")
	say := func(line string) {
		t.Helper()
		if _, err := io.WriteString(in, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, out, regexp.MustCompile(`approvals: memory`))
	say("make the cron file")
	id := waitFor(t, out, regexp.MustCompile(`approve ([a-z0-9]{20,})`))
	if _, err := os.Stat(target); err == nil {
		t.Fatal("the write outside the root happened")
	}
	if !strings.Contains(out.String(), "the fence refused a write to "+target) {
		t.Errorf("the chat does not say the fence refused the write:\n%s", out)
	}
	if !strings.Contains(out.String(), "the kernel's fence stopped this same call") {
		t.Errorf("the card does not say why it is a card:\n%s", out)
	}
	say("cancel " + id + " not now")
	waitFor(t, out, regexp.MustCompile(`It needs your approval\.`))
	say("open a connection")
	waitFor(t, out, regexp.MustCompile(`The network is closed to me\.`))
	if strings.Contains(out.String(), "CONNECTED") || !strings.Contains(out.String(), "the fence refused network access") {
		t.Errorf("the chat does not say the fence refused the network:\n%s", out)
	}
	in.Close()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
}
