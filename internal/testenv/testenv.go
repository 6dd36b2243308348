// Package testenv gives tests the throwaway servers that `make test` starts
// (.ci/services). Under plain `go test` a test that needs a server is skipped
// with a message; under `make test` (COUNTERSIGN_TEST_SERVICES=1) a missing
// server fails the test instead.
package testenv

import (
	"os"
	"testing"
)

// RedisURL returns the test Redis URL, e.g. redis://127.0.0.1:6379/0.
func RedisURL(tb testing.TB) string {
	tb.Helper()
	return need(tb, "COUNTERSIGN_TEST_REDIS_URL", "Redis")
}

// MySQLDSN returns a go-sql-driver DSN for the test MariaDB's root account,
// e.g. root@tcp(127.0.0.1:3306)/ (no database selected).
func MySQLDSN(tb testing.TB) string {
	tb.Helper()
	return need(tb, "COUNTERSIGN_TEST_MYSQL_DSN", "MariaDB")
}

func need(tb testing.TB, env, what string) string {
	tb.Helper()
	v := os.Getenv(env)
	if v != "" {
		return v
	}
	if os.Getenv("COUNTERSIGN_TEST_SERVICES") != "" {
		tb.Fatalf("%s is not set although make test should have started %s", env, what)
	}
	tb.Skipf("skipping: needs %s; run `make test`, or set %s", what, env)
	return ""
}
