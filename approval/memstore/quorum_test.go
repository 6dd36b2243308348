package memstore_test

import (
	"sync"
	"testing"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/approvaltest"
	"github.com/countersign/countersign/approval/memstore"
)

// TestQuorumContract runs the N-of-M suite; clients of one namespace are
// the same in-memory store.
func TestQuorumContract(t *testing.T) {
	var (
		mu     sync.Mutex
		stores = map[string]*memstore.Store{}
	)
	approvaltest.RunQuorum(t, func(t *testing.T, ns string) approval.Store {
		mu.Lock()
		defer mu.Unlock()
		s, ok := stores[ns]
		if !ok {
			s = memstore.New(memstore.Options{Logger: quiet()})
			stores[ns] = s
		}
		return s
	})
}

// BenchmarkApprove: two votes, the second winning, on a fresh approval.
func BenchmarkApprove(b *testing.B) {
	approvaltest.BenchApprove(b, memstore.New(memstore.Options{Logger: quiet()}))
}
