package shelltool

import (
	"fmt"
	"syscall"
)

// FenceProcess sets up the two fences of execute_command that act on the
// whole process rather than on one command; main calls it once, before
// New. It makes the process a child subreaper, so that the time limit also
// reaches processes that left a command's process group (see reaper.go),
// and, unless keepDumpable (Config.KeepDumpable), marks the process not
// dumpable, so that a command running as the bot's own user cannot read
// the bot's environment through /proc/<pid>/environ.
//
// A program that does not call it still gets the per-command fences, but a
// command's setsid'd leftovers may outlive the call and its environment is
// readable by the commands. Calling it again is harmless.
func FenceProcess(keepDumpable bool) error {
	if err := children.enable(); err != nil {
		return fmt.Errorf("becoming the child subreaper that lets the time limit reach processes that left the command's group: %w", err)
	}
	if !keepDumpable {
		if err := hideEnviron(); err != nil {
			return fmt.Errorf("making the process not dumpable (keep_dumpable: true skips it): %w", err)
		}
	}
	return nil
}

// hideEnviron marks the process not dumpable, which makes /proc/<pid>/environ
// and /proc/<pid>/mem unreadable to other processes of the same user that
// lack CAP_SYS_PTRACE.
func hideEnviron() error {
	const prSetDumpable = 4
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0); errno != 0 {
		return errno
	}
	return nil
}
