package shelltool

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The time limit kills a command's process group, but a process can leave
// the group (setsid, bash job control) and outlive the call. To find such
// processes FenceProcess makes the bot a child subreaper: an orphaned
// descendant of a command is handed to the bot instead of to init. When a
// command ends, every child of the bot that is not a running command's
// shell is something a command left behind, and is killed and reaped.
//
// This is process-wide, as what it guards is: the kernel hands orphans to
// the process, not to a Tool, and two tools must not take each other's
// running shells for leftovers. So the record of running shells is the one
// package-level variable, and a process that called FenceProcess must start
// its other long-running children through StartProgram (the bot's MCP
// stdio servers), which records them as running until they end: any other
// child is taken for a leftover (an MCP server once was, killed by the end
// of every shell command). Until FenceProcess is called there is no sweep,
// so a library user's own children are left alone.
var children = &reaper{live: map[int]struct{}{}, guards: map[int]bool{}}

type reaper struct {
	once    sync.Once
	err     error       // from becoming a subreaper
	enabled atomic.Bool // the process is a subreaper: sweep after each command

	mu     sync.Mutex
	live   map[int]struct{} // pids of the shells and guards of running commands
	guards map[int]bool     // the guards among them: each leads its command's group
}

// Bounds of one sweep.
const (
	maxSweepRounds = 64                     // a leftover's children are adopted when it dies: one round per generation
	reapWait       = 500 * time.Millisecond // per round, for killed processes to die
)

// enable makes the process a child subreaper (prctl PR_SET_CHILD_SUBREAPER).
func (r *reaper) enable() error {
	r.once.Do(func() {
		const prSetChildSubreaper = 36
		if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
			r.err = errno
			return
		}
		r.enabled.Store(true)
	})
	return r.err
}

// start starts a guard (see spawn.go) as cred, then cmd's shell in the
// guard's process group, both with a parent-death signal, passing on no
// descriptor but their own 0, 1 and 2, and records both as running. It
// returns the guard, whose pid is the group's. Without a guard the command
// does not start: it could outlive the bot.
//
// spawn starts the command's shell: from the spawner's thread, or from a
// thread the kernel's fence restricts (fence.On). nil is the spawner's.
func (r *reaper) start(cmd *exec.Cmd, shell string, cred *syscall.Credential, spawn func(func()) error) (*exec.Cmd, error) {
	if spawn == nil {
		spawn = func(f func()) error { onSpawnThread(f); return nil }
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := closeOnExec(); err != nil {
		return nil, fmt.Errorf("keeping the bot's descriptors from the command: %w", err)
	}
	g := exec.Command(shell, "-c", guardScript)
	g.Dir = "/"
	g.Env = []string{"PATH=" + DefaultPath}
	g.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred, Pdeathsig: syscall.SIGTERM}
	var err error
	onSpawnThread(func() { err = g.Start() })
	if err != nil {
		return nil, fmt.Errorf("starting the guard that ends the command if the bot dies: %w", err)
	}
	r.live[g.Process.Pid] = struct{}{}
	r.guards[g.Process.Pid] = true
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid, cmd.SysProcAttr.Pgid = true, g.Process.Pid
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if ferr := spawn(func() { err = cmd.Start() }); ferr != nil {
		err = ferr
	}
	if err != nil {
		_ = killGroup(g.Process.Pid)
		_ = g.Wait()
		delete(r.live, g.Process.Pid)
		delete(r.guards, g.Process.Pid)
		return nil, err
	}
	r.live[cmd.Process.Pid] = struct{}{}
	if forcedQuit.Load() {
		_ = killGroup(g.Process.Pid) // started as the bot quits: ends at once
	}
	return g, nil
}

// forget forgets the pids of a program's process and guard, which Wait
// has reaped, without a sweep.
func (r *reaper) forget(pids ...int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, pid := range pids {
		delete(r.live, pid)
		delete(r.guards, pid)
	}
}

// finish forgets the pids of a command's shell and guard, which Wait has
// reaped, and, once the process is a subreaper, kills and reaps whatever
// commands left behind.
func (r *reaper) finish(pids ...int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, pid := range pids {
		delete(r.live, pid)
		delete(r.guards, pid)
	}
	if !r.enabled.Load() {
		return
	}
	self := os.Getpid()
	for range maxSweepRounds {
		left := r.leftovers(self)
		if len(left) == 0 {
			return
		}
		for _, p := range left {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		deadline := time.Now().Add(reapWait)
		for _, p := range left {
			reap(p, deadline)
		}
	}
}

// leftovers lists the children of the process that are not running shells.
func (r *reaper) leftovers(self int) []int {
	var left []int
	for _, p := range childPIDs(self) {
		if _, ok := r.live[p]; !ok {
			left = append(left, p)
		}
	}
	return left
}

// childPIDs lists the children of process self, from each thread's
// children file, or by scanning /proc where the kernel has no such file.
func childPIDs(self int) []int {
	tasks, err := os.ReadDir("/proc/self/task")
	if err == nil {
		var pids []int
		ok := true
		for _, task := range tasks {
			b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/children")
			if errors.Is(err, os.ErrNotExist) && task.Name() == strconv.Itoa(self) {
				ok = false // no children files at all
				break
			}
			for _, f := range strings.Fields(string(b)) {
				if p, err := strconv.Atoi(f); err == nil {
					pids = append(pids, p)
				}
			}
		}
		if ok {
			return pids
		}
	}
	return scanChildren(self)
}

// scanChildren finds the children of self by reading every /proc/<pid>/stat.
func scanChildren(self int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) >= 2 && f[1] == strconv.Itoa(self) {
			pids = append(pids, p)
		}
	}
	return pids
}

// reap waits for the killed child pid until deadline. A child that is not
// dead by then (stuck in the kernel) is reaped by a later sweep.
func reap(pid int, deadline time.Time) {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case got == pid || err != nil:
			return
		case time.Now().After(deadline):
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// closeOnExec marks every descriptor above 2 close-on-exec. Go opens its
// own that way; this catches those the bot inherited from whatever started
// it, which a command would otherwise get.
func closeOnExec() error {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
		if errno != 0 || flags&syscall.FD_CLOEXEC != 0 {
			continue // closed since the listing (the listing's own), or already marked
		}
		if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETFD, flags|syscall.FD_CLOEXEC); errno != 0 {
			return fmt.Errorf("descriptor %d: %w", fd, errno)
		}
	}
	return nil
}

// killGroup sends SIGKILL to every process in the group led by pid.
func killGroup(pid int) error {
	if pid <= 0 {
		return errors.New("no process group to kill")
	}
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
