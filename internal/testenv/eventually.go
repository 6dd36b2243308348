package testenv

import (
	"testing"
	"time"
)

// pollEvery is how often Eventually checks its condition.
const pollEvery = 5 * time.Millisecond

// Eventually waits until cond holds, checking it every few milliseconds, and
// fails the test, naming what it waited for, if it does not within timeout.
// It is the one poll helper: use it only for what no event reports (a
// process's output, a file, a server's state); where the code under test
// reports an event (a channel, a hook, a fake's Wait), wait on that.
func Eventually(tb testing.TB, timeout time.Duration, cond func() bool, what string) {
	tb.Helper()
	if !Within(timeout, cond) {
		tb.Fatalf("waited %s for %s; it did not happen", timeout, what)
	}
}

// Within reports whether cond holds within timeout, checking it every few
// milliseconds: Eventually for a test that says more when it fails.
func Within(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollEvery)
	}
	return true
}
