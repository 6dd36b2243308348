package shelltool

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testenv"
	"github.com/countersign/countersign/tools"
)

// openDir is a fresh folder every user can enter and write, under the
// system's temporary folder (t.TempDir's parent is the test's own, mode
// 0700): the root of commands that run as another user.
func openDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "shelltool-open-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: it runs commands as another user")
	}
}

func TestRootDefault(t *testing.T) {
	tests := []struct {
		name  string
		runAs string
		euid  int
		want  string
	}{
		{"root without run_as: nobody", "", 0, Unprivileged},
		{"root with run_as", "1000:1000", 0, "1000:1000"},
		{"root that asks for root", "root", 0, "root"},
		{"another user keeps its own", "", 1000, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RootDefault(tt.runAs, tt.euid); got != tt.want {
				t.Errorf("RootDefault(%q, %d) = %q, want %q", tt.runAs, tt.euid, got, tt.want)
			}
		})
	}
}

// A bot running as root runs its commands as nobody by default, and then
// a command cannot read the bot's environment (/proc/$PPID/environ, as it
// was when the bot started: the bot is the shell's parent) nor its
// configuration file. With run_as: root
// (the opt-out) the same command reads the environment: the default is
// what stops it.
func TestCommandsCannotReadTheBot(t *testing.T) {
	needRoot(t)
	config := filepath.Join(t.TempDir(), "countersign.yaml")
	if err := os.WriteFile(config, []byte("openai_api_key: hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := openDir(t)
	fenced := newTool(t, func(c *Config) { c.Root, c.RunAs = root, RootDefault("", 0) })
	for _, command := range []string{"cat /proc/$PPID/environ", "cat " + config, "id -u"} {
		res := run(t, fenced, cmdArgs{Command: command})
		switch {
		case command == "id -u":
			if strings.TrimSpace(res.Stdout) == "0" {
				t.Errorf("the command runs as root: %s", res.JSON())
			}
		case res.Status == tools.StatusOK || strings.Contains(res.Stdout, "PATH=") || strings.Contains(res.Stdout, "hunter2"):
			t.Errorf("%s as %s: %s; want it refused", command, Unprivileged, res.JSON())
		}
	}
	asRoot := newTool(t, func(c *Config) { c.Root, c.RunAs = root, "root" })
	if res := run(t, asRoot, cmdArgs{Command: "cat /proc/$PPID/environ"}); res.Status != tools.StatusOK || !strings.Contains(res.Stdout, "PATH=") {
		t.Errorf("with run_as root the command could not read the environment (%s): the test shows nothing", res.JSON())
	}
}

// helperDirEnv makes TestCommandsDieWithTheBot, run again in a fresh test
// binary, the bot that is killed: it runs a command that writes its process
// group to the folder named and waits.
const (
	helperDirEnv   = "COUNTERSIGN_SHELLTOOL_DIE_DIR"
	helperRunAsEnv = "COUNTERSIGN_SHELLTOOL_DIE_RUN_AS"
)

// TestCommandsDieWithTheBot kills a bot (a fresh copy of the test binary)
// with SIGKILL while its command runs, a shell with a child of its own, and
// checks that the command's whole process group dies with it: as the
// bot's own user, and with run_as (a change of user that must not lose the
// parent-death signal).
func TestCommandsDieWithTheBot(t *testing.T) {
	if dir := os.Getenv(helperDirEnv); dir != "" {
		tool := fencedTool(t, func(c *Config) {
			c.Root, c.RunAs, c.Timeout = dir, os.Getenv(helperRunAsEnv), 5*time.Minute
		})
		run(t, tool, cmdArgs{Command: `cut -d' ' -f5 /proc/$$/stat > pgid.tmp && mv pgid.tmp pgid; sleep 300 & sleep 300`})
		t.Fatal("the command ended although nothing killed it")
	}
	cases := []struct{ name, runAs string }{{"own user", ""}, {"run_as nobody", "nobody"}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.runAs != "" {
				needRoot(t)
			}
			dir := openDir(t)
			bot := exec.Command(os.Args[0], "-test.run=^TestCommandsDieWithTheBot$", "-test.count=1")
			bot.Env = append(os.Environ(), helperDirEnv+"="+dir, helperRunAsEnv+"="+tc.runAs)
			if err := bot.Start(); err != nil {
				t.Fatal(err)
			}
			pgid := 0
			if !testenv.Within(time.Minute, func() bool {
				if b, err := os.ReadFile(filepath.Join(dir, "pgid")); err == nil {
					pgid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
				}
				return pgid != 0
			}) {
				_ = bot.Process.Kill()
				t.Fatal("the bot's command never wrote its process group")
			}
			if n := len(liveInGroup(pgid)); n < 3 {
				t.Fatalf("process group %d holds %d live processes before the kill, want the guard, the shell and its sleeps", pgid, n)
			}
			if err := bot.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = bot.Wait()
			var left []int
			if !testenv.Within(time.Minute, func() bool { left = liveInGroup(pgid); return len(left) == 0 }) {
				for _, p := range left {
					_ = syscall.Kill(p, syscall.SIGKILL)
				}
				t.Fatalf("processes %v of the command's group outlived the bot killed with -9", left)
			}
		})
	}
}

// liveInGroup lists the processes of group pgid that are not zombies.
func liveInGroup(pgid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:])) // state ppid pgrp …
		if len(f) >= 3 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			out = append(out, pid)
		}
	}
	return out
}

// KillAll ends every running command's group at once, and the run says the
// bot quit rather than that the command was killed by some signal.
func TestKillAllEndsRunningCommands(t *testing.T) {
	tool := fencedTool(t, nil)
	done := make(chan tools.Result, 1)
	go func() { done <- run(t, tool, cmdArgs{Command: "sleep 300 & sleep 300", Timeout: seconds(120)}) }()
	t.Cleanup(func() { forcedQuit.Store(false) })
	testenv.Eventually(t, 30*time.Second, func() bool {
		children.mu.Lock()
		defer children.mu.Unlock()
		return len(children.guards) > 0
	}, "the command to start")
	if n := KillAll(); n != 1 {
		t.Errorf("KillAll killed %d groups, want 1", n)
	}
	select {
	case res := <-done:
		if res.Status != tools.StatusError || !strings.Contains(res.Error, "forced to quit") {
			t.Errorf("result after KillAll: %s", res.JSON())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the run did not return after KillAll")
	}
}

// A command run as another user in a folder that user may not enter is
// refused with a message that names the user, the folder and the fix, not
// a bare "fork/exec: permission denied".
func TestRunAsUserWhoCannotEnterTheRoot(t *testing.T) {
	needRoot(t)
	tool := newTool(t, func(c *Config) { c.RunAs = Unprivileged }) // t.TempDir: 0700
	res := run(t, tool, cmdArgs{Command: "true"})
	if res.Executed || !strings.Contains(res.Error, Unprivileged) || !strings.Contains(res.Error, tool.root) || !strings.Contains(res.Error, "run_as") {
		t.Errorf("result %s; want it not run, naming the user, the folder and run_as", res.JSON())
	}
}

// helperDumpEnv makes TestNonRootCommandsCannotReadTheBot, run again as
// nobody, the bot: "fenced" or "dumpable" (keep_dumpable).
const helperDumpEnv = "COUNTERSIGN_SHELLTOOL_NONROOT"

// A bot that is not root, with no run_as, runs commands as its own user:
// what keeps its environment from them is FenceProcess marking it not
// dumpable. Run for real as nobody (the test binary is copied where nobody
// may run it): fenced, `cat /proc/$PPID/environ` fails; with keep_dumpable
// it succeeds, which shows the fence is what stops it.
func TestNonRootCommandsCannotReadTheBot(t *testing.T) {
	if mode := os.Getenv(helperDumpEnv); mode != "" {
		if err := FenceProcess(mode == "dumpable"); err != nil {
			t.Fatal(err)
		}
		tool := newTool(t, func(c *Config) { c.Root = os.Getenv(helperDirEnv) })
		res := run(t, tool, cmdArgs{Command: "cat /proc/$PPID/environ"})
		if read := res.Status == tools.StatusOK && strings.Contains(res.Stdout, "PATH="); read != (mode == "dumpable") {
			t.Fatalf("%s bot: the command's read of its environment: %s", mode, res.JSON())
		}
		return
	}
	needRoot(t)
	dir := openDir(t)
	bin := filepath.Join(dir, "shelltool.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"fenced", "dumpable"} {
		t.Run(mode, func(t *testing.T) {
			bot := exec.Command(bin, "-test.run=^TestNonRootCommandsCannotReadTheBot$", "-test.count=1", "-test.v")
			bot.Dir = dir
			bot.Env = []string{"PATH=" + DefaultPath, "HOME=" + dir, helperDumpEnv + "=" + mode, helperDirEnv + "=" + dir}
			bot.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
			out, err := bot.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: TestNonRootCommandsCannotReadTheBot") {
				t.Fatalf("the bot run as nobody: %v\n%s", err, out)
			}
		})
	}
}
