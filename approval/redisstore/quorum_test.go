package redisstore_test

import (
	"os"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/approvaltest"
	"github.com/countersign/countersign/approval/redisstore"
	"github.com/countersign/countersign/internal/testenv"
)

// TestQuorumContract runs the N-of-M suite; every client is its own
// redis.Client and store over the same server, as replicas would be.
func TestQuorumContract(t *testing.T) {
	testenv.RedisURL(t)
	base := prefix()
	approvaltest.RunQuorum(t, func(t *testing.T, ns string) approval.Store {
		return open(t, base+":"+ns)
	})
}

// TestQuorumContractCluster runs the N-of-M suite on a Redis Cluster, where
// a vote script that touched a key outside the approval's hash tag would
// fail with CROSSSLOT; see TestContractCluster.
func TestQuorumContractCluster(t *testing.T) {
	nodes := os.Getenv("COUNTERSIGN_TEST_REDIS_CLUSTER")
	if nodes == "" {
		t.Skip("skipping: set COUNTERSIGN_TEST_REDIS_CLUSTER to a Redis Cluster's nodes to run")
	}
	base := prefix()
	approvaltest.RunQuorum(t, func(t *testing.T, ns string) approval.Store {
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(nodes, ",")})
		s := redisstore.New(c, redisstore.Options{Prefix: base + ":" + ns, Logger: quiet()})
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

// BenchmarkApprove: two votes, the second winning, on a fresh approval,
// against the test Redis.
func BenchmarkApprove(b *testing.B) {
	testenv.RedisURL(b)
	approvaltest.BenchApprove(b, open(b, prefix()))
}
