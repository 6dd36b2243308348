package filetool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/countersign/countersign/tools"
)

// FuzzArgs feeds arbitrary arguments to the decoding and to the read-only
// operations and previews: nothing may panic, and nothing outside the root
// may ever be reached.
func FuzzArgs(f *testing.F) {
	for _, seed := range []string{
		`{"operation":"read","path":"a.txt"}`,
		`{"operation":"list","path":"."}`,
		`{"operation":"delete","path":"d","recursive":true,"risk_level":"high"}`,
		`{"operation":"write","path":"../x","content":"y"}`,
		`{"operation":"stat","path":"/etc/passwd"}`,
		`{"operation":"exists","path":"out/secret"}`,
		`{"operation":1}`,
	} {
		f.Add([]byte(seed))
	}
	tool := newTool(f, nil)
	write(f, filepath.Join(tool.cfg.Root, "a.txt"), "hello")
	write(f, filepath.Join(tool.cfg.Root, "d", "x"), "x")
	outside := f.TempDir()
	write(f, filepath.Join(outside, "secret"), "s")
	if err := os.Symlink(outside, filepath.Join(tool.cfg.Root, "out")); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		o, bad := tool.check(json.RawMessage(raw))
		if bad != nil {
			if bad.Executed || bad.Status == tools.StatusOK {
				t.Fatalf("a refusal claims to have run: %s", bad.JSON())
			}
		}
		tool.Preview(context.Background(), json.RawMessage(raw))
		switch o.kind {
		case "read", "list", "exists", "stat":
			res := tool.Run(context.Background(), json.RawMessage(raw), tools.RunOptions{})
			if res.Status == tools.StatusOK && (res.Content == "s") {
				t.Fatalf("read the file outside the root: %s", res.JSON())
			}
		}
	})
}
