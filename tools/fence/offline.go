package fence

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrNoOffline is wrapped by ProbeOffline's error: this host lets the bot
// fence writes but not keep a run off the network.
var ErrNoOffline = errors.New("this host cannot give a run a network namespace of its own")

// ProbeOffline says whether an offline run (Spec.Offline) can start here,
// by doing once what Prepare and On do for one: a bot that is root moves a
// throwaway thread into a new network namespace; one that is not starts
// `sh -c :` in a new user and network namespace. A container's default
// seccomp profile (Docker's, containerd's RuntimeDefault) refuses both to
// a process without CAP_SYS_ADMIN, and then every offline run would fail
// to start: cmd asks this at start, so that such calls get a card instead
// (agent.Config.NotOffline) rather than an error the model can only retry.
func ProbeOffline() error { return offline() }

var offline = sync.OnceValue(func() error {
	if os.Geteuid() == 0 {
		done := make(chan error)
		go func() {
			// Locked and never unlocked: the thread, moved to a namespace
			// of its own, ends with the goroutine.
			runtime.LockOSThread()
			done <- unix.Unshare(unix.CLONE_NEWNET)
		}()
		if err := <-done; err != nil {
			return fmt.Errorf("%w: unshare(CLONE_NEWNET): %w", ErrNoOffline, err)
		}
		return nil
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		return fmt.Errorf("%w: no sh to try it with: %w", ErrNoOffline, err)
	}
	cmd := exec.Command(sh, "-c", ":")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET | syscall.CLONE_NEWUSER}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%w: starting a process in a new user and network namespace: %w "+
			"(in a container, the default seccomp profile refuses it; see docs/deploy.md)", ErrNoOffline, err)
	}
	return nil
})
