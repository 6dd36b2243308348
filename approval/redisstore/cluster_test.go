package redisstore_test

import (
	"os"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/approvaltest"
	"github.com/countersign/countersign/approval/redisstore"
)

// TestContractCluster runs the contract suite on a Redis Cluster, where a
// script that touched keys of two slots would fail with CROSSSLOT. It needs
// COUNTERSIGN_TEST_REDIS_CLUSTER, the nodes as host:port,host:port…; make
// test starts no cluster, so without it the test skips.
func TestContractCluster(t *testing.T) {
	nodes := os.Getenv("COUNTERSIGN_TEST_REDIS_CLUSTER")
	if nodes == "" {
		t.Skip("skipping: set COUNTERSIGN_TEST_REDIS_CLUSTER to a Redis Cluster's nodes to run")
	}
	base := prefix()
	approvaltest.Run(t, func(t *testing.T, ns string) approval.Store {
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(nodes, ",")})
		s := redisstore.New(c, redisstore.Options{Prefix: base + ":" + ns, Logger: quiet()})
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}
