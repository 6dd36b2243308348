package risk

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/countersign/countersign/risk/shell"
	"github.com/countersign/countersign/risk/sqlrisk"
)

func TestFacts(t *testing.T) {
	p, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		tool string
		args string
		want Facts
	}{
		{"sql ddl", ToolSQL, `{"sql": "ALTER TABLE t ADD c INT"}`,
			Facts{Statements: []sqlrisk.Statement{{Kind: "ALTER TABLE", Class: "DDL"}}}},
		{"sql unparsable", ToolSQL, `{"sql": "ALTER TABL t"}`, Facts{Unread: true}},
		{"sql missing", ToolSQL, `{"query": "SELECT 1"}`, Facts{Unread: true}},
		{"command", ToolCommand, `{"command": "sudo systemctl restart nginx"}`,
			Facts{Commands: []shell.Command{{Name: "sudo", Args: []string{"systemctl", "restart", "nginx"}}, {Name: "systemctl", Args: []string{"restart", "nginx"}}}}},
		{"command computed", ToolCommand, `{"command": "$X"}`, Facts{Unread: true}},
		{"not an object", ToolCommand, `[1]`, Facts{Unread: true}},
		{"other tool", ToolHTTP, `{"url": "https://example.com"}`, Facts{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := p.Facts(Call{Tool: tc.tool, Args: json.RawMessage(tc.args)})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Facts (-want +got):\n%s", diff)
			}
		})
	}
}
