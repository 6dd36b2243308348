package testenv

import (
	"strings"
	"testing"
)

// RedisCluster returns the nodes of the test Redis Cluster (three masters)
// as host:port addresses.
func RedisCluster(tb testing.TB) []string {
	tb.Helper()
	return strings.Split(need(tb, "COUNTERSIGN_TEST_REDIS_CLUSTER", "a Redis Cluster"), ",")
}

// RedisSentinel returns the address of the test Sentinel and the name of
// the master it watches (a master with one replica, which a test may kill
// once: .ci/services starts a fresh set each run).
func RedisSentinel(tb testing.TB) (addr, master string) {
	tb.Helper()
	addr = need(tb, "COUNTERSIGN_TEST_REDIS_SENTINEL", "Redis Sentinel")
	return addr, need(tb, "COUNTERSIGN_TEST_REDIS_SENTINEL_MASTER", "Redis Sentinel")
}
