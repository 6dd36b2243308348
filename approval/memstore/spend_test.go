package memstore_test

import (
	"sync"
	"testing"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/approvaltest"
	"github.com/countersign/countersign/approval/memstore"
)

func TestSpend(t *testing.T) {
	var (
		mu     sync.Mutex
		stores = map[string]*memstore.Store{}
	)
	approvaltest.RunSpend(t, func(t *testing.T, ns string) approval.Store {
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
