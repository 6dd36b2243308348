// Package proctest reads the process-wide flags that
// shelltool.FenceProcess sets, so that tests can tell whether a process
// is fenced. Both flags last for the life of the process, so a test that
// wants an unfenced start runs in a fresh process (see Child).
package proctest

import (
	"os"
	"os/exec"
	"strings"
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

// Child runs the calling test again in a fresh copy of the test binary,
// once for each of cases, and fails t when such a run fails or does not
// run the test. In the parent it returns "" once they are done; in a child
// it returns the case to run, after checking that the fresh process is not
// fenced yet, so that the test can tell. The child is a child process of
// the test binary: in a binary that is fenced already, no execute_command
// run may end meanwhile (a parallel test), or its sweep would take the
// child for a leftover.
func Child(t *testing.T, cases ...string) string {
	t.Helper()
	if c := os.Getenv(childEnv); c != "" {
		if !Dumpable(t) || Subreaper(t) {
			t.Fatal("the fresh test process is fenced already; the test cannot tell")
		}
		return c
	}
	test := t.Name()
	for _, c := range cases {
		t.Run(c, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), childEnv+"="+c)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if !strings.Contains(string(out), "--- PASS: "+test) {
				t.Fatalf("the fresh process did not run %s:\n%s", test, out)
			}
		})
	}
	return ""
}
