package testenv

import "testing"

// Helm returns the helm binary .ci/helm built from the Go module proxy.
func Helm(tb testing.TB) string {
	tb.Helper()
	return need(tb, "COUNTERSIGN_TEST_HELM", "helm (.ci/helm)")
}
