package fence

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func needLandlock(t testing.TB) {
	t.Helper()
	if _, err := Probe(); err != nil {
		t.Skipf("no kernel fence here: %v", err)
	}
}

// start runs argv from a thread fenced by s and returns its combined
// output and error.
func start(t *testing.T, s Spec, argv ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	Prepare(cmd, s, nil)
	var err error
	if ferr := On(s, func() { err = cmd.Start() }); ferr != nil {
		t.Fatalf("On: %v", ferr)
	}
	if err == nil {
		err = cmd.Wait()
	}
	return out.String(), err
}

// A process started from a fenced thread writes only where its spec
// allows, from its first instruction.
func TestFenceWrites(t *testing.T) {
	needLandlock(t)
	allowed, other := t.TempDir(), t.TempDir()
	tests := []struct {
		name string
		spec Spec
		path string
		ok   bool
	}{
		{"no writes: anywhere", Spec{}, filepath.Join(allowed, "x"), false},
		{"no writes: the null device", Spec{}, "/dev/null", true},
		{"a folder: inside", Spec{Write: []string{allowed}}, filepath.Join(allowed, "x"), true},
		{"a folder: below it", Spec{Write: []string{allowed}}, filepath.Join(allowed, "sub"), true},
		{"a folder: beside it", Spec{Write: []string{allowed}}, filepath.Join(other, "x"), false},
		{"offline, a folder: inside", Spec{Write: []string{allowed}, Offline: true}, filepath.Join(allowed, "y"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := start(t, tt.spec, "sh", "-c", "echo x > "+tt.path)
			if (err == nil) != tt.ok {
				t.Fatalf("write to %s: %v %s; want ok %v", tt.path, err, out, tt.ok)
			}
			if !tt.ok && !strings.Contains(out, "Permission denied") {
				t.Errorf("the refusal is not EACCES: %s", out)
			}
		})
	}
}

// The fence stays on its thread: the bot's other goroutines, on threads
// old and new (started while fenced threads exist), write and reach the
// network as before.
func TestFenceStaysOnItsThread(t *testing.T) {
	needLandlock(t)
	for _, s := range []Spec{{}, {Offline: true}} {
		if _, err := start(t, s, "true"); err != nil {
			t.Fatal(err)
		}
	}
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
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Go(func() {
			// A locked goroutine makes the runtime start more threads.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), []byte("x"), 0o600); err != nil {
				errs <- err
			}
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				errs <- err
				return
			}
			c.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a goroutine of the bot could not write or connect: %v", err)
	}
}

func TestRefusals(t *testing.T) {
	root := "/srv/root"
	model := Spec{Write: []string{root, "/tmp/f"}, Offline: true}
	tests := []struct {
		name   string
		stderr string
		spec   Spec
		dir    string
		want   []string
	}{
		{"touch outside", "touch: cannot touch '/etc/cron.d/x': Permission denied\n", model, root, []string{"a write to /etc/cron.d/x"}},
		{"curly quotes", "mkdir: cannot create directory ‘/opt/x’: Permission denied\n", model, root, []string{"a write to /opt/x"}},
		{"bash redirection", "bash: line 1: /etc/motd: Permission denied\n", model, root, []string{"a write to /etc/motd"}},
		{"dash redirection", "sh: 1: cannot create /etc/motd: Permission denied\n", model, root, []string{"a write to /etc/motd"}},
		{"relative inside the root, may write", "touch: cannot touch 'x': Permission denied\n", model, root, nil},
		{"relative, read-only run", "touch: cannot touch 'x': Permission denied\n", Spec{}, root, []string{"a write to /srv/root/x"}},
		{"read-only file system", "cp: cannot create regular file '/usr/bin/x': Read-only file system\n", model, root, []string{"a write to /usr/bin/x"}},
		{"network unreachable", "curl: (7) Failed to connect to 10.0.0.1 port 80: Network is unreachable\n", model, root, []string{"network access"}},
		{"landlock tcp", "bash: connect: Permission denied\nbash: line 1: /dev/tcp/127.0.0.1/80: Permission denied\n", model, root, []string{"network access"}},
		{"network when online is not the fence", "curl: (6) Could not resolve host: x\n", Spec{}, root, nil},
		{"sudo", `sudo: The "no new privileges" flag is set, which prevents sudo from running as root.` + "\n", model, root, []string{"a set-user-ID gain"}},
		{"once each", "touch: cannot touch '/a': Permission denied\ntouch: cannot touch '/a': Permission denied\n", model, root, []string{"a write to /a"}},
		{"nothing", "grep: x: No such file or directory\n", model, root, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Refusals(tt.stderr, tt.spec, tt.dir)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("Refusals = %q, want %q", got, tt.want)
			}
		})
	}
}

func FuzzRefusals(f *testing.F) {
	f.Add("touch: cannot touch '/etc/x': Permission denied\n", false)
	f.Add("bash: line 1: ': Permission denied", true)
	f.Add(": Permission denied ''", false)
	f.Fuzz(func(t *testing.T, stderr string, offline bool) {
		for _, r := range Refusals(stderr, Spec{Write: []string{"/r"}, Offline: offline}, "/r") {
			if r == "" {
				t.Fatal("an empty refusal")
			}
		}
	})
}

// On a kernel without Landlock nothing starts: On says why, and the error
// is one of setting up (ErrSetup) because the kernel cannot (ErrUnavailable).
func TestNoLandlockStartsNothing(t *testing.T) {
	old := abi
	abi = func() (int, error) { return 0, syscall.ENOSYS }
	defer func() { abi = old }()
	ran := false
	err := On(Spec{Write: []string{"/nowhere-" + t.Name()}}, func() { ran = true })
	if ran || !errors.Is(err, ErrSetup) || !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "Landlock is not available") {
		t.Fatalf("ran %v, err %v; want nothing run and an error saying Landlock is not available", ran, err)
	}
}
