package shelltool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testenv"
	"github.com/countersign/countersign/tools"
)

func newTool(t testing.TB, edit func(*Config)) *Tool {
	t.Helper()
	cfg := Config{Root: t.TempDir(), ProgressInterval: 50 * time.Millisecond}
	if edit != nil {
		edit(&cfg)
	}
	tool, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return tool
}

// fencedTool is newTool in a process fenced the way main fences it.
func fencedTool(t testing.TB, edit func(*Config)) *Tool {
	t.Helper()
	if err := FenceProcess(false); err != nil {
		t.Fatalf("FenceProcess: %v", err)
	}
	return newTool(t, edit)
}

func run(t testing.TB, tool *Tool, args any) tools.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return tool.Run(context.Background(), raw, tools.RunOptions{})
}

type cmdArgs struct {
	Command string   `json:"command"`
	Workdir string   `json:"workdir,omitempty"`
	Timeout *float64 `json:"timeout_seconds,omitempty"`
}

func seconds(s float64) *float64 { return &s }

func TestRunOutputAndExitCode(t *testing.T) {
	tool := newTool(t, nil)
	if err := os.Mkdir(filepath.Join(tool.root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		args       cmdArgs
		status     tools.Status
		code       int
		stdout     string
		stderr     string
		errContain string
	}{
		{name: "stdout", args: cmdArgs{Command: "echo hello"}, status: tools.StatusOK, stdout: "hello\n"},
		{name: "stderr", args: cmdArgs{Command: "echo oops >&2"}, status: tools.StatusOK, stderr: "oops\n"},
		{name: "exit code", args: cmdArgs{Command: "echo partial; exit 3"}, status: tools.StatusError, code: 3, stdout: "partial\n", errContain: "status 3"},
		{name: "runs in root", args: cmdArgs{Command: "pwd"}, status: tools.StatusOK, stdout: tool.root + "\n"},
		{name: "runs in workdir", args: cmdArgs{Command: "pwd", Workdir: "sub"}, status: tools.StatusOK, stdout: filepath.Join(tool.root, "sub") + "\n"},
		{name: "workdir dot", args: cmdArgs{Command: "pwd", Workdir: "./sub/.."}, status: tools.StatusOK, stdout: tool.root + "\n"},
		{name: "killed by signal", args: cmdArgs{Command: "kill -TERM $$"}, status: tools.StatusError, code: 128 + 15, errContain: "SIGTERM"},
		{name: "bash syntax", args: cmdArgs{Command: "if then"}, status: tools.StatusError, code: 2, errContain: "status 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, tool, tt.args)
			if res.Status != tt.status || !res.Executed {
				t.Fatalf("status %q executed %v, want %q executed: %s", res.Status, res.Executed, tt.status, res.JSON())
			}
			if res.ExitCode == nil || *res.ExitCode != tt.code {
				t.Errorf("exit code %v, want %d", res.ExitCode, tt.code)
			}
			if res.Stdout != tt.stdout {
				t.Errorf("stdout %q, want %q", res.Stdout, tt.stdout)
			}
			if tt.stderr != "" && res.Stderr != tt.stderr {
				t.Errorf("stderr %q, want %q", res.Stderr, tt.stderr)
			}
			if !strings.Contains(res.Error, tt.errContain) {
				t.Errorf("error %q does not mention %q", res.Error, tt.errContain)
			}
		})
	}
}

// The fence holds with the assessor bypassed: a secret in the bot's
// environment is not visible to the command.
func TestEnvironmentIsScrubbed(t *testing.T) {
	t.Setenv("COUNTERSIGN_TEST_SECRET", "hunter2")
	t.Setenv("OPENAI_API_KEY", "sk-test-secret")
	t.Setenv("EXTRA_ALLOWED", "visible")
	t.Setenv("LANG", "C.UTF-8")
	tool := newTool(t, func(c *Config) {
		c.Env = []string{"EXTRA_ALLOWED"}
		c.SetEnv = map[string]string{"FIXED": "set-by-config"}
	})
	res := run(t, tool, cmdArgs{Command: "env"})
	if res.Status != tools.StatusOK {
		t.Fatalf("env failed: %s", res.JSON())
	}
	for _, secret := range []string{"hunter2", "COUNTERSIGN_TEST_SECRET", "sk-test-secret", "OPENAI_API_KEY"} {
		if strings.Contains(res.Stdout, secret) {
			t.Errorf("the command saw %q:\n%s", secret, res.Stdout)
		}
	}
	for _, want := range []string{"EXTRA_ALLOWED=visible", "FIXED=set-by-config", "LANG=C.UTF-8", "PATH="} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("the command did not get %q:\n%s", want, res.Stdout)
		}
	}
}

func TestStdinIsClosed(t *testing.T) {
	tool := newTool(t, nil)
	start := time.Now()
	res := run(t, tool, cmdArgs{Command: "cat; read -r line; echo \"read=$?\"", Timeout: seconds(10)})
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("cat waited for input: took %v", took)
	}
	if res.Status != tools.StatusOK || res.Stdout != "read=1\n" {
		t.Fatalf("want an empty stdin (read fails at EOF), got %s", res.JSON())
	}
}

// A time limit kills the whole process group: the backgrounded grandchild
// goes too, and Run returns at the limit rather than after sleep 100.
func TestTimeoutKillsGrandchildren(t *testing.T) {
	tool := newTool(t, nil)
	start := time.Now()
	res := run(t, tool, cmdArgs{Command: "sleep 100 & echo $!; wait", Timeout: seconds(1)})
	took := time.Since(start)
	if took > 5*time.Second {
		t.Fatalf("Run took %v with a 1s limit", took)
	}
	if res.Status != tools.StatusError || !res.Executed || !strings.Contains(res.Error, "timed out after 1s") {
		t.Fatalf("want a timeout error, got %s", res.JSON())
	}
	if res.ExitCode == nil || *res.ExitCode != 128+int(syscall.SIGKILL) {
		t.Errorf("exit code %v, want %d (SIGKILL)", res.ExitCode, 128+int(syscall.SIGKILL))
	}
	pid, err := strconv.Atoi(strings.TrimSpace(res.Stdout))
	if err != nil {
		t.Fatalf("no grandchild pid in stdout %q", res.Stdout)
	}
	waitGone(t, pid)
}

// A command that exits while a background child still holds its stdout
// returns at once, and the child does not outlive the call.
func TestBackgroundChildDoesNotHangOrSurvive(t *testing.T) {
	tool := newTool(t, nil)
	start := time.Now()
	res := run(t, tool, cmdArgs{Command: "sleep 100 & echo $!", Timeout: seconds(30)})
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("Run took %v: the background child's pipe held it", took)
	}
	if res.Status != tools.StatusOK {
		t.Fatalf("want ok, got %s", res.JSON())
	}
	pid, err := strconv.Atoi(strings.TrimSpace(res.Stdout))
	if err != nil {
		t.Fatalf("no child pid in stdout %q", res.Stdout)
	}
	waitGone(t, pid)
}

// waitGone fails unless pid is dead (gone, or a zombie nobody reaped yet)
// within two seconds.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	if testenv.Within(2*time.Second, func() bool {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true
		}
		// The state follows the ")" that closes the command name.
		i := strings.LastIndexByte(string(stat), ')')
		return i > 0 && strings.HasPrefix(string(stat[i+1:]), " Z")
	}) {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	t.Fatalf("process %d is still running", pid)
}

func TestCancelKillsRun(t *testing.T) {
	tool := newTool(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	res := tool.Run(ctx, json.RawMessage(`{"command":"sleep 100"}`), tools.RunOptions{})
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("Run took %v after cancel", took)
	}
	if res.Status != tools.StatusError || !strings.Contains(res.Error, "stopped") {
		t.Fatalf("want a stopped error, got %s", res.JSON())
	}
}

func TestOutputCap(t *testing.T) {
	tool := newTool(t, func(c *Config) { c.OutputLimit = 1000 })
	res := run(t, tool, cmdArgs{Command: "head -c 100000 /dev/zero | tr '\\0' a; head -c 5000 /dev/zero | tr '\\0' b >&2"})
	if res.Status != tools.StatusOK {
		t.Fatalf("run failed: %s", res.JSON())
	}
	if len(res.Stdout) != 1000 || len(res.Stderr) != 1000 {
		t.Errorf("kept %d stdout and %d stderr bytes, want 1000 each", len(res.Stdout), len(res.Stderr))
	}
	if !res.Truncated {
		t.Error("truncated not set")
	}
	for _, want := range []string{"stdout was 100,000 bytes; only the first 1,000 are shown", "stderr was 5,000 bytes"} {
		if !strings.Contains(res.Note, want) {
			t.Errorf("note %q does not say %q", res.Note, want)
		}
	}
}

func TestTimeoutIsCapped(t *testing.T) {
	tool := newTool(t, func(c *Config) { c.Timeout = time.Second; c.MaxTimeout = 2 * time.Second })
	res := run(t, tool, cmdArgs{Command: "true", Timeout: seconds(1000)})
	if res.Status != tools.StatusOK || !strings.Contains(res.Note, "capped at 2s") {
		t.Fatalf("want ok with a capped note, got %s", res.JSON())
	}
}

func TestProgress(t *testing.T) {
	tool := newTool(t, nil)
	var mu sync.Mutex
	var got []tools.Progress
	opts := tools.RunOptions{Progress: func(p tools.Progress) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, p)
	}}
	res := tool.Run(context.Background(), json.RawMessage(`{"command":"echo first; sleep 0.6; echo second"}`), opts)
	if res.Status != tools.StatusOK {
		t.Fatalf("run failed: %s", res.JSON())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) < 3 {
		t.Fatalf("got %d progress reports in 0.6s at 50ms, want several", len(got))
	}
	last := got[len(got)-1]
	if !strings.Contains(last.Tail, "first") || last.ElapsedMS <= 0 {
		t.Errorf("last progress %+v lacks the output tail or elapsed time", last)
	}
	for i := 1; i < len(got); i++ {
		if got[i].ElapsedMS < got[i-1].ElapsedMS {
			t.Errorf("elapsed went backwards: %d then %d", got[i-1].ElapsedMS, got[i].ElapsedMS)
		}
	}
}

// The workdir fence holds with the assessor bypassed.
func TestWorkdirFence(t *testing.T) {
	tool := newTool(t, nil)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(tool.root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(tool.root, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("in", filepath.Join(tool.root, "inside-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tool.root, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		workdir string
		status  tools.Status
		errText string
	}{
		{name: "parent", workdir: "../", status: tools.StatusDenied, errText: "leaves the working root"},
		{name: "deep escape", workdir: "in/../../x", status: tools.StatusDenied, errText: "leaves the working root"},
		{name: "absolute", workdir: "/tmp", status: tools.StatusDenied, errText: "absolute"},
		{name: "symlink out", workdir: "escape", status: tools.StatusDenied, errText: "symbolic link"},
		{name: "missing", workdir: "nope", status: tools.StatusError, errText: "does not exist"},
		{name: "not a directory", workdir: "file", status: tools.StatusError, errText: "not a directory"},
		{name: "symlink inside", workdir: "inside-link", status: tools.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			marker := filepath.Join(outside, "ran")
			res := run(t, tool, cmdArgs{Command: "touch " + marker, Workdir: tt.workdir})
			if res.Status != tt.status || !strings.Contains(res.Error, tt.errText) {
				t.Fatalf("got %s, want %s with %q", res.JSON(), tt.status, tt.errText)
			}
			_, err := os.Stat(marker)
			if ran := err == nil; ran != (tt.status == tools.StatusOK) {
				t.Errorf("command ran: %v, want %v", ran, tt.status == tools.StatusOK)
			}
			os.Remove(marker)
			if tt.status != tools.StatusOK && (res.Executed || !strings.Contains(res.Message, "did not run")) {
				t.Errorf("a refusal must say it did not run: %s", res.JSON())
			}
		})
	}
}

func TestArgumentErrors(t *testing.T) {
	tool := newTool(t, nil)
	tests := []struct {
		name string
		raw  string
		want string
	}{
		{name: "empty", raw: ``, want: `argument "command": is required`},
		{name: "null", raw: `null`, want: `argument "command": is required`},
		{name: "no command", raw: `{}`, want: `argument "command": is required`},
		{name: "blank command", raw: `{"command":"  "}`, want: `argument "command": is required`},
		{name: "command not a string", raw: `{"command":1}`, want: `argument "command": must be a string, not number`},
		{name: "workdir not a string", raw: `{"command":"true","workdir":["a"]}`, want: `argument "workdir": must be a string`},
		{name: "timeout as string", raw: `{"command":"true","timeout_seconds":"5"}`, want: `argument "timeout_seconds": must be a number`},
		{name: "timeout negative", raw: `{"command":"true","timeout_seconds":-1}`, want: `argument "timeout_seconds": must be a positive`},
		{name: "timeout zero", raw: `{"command":"true","timeout_seconds":0}`, want: `argument "timeout_seconds": must be a positive`},
		{name: "unknown field", raw: `{"command":"true","shell":"zsh"}`, want: `argument "shell": is not an argument`},
		{name: "array", raw: `["true"]`, want: "must be a JSON object"},
		{name: "trailing data", raw: `{"command":"true"} {"command":"rm -rf /"}`, want: "unexpected text after"},
		{name: "bad json", raw: `{"command":`, want: "not valid JSON"},
		{name: "NUL in command", raw: `{"command":"true\u0000"}`, want: `argument "command": holds a NUL byte`},
		{name: "given twice", raw: `{"command":"ls","command":"rm -rf x"}`, want: `argument "command": is given twice`},
		{name: "case-folded name", raw: `{"Command":"ls"}`, want: `argument "Command": is not an argument`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := tool.Run(context.Background(), json.RawMessage(tt.raw), tools.RunOptions{})
			if res.Status != tools.StatusError || res.Executed || !strings.Contains(res.Error, tt.want) {
				t.Fatalf("got %s, want an unexecuted error with %q", res.JSON(), tt.want)
			}
			if !strings.Contains(res.Message, "did not run") {
				t.Errorf("message %q does not say the command did not run", res.Message)
			}
		})
	}
}

func TestRiskLevelIsAccepted(t *testing.T) {
	tool := newTool(t, nil)
	res := tool.Run(context.Background(), json.RawMessage(`{"command":"echo ok","risk_level":"LOW"}`), tools.RunOptions{})
	if res.Status != tools.StatusOK || res.Stdout != "ok\n" {
		t.Fatalf("risk_level broke the call: %s", res.JSON())
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{name: "no root", cfg: Config{}, want: "root is required"},
		{name: "missing root", cfg: Config{Root: filepath.Join(dir, "nope")}, want: "root"},
		{name: "root is a file", cfg: Config{Root: file}, want: "not a directory"},
		{name: "max below timeout", cfg: Config{Root: dir, Timeout: time.Minute, MaxTimeout: time.Second}, want: "max_timeout"},
		{name: "negative timeout", cfg: Config{Root: dir, Timeout: -time.Second}, want: "timeout"},
		{name: "negative output", cfg: Config{Root: dir, OutputLimit: -1}, want: "output_limit"},
		{name: "bad env name", cfg: Config{Root: dir, Env: []string{"A=B"}}, want: "env"},
		{name: "bad set_env name", cfg: Config{Root: dir, SetEnv: map[string]string{"1X": "y"}}, want: "set_env"},
		{name: "missing shell", cfg: Config{Root: dir, Shell: "no-such-shell-xyz"}, want: "shell"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New error %v, want one naming %q", err, tt.want)
			}
		})
	}
}

func TestSchema(t *testing.T) {
	tool := newTool(t, nil)
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(tool.Schema(), &schema); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	for _, p := range []string{"command", "workdir", "timeout_seconds"} {
		if _, ok := schema.Properties[p]; !ok {
			t.Errorf("schema lacks %q", p)
		}
	}
	if _, ok := schema.Properties["risk_level"]; ok {
		t.Error("risk_level belongs to the registry, not the tool's schema")
	}
	if tool.Name() != "execute_command" || tool.Description() == "" {
		t.Errorf("name %q description %q", tool.Name(), tool.Description())
	}
}

// The bot's environment is out of reach through /proc too: not dumpable
// for a command of the bot's own user, and a different user (run_as) for a
// bot running as root.
func TestBotEnvironmentIsUnreadable(t *testing.T) {
	edit := func(c *Config) {}
	if os.Geteuid() == 0 {
		edit = func(c *Config) {
			c.RunAs = "65534:65534"
			// nobody must be able to enter the root.
			for _, d := range []string{c.Root, filepath.Dir(c.Root)} {
				if err := os.Chmod(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	tool := fencedTool(t, edit)
	res := run(t, tool, cmdArgs{Command: "id -u; cat /proc/$PPID/environ >/dev/null && echo READABLE"})
	if strings.Contains(res.Stdout, "READABLE") {
		t.Fatalf("the command read the bot's environment: %s", res.JSON())
	}
	if !strings.Contains(res.Stderr, "Permission denied") {
		t.Fatalf("want permission denied, got %s", res.JSON())
	}
	if os.Geteuid() == 0 && strings.TrimSpace(strings.SplitN(res.Stdout, "\n", 2)[0]) != "65534" {
		t.Errorf("run_as did not apply: %s", res.JSON())
	}
}

func TestRunAsParsing(t *testing.T) {
	tests := []struct {
		in       string
		uid, gid uint32
		err      bool
	}{
		{in: "1000:1001", uid: 1000, gid: 1001},
		{in: "1000", uid: 1000, gid: 1000},
		{in: "root", uid: 0, gid: 0},
		{in: "1000:staff", err: true},
		{in: "no-such-user-xyz", err: true},
	}
	for _, tt := range tests {
		c, err := credential(tt.in)
		if (err != nil) != tt.err {
			t.Errorf("credential(%q) error %v", tt.in, err)
			continue
		}
		if err == nil && (c.Uid != tt.uid || c.Gid != tt.gid) {
			t.Errorf("credential(%q) = %d:%d", tt.in, c.Uid, c.Gid)
		}
	}
}

// A command sees only standard input, output and error: a descriptor the
// bot inherited without close-on-exec (from its supervisor, or a library)
// is not passed on.
func TestNoFileDescriptorIsInherited(t *testing.T) {
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil { // no O_CLOEXEC
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Close(p[0]); _ = syscall.Close(p[1]) })
	tool := newTool(t, nil)
	// 3 is the directory bash reads to expand the glob.
	res := run(t, tool, cmdArgs{Command: `for f in /proc/$$/fd/*; do printf '%s ' "${f##*/}"; done`})
	if res.Status != tools.StatusOK || strings.TrimSpace(res.Stdout) != "0 1 2 3" {
		t.Fatalf("the command has descriptors %q, want 0 1 2 (and 3, the glob's directory; leaked pipe %d, %d): %s", res.Stdout, p[0], p[1], res.JSON())
	}
}

// A process that leaves the command's process group (setsid, job control)
// is killed when the command ends, by its time limit or by itself, and so
// are its own children.
func TestEscapedProcessesDoNotSurvive(t *testing.T) {
	tests := []struct {
		name    string
		command string
		timeout float64
	}{
		{name: "setsid", command: "setsid sleep 100 & sleep 0.2; echo $!"},
		{name: "setsid at the time limit", command: "setsid sleep 100 & echo $!; sleep 100", timeout: 1},
		{name: "job control", command: "set -m; sleep 100 & echo $!; sleep 0.2"},
		{name: "child of a setsid shell", command: "setsid bash -c 'sleep 100 & echo $!; wait' & sleep 0.3"},
		{name: "double fork in a new session", command: "setsid bash -c '(sleep 100 & echo $!)' ; sleep 0.2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := fencedTool(t, nil)
			a := cmdArgs{Command: tt.command, Timeout: seconds(10)}
			if tt.timeout > 0 {
				a.Timeout = seconds(tt.timeout)
			}
			start := time.Now()
			res := run(t, tool, a)
			if took := time.Since(start); took > 8*time.Second {
				t.Fatalf("Run took %v", took)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(res.Stdout))
			if err != nil {
				t.Fatalf("no pid in stdout: %s", res.JSON())
			}
			waitGone(t, pid)
		})
	}
}

// Commands running side by side never take each other for leftovers: the
// sweep at the end of one leaves the other's shell alone.
func TestConcurrentRunsSurviveEachOthersSweeps(t *testing.T) {
	tool := fencedTool(t, nil)
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for i := range 8 {
		wg.Go(func() {
			for j := range 5 {
				cmd := "sleep 0.0$RANDOM; echo ok"
				if (i+j)%3 == 0 {
					cmd = "setsid sleep 100 & sleep 0.05; echo ok"
				}
				res := run(t, tool, cmdArgs{Command: cmd, Timeout: seconds(20)})
				if res.Status != tools.StatusOK || res.Stdout != "ok\n" {
					errs <- res.JSON()
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("a run failed: %s", e)
	}
}
