package agent

import "time"

// SetHeartbeatEvery makes runs beat every d, for tests; it returns the undo.
func SetHeartbeatEvery(d time.Duration) (undo func()) {
	old := heartbeatEvery
	heartbeatEvery = d
	return func() { heartbeatEvery = old }
}
