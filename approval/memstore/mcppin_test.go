package memstore_test

import (
	"sync"
	"testing"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/approvaltest"
	"github.com/countersign/countersign/approval/memstore"
)

func TestMCPPins(t *testing.T) {
	var (
		mu     sync.Mutex
		stores = map[string]*memstore.Store{}
	)
	approvaltest.RunMCPPins(t, func(t *testing.T, ns string) approval.Store {
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
