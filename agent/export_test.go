package agent

import "time"

// SetHeartbeatEvery makes runs beat every d, for tests; it returns the undo.
func SetHeartbeatEvery(d time.Duration) (undo func()) {
	old := heartbeatEvery
	heartbeatEvery = d
	return func() { heartbeatEvery = old }
}

// SetSweepBudget makes a sweep spend at most d expiring; it returns the
// undo.
func SetSweepBudget(d time.Duration) (undo func()) {
	old := sweepBudget
	sweepBudget = d
	return func() { sweepBudget = old }
}

// SetFinishRetry makes a failed Finish be tried again after d, for tests;
// it returns the undo.
func SetFinishRetry(d time.Duration) (undo func()) {
	old := finishRetry
	finishRetry.first, finishRetry.most = d, d
	return func() { finishRetry = old }
}

// RunsWaiting is how many approved calls wait for a place to run.
func RunsWaiting(a *Agent) int { return a.runGate.Waiting() }
