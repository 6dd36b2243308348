package shelltool

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/countersign/countersign/tools"
)

// BenchmarkCheck is the tool layer's own work before a run: decoding and
// validating the arguments, resolving the workdir.
func BenchmarkCheck(b *testing.B) {
	tool := newTool(b, nil)
	raw := json.RawMessage(`{"command":"ls -la /var/log","timeout_seconds":30,"risk_level":"low"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, bad := tool.check(raw); bad != nil {
			b.Fatal(bad.JSON())
		}
	}
}

// BenchmarkRunTrue is a whole call of `true`: the per-call overhead of the
// tool including bash's start, with no work of its own.
func BenchmarkRunTrue(b *testing.B) {
	tool := newTool(b, nil)
	raw := json.RawMessage(`{"command":"true"}`)
	b.ReportAllocs()
	for b.Loop() {
		if res := tool.Run(context.Background(), raw, tools.RunOptions{}); res.Status != tools.StatusOK {
			b.Fatal(res.JSON())
		}
	}
}

// BenchmarkPreview parses and expands a wildcard delete over 100 files.
func BenchmarkPreview(b *testing.B) {
	tool := newTool(b, nil)
	var names []string
	for i := range 100 {
		names = append(names, "tmp_"+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	makeTree(b, tool.root, names...)
	raw := json.RawMessage(`{"command":"rm -rf ./tmp_*"}`)
	b.ReportAllocs()
	for b.Loop() {
		if p := tool.Preview(context.Background(), raw); p.Total != 100 {
			b.Fatalf("preview %+v", p)
		}
	}
}
