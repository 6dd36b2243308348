package shelltool

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/tools"
	"github.com/countersign/countersign/tools/fence"
)

// needFence skips a test on a kernel without Landlock: the fence tests
// then cannot run for real.
func needFence(t testing.TB) {
	t.Helper()
	if _, err := fence.Probe(); err != nil {
		t.Skipf("no kernel fence here: %v", err)
	}
}

func runAs(t testing.TB, tool *Tool, command string, opts tools.RunOptions) tools.Result {
	t.Helper()
	raw, err := json.Marshal(cmdArgs{Command: command})
	if err != nil {
		t.Fatal(err)
	}
	return tool.Run(context.Background(), raw, opts)
}

var (
	byModel    = tools.RunOptions{AutoRun: true, AutoBy: tools.AutoModel}
	byReadOnly = tools.RunOptions{AutoRun: true, AutoBy: tools.AutoReadOnly}
	byOperator = tools.RunOptions{AutoBy: tools.AutoOperator}
	approved   = tools.RunOptions{}
)

// A call that runs without a card writes only inside the root and its
// private temporary folder (nothing at all when judged read-only); an
// approved call writes where its user may, unless the operator fences
// approved calls too. The write outside is a folder beside the root, which
// the command's user may write: only the fence stops it.
func TestFencedWrites(t *testing.T) {
	needFence(t)
	outside := openDir(t)
	target := filepath.Join(outside, "cron.d-x")
	tests := []struct {
		name    string
		fence   FenceConfig
		opts    tools.RunOptions
		command string
		allowed bool
	}{
		{"model's low: outside the root", FenceConfig{}, byModel, "touch " + target, false},
		{"model's low: redirection outside the root", FenceConfig{}, byModel, "echo x > " + target, false},
		{"model's low: copy outside the root", FenceConfig{}, byModel, "echo x > f && cp f " + target, false},
		{"model's low: inside the root", FenceConfig{}, byModel, "touch inside", true},
		{"model's low: its TMPDIR", FenceConfig{}, byModel, `echo x > "$TMPDIR/t" && cat "$TMPDIR/t" >/dev/null`, true},
		{"model's low: /dev/null", FenceConfig{}, byModel, "echo x > /dev/null", true},
		{"read-only: inside the root", FenceConfig{}, byReadOnly, "touch inside", false},
		{"read-only: outside the root", FenceConfig{}, byReadOnly, "touch " + target, false},
		{"read-only: /dev/null", FenceConfig{}, byReadOnly, "ls / 2>/dev/null >/dev/null", true},
		{"pre-authorised: outside the root", FenceConfig{}, byOperator, "touch " + target, false},
		{"pre-authorised: inside the root", FenceConfig{}, byOperator, "touch inside", true},
		{"auto-run of no known reason: inside the root", FenceConfig{}, tools.RunOptions{AutoRun: true}, "touch inside", false},
		{"approved: outside the root", FenceConfig{}, approved, "touch " + target, true},
		{"approved, fence.approved: outside the root", FenceConfig{Approved: true}, approved, "touch " + target, false},
		{"approved, fence.mode all: outside the root", FenceConfig{Mode: FenceAll}, approved, "touch " + target, false},
		{"fence.mode off: model's low outside the root", FenceConfig{Mode: FenceOff}, byModel, "touch " + target, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(target)
			tool := fencedTool(t, func(c *Config) { c.Fence = tt.fence })
			res := runAs(t, tool, tt.command, tt.opts)
			if tt.allowed {
				if res.Status != tools.StatusOK || res.Fence != "" {
					t.Fatalf("want it to run: %s", res.JSON())
				}
				return
			}
			if res.Status != tools.StatusError || !res.Executed {
				t.Fatalf("want a run that failed: %s", res.JSON())
			}
			if _, err := os.Stat(target); err == nil {
				t.Fatalf("the write outside the root happened: %s", res.JSON())
			}
			if !strings.Contains(res.Fence, "the fence refused a write to ") || !strings.Contains(res.Fence, "risk_level high") ||
				!strings.Contains(res.Error, res.Fence) {
				t.Fatalf("the result does not say the fence refused the write: %s", res.JSON())
			}
		})
	}
}

// The result names the path the fence refused.
func TestFenceNamesTheRefusedPath(t *testing.T) {
	needFence(t)
	outside := openDir(t)
	tool := fencedTool(t, nil)
	target := filepath.Join(outside, "x")
	res := runAs(t, tool, "touch "+target, byModel)
	if want := "the fence refused a write to " + target + ":"; !strings.HasPrefix(res.Fence, want) {
		t.Fatalf("fence %q; want it to start %q", res.Fence, want)
	}
}

// A fenced run's TMPDIR is its own, and is gone when the run ends.
func TestFencedTempFolderIsRemoved(t *testing.T) {
	needFence(t)
	tool := fencedTool(t, nil)
	res := runAs(t, tool, `echo x > "$TMPDIR/t"; echo "$TMPDIR"`, byModel)
	dir := strings.TrimSpace(res.Stdout)
	if res.Status != tools.StatusOK || !strings.HasPrefix(dir, tool.tmp+"/") {
		t.Fatalf("want TMPDIR inside %s: %s", tool.tmp, res.JSON())
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the run's TMPDIR %s is still there (%v)", dir, err)
	}
}

// A call run on the model's word alone cannot reach the network, not even
// a listener on the bot's own loopback, unless fence.network is allow; a
// call judged read-only may.
func TestFencedNetwork(t *testing.T) {
	needFence(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	connect := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo CONNECTED", port)
	tests := []struct {
		name    string
		network string
		opts    tools.RunOptions
		reaches bool
	}{
		{"model's low", "", byModel, false},
		{"model's low, network deny", "deny", byModel, false},
		{"model's low, network allow", "allow", byModel, true},
		{"read-only", "", byReadOnly, true},
		{"pre-authorised", "", byOperator, true},
		{"approved", "", approved, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := fencedTool(t, func(c *Config) { c.Fence.Network = tt.network })
			res := runAs(t, tool, connect, tt.opts)
			got := strings.Contains(res.Stdout, "CONNECTED")
			if got != tt.reaches {
				t.Fatalf("reached the listener: %v, want %v: %s", got, tt.reaches, res.JSON())
			}
			if !tt.reaches && !strings.Contains(res.Fence, "the fence refused network access") {
				t.Fatalf("the result does not say the fence kept it off the network: %s", res.JSON())
			}
		})
	}
}

// No set-user-ID gain: a set-user-ID root copy of id, run as nobody,
// shows euid 0 when approved (so the test can see a gain) and not when
// fenced.
func TestFencedNoSetuidGain(t *testing.T) {
	needFence(t)
	needRoot(t)
	root := openDir(t)
	id, err := exec.LookPath("id")
	if err != nil {
		t.Skip("no id program")
	}
	b, err := os.ReadFile(id)
	if err != nil {
		t.Fatal(err)
	}
	suid := filepath.Join(root, "suid-id")
	if err := os.WriteFile(suid, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(suid, os.ModeSetuid|0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		opts  tools.RunOptions
		gains bool
	}{
		{"approved", approved, true},
		{"model's low", byModel, false},
		{"read-only", byReadOnly, false},
		{"pre-authorised", byOperator, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tool := fencedTool(t, func(c *Config) { c.Root, c.RunAs = root, "65534:65534" })
			res := runAs(t, tool, "./suid-id", tt.opts)
			if got := strings.Contains(res.Stdout, "euid=0"); got != tt.gains {
				t.Fatalf("gained root: %v, want %v: %s", got, tt.gains, res.JSON())
			}
			if tt.gains {
				return
			}
			// And the system's own set-user-ID programs gain nothing:
			// su cannot become root.
			res = runAs(t, tool, "su -c id root </dev/null 2>&1; passwd -S root 2>&1", tt.opts)
			if strings.Contains(res.Stdout, "uid=0") || strings.Contains(res.Stdout, "root P") || strings.Contains(res.Stdout, "root L") {
				t.Fatalf("a set-user-ID program gained root: %s", res.JSON())
			}
		})
	}
}

// The fenced spawn against the unfenced one, in the same run (goal: at
// most 2 ms more). Each iteration runs the same command unfenced and then
// fenced, so a machine whose load drifts weighs on both alike; the
// metrics are each one's mean and the difference.
func BenchmarkFencedSpawn(b *testing.B) {
	needFence(b)
	for _, bb := range []struct {
		name string
		opts tools.RunOptions
	}{
		{"read-only", byReadOnly},
		{"model-low", byModel},
	} {
		b.Run(bb.name, func(b *testing.B) {
			tool := fencedTool(b, nil)
			var plain, fenced time.Duration
			for b.Loop() {
				for i, opts := range []tools.RunOptions{approved, bb.opts} {
					start := time.Now()
					if res := runAs(b, tool, "true", opts); res.Status != tools.StatusOK {
						b.Fatal(res.JSON())
					}
					if i == 0 {
						plain += time.Since(start)
					} else {
						fenced += time.Since(start)
					}
				}
			}
			n := float64(b.N) * float64(time.Millisecond)
			b.ReportMetric(float64(plain)/n, "unfenced-ms")
			b.ReportMetric(float64(fenced)/n, "fenced-ms")
			b.ReportMetric(float64(fenced-plain)/n, "extra-ms")
		})
	}
}

// A call the kernel cannot fence does not run, and its result says so in
// words the model can act on (and the agent cards it when asked again).
func TestNotFencedSaysSo(t *testing.T) {
	for _, err := range []error{fmt.Errorf("%w: %w: no Landlock", fence.ErrSetup, fence.ErrUnavailable), fmt.Errorf("%w: E2BIG", fence.ErrSetup)} {
		r := notFenced(err)
		if r.Executed || r.Status == tools.StatusOK || !strings.Contains(r.Fence, "risk_level high") || !strings.Contains(r.Error, "did not run") {
			t.Errorf("%v: %s", err, r.JSON())
		}
	}
}
