package shelltool

import (
	"fmt"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/countersign/countersign/tools/fence"
)

// Commands die with the bot. Each command's shell gets a parent-death
// signal (SIGKILL), and so does a guard: a second small shell that leads
// the command's process group, started first, whose parent-death signal is
// SIGTERM, on which it kills the whole group. The shell's own signal would kill the shell
// alone; the guard takes the rest of the group with it (what a command
// left outside the group, with setsid, is the subreaper's business while
// the bot lives, and outlives a bot killed with -9).
//
// The kernel sends a parent-death signal when the thread that started the
// child ends, not the process, and the Go runtime ends a thread whose
// goroutine exits while locked to it. So every command is started from
// one goroutine locked to its thread for the life of the process: its
// thread ends only with the process. The signal survives run_as: Go sets
// it in the child after changing the user, and bash is not set-user-ID.

// guardScript waits (in the wait builtin, which a trapped signal cuts
// short) and on SIGTERM kills its process group. The sleep holds no
// descriptor of the command's: its output goes nowhere.
const guardScript = `trap 'kill -KILL 0' TERM; sleep 2147483647 & wait`

// spawner starts processes from its one locked thread.
var spawner struct {
	once sync.Once
	reqs chan func()
}

// onSpawnThread runs f on the spawner's thread and returns when it is done.
func onSpawnThread(f func()) {
	spawner.once.Do(func() {
		spawner.reqs = make(chan func())
		go func() {
			// Never unlocked and never returning: the thread lives as long
			// as the process, so parent-death signals fire only when the
			// bot dies.
			runtime.LockOSThread()
			for f := range spawner.reqs {
				f()
			}
		}()
	})
	done := make(chan struct{})
	spawner.reqs <- func() {
		defer close(done)
		f()
	}
	<-done
}

// forcedQuit is set by KillAll: the results of the runs it killed say so.
var forcedQuit atomic.Bool

// KillAll kills the process group of every command running now, for a
// forced quit (a third Ctrl-C, a second SIGTERM): the runs then return at
// once, each with a result saying the bot killed it as it quit, and no
// command outlives the bot's exit. Commands started afterwards are killed
// as they start. It returns how many process groups it killed.
//
// Process-wide, as the record of running commands is (see reaper.go).
func KillAll() int {
	forcedQuit.Store(true)
	children.mu.Lock()
	defer children.mu.Unlock()
	n := 0
	for pid := range children.guards {
		if killGroup(pid) == nil { // a guard leads its command's group
			n++
		}
	}
	return n
}

// Program is a long-running program of the bot's own, such as an MCP
// stdio server, started as commands are (StartProgram).
type Program struct {
	guard *exec.Cmd
	cmd   *exec.Cmd
}

// StartProgram starts cmd the way a command starts: as cred (nil: the
// bot's own user), fenced by spec when it is not nil, in a process group
// led by a guard, both with a parent-death signal, so that it and all it
// starts die with the bot, even one killed with -9. The leftover sweep
// after each command leaves it alone: it is recorded as running until
// Release. The caller waits for cmd (cmd.Wait), then calls Release.
func StartProgram(cmd *exec.Cmd, cred *syscall.Credential, spec *fence.Spec) (*Program, error) {
	shell, err := exec.LookPath("sh")
	if err != nil {
		return nil, fmt.Errorf("the guard that ends the program if the bot dies needs sh: %w", err)
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if cred != nil {
		c := *cred
		cmd.SysProcAttr.Credential = &c
	}
	var spawn func(func()) error
	if spec != nil {
		fence.Prepare(cmd, *spec, cmd.SysProcAttr.Credential)
		spawn = func(f func()) error { return fence.On(*spec, f) }
	}
	g, err := children.start(cmd, shell, cred, spawn)
	if err != nil {
		return nil, err
	}
	return &Program{guard: g, cmd: cmd}, nil
}

// Kill kills the program and everything in its process group.
func (p *Program) Kill() {
	if p != nil {
		_ = killGroup(p.guard.Process.Pid)
	}
}

// Release kills what is left of the program's group, reaps its guard and
// forgets both, once cmd.Wait has returned.
func (p *Program) Release() {
	if p == nil {
		return
	}
	_ = killGroup(p.guard.Process.Pid)
	_ = p.guard.Wait()
	children.forget(p.cmd.Process.Pid, p.guard.Process.Pid)
}

// Pgid is the program's process group (its guard's pid).
func (p *Program) Pgid() int { return p.guard.Process.Pid }
