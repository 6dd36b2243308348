// Package proctest reads the process-wide flags that
// shelltool.FenceProcess sets, so that tests can tell whether a process
// is fenced. Both flags last for the life of the process, so a test that
// wants an unfenced start runs in a fresh process (see Child).
package proctest

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"unsafe"
)

const (
	prGetDumpable       = 3
	prGetChildSubreaper = 37
)

// Dumpable reports whether the process is dumpable (prctl PR_GET_DUMPABLE).
func Dumpable(tb testing.TB) bool {
	tb.Helper()
	r, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetDumpable, 0, 0)
	if errno != 0 {
		tb.Fatalf("prctl PR_GET_DUMPABLE: %v", errno)
	}
	return r == 1
}

// Subreaper reports whether the process is a child subreaper (prctl
// PR_GET_CHILD_SUBREAPER).
func Subreaper(tb testing.TB) bool {
	tb.Helper()
	var v int32
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetChildSubreaper, uintptr(unsafe.Pointer(&v)), 0); errno != 0 {
		tb.Fatalf("prctl PR_GET_CHILD_SUBREAPER: %v", errno)
	}
	return v != 0
}

// childEnv names the case a re-run test binary is to run.
const childEnv = "COUNTERSIGN_PROCTEST_CASE"

// Child runs each of cases in a fresh copy of the test binary, where
// Case returns it, and fails t when that run fails. test is the name of the
// calling test function. In the child, Child does nothing.
func Child(t *testing.T, test string, cases ...string) {
	t.Helper()
	if Case() != "" {
		return
	}
	for _, c := range cases {
		t.Run(c, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
			cmd.Env = append(os.Environ(), childEnv+"="+c)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
		})
	}
}

// Case is the case this fresh test process runs, or "" in the parent.
func Case() string { return os.Getenv(childEnv) }
