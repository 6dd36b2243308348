package mcptool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testenv"
	"github.com/countersign/countersign/tools"
	"github.com/countersign/countersign/tools/fence"
	"github.com/countersign/countersign/tools/shelltool"
)

// commandUser is the run_as a bot running as root gives its commands, and
// so its MCP servers.
func commandUser() string { return shelltool.RootDefault("", os.Geteuid()) }

// openDir is a folder any user may write, outside the test's own
// (private) temporary folder.
func openDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "mcptool-open-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// reachable makes the npm servers' folder one the command user may enter
// (.ci/mcp-servers makes it private to the user who installed them).
func reachable(t *testing.T) {
	t.Helper()
	if err := os.Chmod(testenv.MCPDir(t), 0o755); err != nil {
		t.Fatal(err)
	}
}

func needRootAndFence(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the server runs as the command user")
	}
	if _, err := fence.Probe(); err != nil {
		t.Skipf("no kernel fence here: %v", err)
	}
}

// uidOf is the real uid of process pid.
func uidOf(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			return strings.Fields(rest)[0]
		}
	}
	t.Fatalf("no Uid line in the status of %d", pid)
	return ""
}

// A stdio server of a bot running as root runs as the command tool's user
// (nobody), and cannot read the bot's environment (its Slack token, its
// model key) through /proc; as root, the same server can (the control:
// it is the user that stops it).
func TestServerCannotReadTheBot(t *testing.T) {
	needRootAndFence(t)
	reachable(t)
	self := fmt.Sprintf("/proc/%d", os.Getpid())
	for _, tt := range []struct {
		name  string
		opts  Options
		uid   string
		reads bool
	}{
		{"as the command user, fenced", Options{RunAs: commandUser(), Fence: true}, "65534", false},
		{"as root (the control)", Options{}, "0", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, warns := start(t, Config{Servers: map[string]ServerConfig{
				"fs": {Command: []string{bin(t, "mcp-server-filesystem"), self}},
			}}, tt.opts)
			if len(warns) > 0 {
				t.Fatalf("warnings: %v", warns)
			}
			read := byName(t, m, "fs__read_text_file")
			if got := uidOf(t, read.srv.proc.pid()); got != tt.uid {
				t.Errorf("the server runs as uid %s, want %s", got, tt.uid)
			}
			res := read.Run(context.Background(), json.RawMessage(`{"path":"`+self+`/environ"}`), tools.RunOptions{})
			if got := strings.Contains(res.Content, "PATH="); got != tt.reads {
				t.Fatalf("read the bot's environment: %v, want %v: %+v", got, tt.reads, res)
			}
		})
	}
}

// A fenced stdio server writes only in its own temporary folder and the
// folders of mcp.servers.<name>.write.
func TestFencedServerWrites(t *testing.T) {
	needRootAndFence(t)
	reachable(t)
	for _, tt := range []struct {
		name   string
		write  bool
		writes bool
	}{
		{"no write setting", false, false},
		{"write: the folder", true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := openDir(t)
			sc := ServerConfig{Command: []string{bin(t, "mcp-server-filesystem"), dir}}
			if tt.write {
				sc.Write = []string{dir}
			}
			m, warns := start(t, Config{Servers: map[string]ServerConfig{"fs": sc}}, Options{RunAs: commandUser(), Fence: true})
			if len(warns) > 0 {
				t.Fatalf("warnings: %v", warns)
			}
			write := byName(t, m, "fs__write_file")
			res := write.Run(context.Background(), json.RawMessage(`{"path":"`+dir+`/new.txt","content":"hello"}`), tools.RunOptions{})
			_, err := os.Stat(filepath.Join(dir, "new.txt"))
			if got := err == nil; got != tt.writes {
				t.Fatalf("wrote: %v, want %v: %+v", got, tt.writes, res)
			}
		})
	}
}

// The end of a shell command (its sweep of leftovers) leaves a stdio
// server alone: a call in flight finishes, and the server serves on.
func TestShellCommandEndLeavesServer(t *testing.T) {
	if err := shelltool.FenceProcess(true); err != nil {
		t.Fatal(err)
	}
	sh, err := shelltool.New(shelltool.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := start(t, Config{Servers: map[string]ServerConfig{
		"everything": {Command: []string{bin(t, "mcp-server-everything")}},
	}}, Options{})
	long := byName(t, m, "everything__trigger-long-running-operation")
	pid := long.srv.proc.pid()
	done := make(chan tools.Result, 1)
	go func() {
		done <- long.Run(context.Background(), json.RawMessage(`{"duration":2,"steps":2}`), tools.RunOptions{})
	}()
	for _, command := range []string{"true", "sleep 0.2", "setsid sleep 0.1 &"} {
		if res := sh.Run(context.Background(), json.RawMessage(`{"command":"`+command+`"}`), tools.RunOptions{}); res.Status != tools.StatusOK {
			t.Fatalf("%s: %+v", command, res)
		}
	}
	if res := <-done; res.Status != tools.StatusOK {
		t.Fatalf("the call in flight during the shell commands: %+v", res)
	}
	if long.srv.proc.pid() != pid {
		t.Fatalf("the server was restarted (pid %d, was %d)", long.srv.proc.pid(), pid)
	}
}

// helperPIDFile makes TestServerDiesWithTheBot, run again in a fresh test
// binary, the bot that is killed: it starts the server and writes its pid.
const helperPIDFile = "COUNTERSIGN_MCPTOOL_PID_FILE"

// A bot killed with -9 leaves no stdio server behind, running as the
// command user and fenced or not.
func TestServerDiesWithTheBot(t *testing.T) {
	if file := os.Getenv(helperPIDFile); file != "" {
		opts := Options{}
		if os.Getenv(helperPIDFile+"_AS") != "" {
			opts = Options{RunAs: commandUser(), Fence: true}
		}
		m, _ := start(t, Config{Servers: map[string]ServerConfig{
			"fs": {Command: []string{bin(t, "mcp-server-filesystem"), os.TempDir()}},
		}}, opts)
		read := byName(t, m, "fs__read_text_file")
		pids := fmt.Sprintf("%d %d", read.srv.proc.pid(), read.srv.proc.prog.Pgid())
		if err := os.WriteFile(file+".tmp", []byte(pids), 0o600); err != nil || os.Rename(file+".tmp", file) != nil {
			t.Fatal("writing the pid file")
		}
		// Wait for the parent's kill -9: a signal never sent keeps this
		// process waiting without a timer, and without the runtime taking
		// it for a deadlock.
		never := make(chan os.Signal, 1)
		signal.Notify(never, syscall.SIGUSR2)
		<-never
		return
	}
	testenv.MCPDir(t)
	for _, as := range []string{"", "command user"} {
		t.Run("as "+cmpOr(as, "the bot's user"), func(t *testing.T) {
			if as != "" {
				needRootAndFence(t)
				reachable(t)
			}
			file := filepath.Join(t.TempDir(), "pids")
			cmd := exec.Command(os.Args[0], "-test.run=^TestServerDiesWithTheBot$")
			cmd.Env = append(os.Environ(), helperPIDFile+"="+file)
			if as != "" {
				cmd.Env = append(cmd.Env, helperPIDFile+"_AS=1")
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var b []byte
			poll(t, 30*time.Second, "the helper bot's pid file", func() bool {
				var err error
				b, err = os.ReadFile(file)
				return err == nil
			})
			f := strings.Fields(string(b))
			server, _ := strconv.Atoi(f[0])
			group, _ := strconv.Atoi(f[1])
			if !alive(server) {
				t.Fatalf("the server %d is not running", server)
			}
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			poll(t, 10*time.Second, "the server and its group to die with the bot", func() bool {
				return !alive(server) && !alive(group) // the group's leader is the guard
			})
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && !strings.HasPrefix(strings.TrimSpace(string(b[i+1:])), "Z")
}

// poll waits until cond holds, or fails the test after limit.
func poll(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	testenv.Eventually(t, limit, cond, what)
}
