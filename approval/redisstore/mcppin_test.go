package redisstore_test

import (
	"testing"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/approvaltest"
	"github.com/countersign/countersign/internal/testenv"
)

// TestMCPPins runs the pin contract with a client per store over one
// server, as replicas would share it.
func TestMCPPins(t *testing.T) {
	testenv.RedisURL(t)
	base := prefix()
	approvaltest.RunMCPPins(t, func(t *testing.T, ns string) approval.Store {
		return open(t, base+":"+ns)
	})
}
