package filetool

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/countersign/countersign/tools"
)

// BenchmarkCheck is the tool layer's own work before an operation: decoding
// and validating the arguments and the path.
func BenchmarkCheck(b *testing.B) {
	tool := newTool(b, nil)
	raw := json.RawMessage(`{"operation":"read","path":"logs/app.log","risk_level":"low"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, bad := tool.check(raw); bad != nil {
			b.Fatal(bad.JSON())
		}
	}
}

// BenchmarkExists is a whole call whose own work is one lstat.
func BenchmarkExists(b *testing.B) {
	tool := newTool(b, nil)
	write(b, filepath.Join(tool.cfg.Root, "logs", "app.log"), "x")
	raw := json.RawMessage(`{"operation":"exists","path":"logs/app.log"}`)
	b.ReportAllocs()
	for b.Loop() {
		if res := tool.Run(context.Background(), raw, tools.RunOptions{}); res.Status != tools.StatusOK {
			b.Fatal(res.JSON())
		}
	}
}

// BenchmarkReadSmall reads a 1 KiB text file.
func BenchmarkReadSmall(b *testing.B) {
	tool := newTool(b, nil)
	content := make([]byte, 1024)
	for i := range content {
		content[i] = 'a' + byte(i%26)
	}
	write(b, filepath.Join(tool.cfg.Root, "f.txt"), string(content))
	raw := json.RawMessage(`{"operation":"read","path":"f.txt"}`)
	b.ReportAllocs()
	for b.Loop() {
		if res := tool.Run(context.Background(), raw, tools.RunOptions{}); len(res.Content) != 1024 {
			b.Fatal(res.JSON())
		}
	}
}
