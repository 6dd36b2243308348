package redisstore_test

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/approvaltest"
	"github.com/countersign/countersign/approval/redisstore"
	"github.com/countersign/countersign/internal/testenv"
)

// TestSpend runs the spend contract with a client per store over one
// server, as replicas would share it.
func TestSpend(t *testing.T) {
	testenv.RedisURL(t)
	base := prefix()
	approvaltest.RunSpend(t, func(t *testing.T, ns string) approval.Store {
		return open(t, base+":"+ns)
	})
}

// TestSpendCluster runs it on a Redis Cluster of three masters, where the
// add's MULTI/EXEC must stay on one slot and a read of several keys
// spans nodes.
func TestSpendCluster(t *testing.T) {
	nodes := testenv.RedisCluster(t)
	base := prefix()
	approvaltest.RunSpend(t, func(t *testing.T, ns string) approval.Store {
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: nodes})
		s := redisstore.New(c, redisstore.Options{Prefix: base + ":" + ns, Logger: quiet()})
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}
