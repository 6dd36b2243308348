package memstore_test

import (
	"testing"

	"github.com/countersign/countersign/approval/approvaltest"
	"github.com/countersign/countersign/approval/memstore"
)

// TestQuorumContract runs the N-of-M suite; clients of one namespace are
// the same in-memory store.
func TestQuorumContract(t *testing.T) {
	approvaltest.RunQuorum(t, shared())
}

// BenchmarkApprove: two votes, the second winning, on a fresh approval.
func BenchmarkApprove(b *testing.B) {
	approvaltest.BenchApprove(b, memstore.New(memstore.Options{Logger: quiet()}))
}
