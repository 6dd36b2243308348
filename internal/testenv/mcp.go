package testenv

import "testing"

// MCPDir returns the folder where .ci/mcp-servers installed the MCP servers
// from npm (node_modules/.bin/mcp-server-filesystem, …-everything).
func MCPDir(tb testing.TB) string {
	tb.Helper()
	return need(tb, "COUNTERSIGN_TEST_MCP_DIR", "the npm MCP servers (.ci/mcp-servers)")
}
