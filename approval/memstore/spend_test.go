package memstore_test

import (
	"testing"

	"github.com/countersign/countersign/approval/approvaltest"
)

func TestSpend(t *testing.T) {
	approvaltest.RunSpend(t, shared())
}
