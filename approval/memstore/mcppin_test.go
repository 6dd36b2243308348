package memstore_test

import (
	"testing"

	"github.com/countersign/countersign/approval/approvaltest"
)

func TestMCPPins(t *testing.T) {
	approvaltest.RunMCPPins(t, shared())
}
