package redisstore_test

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/approvaltest"
	"github.com/countersign/countersign/approval/redisstore"
	"github.com/countersign/countersign/internal/testenv"
)

// TestContractCluster runs the contract suite on a Redis Cluster of three
// masters (.ci/services starts one), where a script that touched keys of
// two slots would fail with CROSSSLOT and a pipeline is split by node.
func TestContractCluster(t *testing.T) {
	nodes := testenv.RedisCluster(t)
	base := prefix()
	approvaltest.Run(t, func(t *testing.T, ns string) approval.Store {
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: nodes})
		s := redisstore.New(c, redisstore.Options{Prefix: base + ":" + ns, Logger: quiet()})
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}
