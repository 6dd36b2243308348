package shelltool

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/countersign/countersign/tools"
)

// FuzzArgs feeds arbitrary bytes to the argument decoding and to the
// preview: neither may panic, and a refusal never claims to have run.
func FuzzArgs(f *testing.F) {
	for _, seed := range []string{
		`{"command":"ls -la"}`,
		`{"command":"rm -rf ./tmp_*","workdir":"sub","timeout_seconds":5,"risk_level":"high"}`,
		`{"command":1}`,
		`{"command":"true","timeout_seconds":1e400}`,
		`{"command":"rm $(x) <(y) ${a:=b}","workdir":"../.."}`,
		`null`,
		`[]`,
	} {
		f.Add([]byte(seed))
	}
	tool := newTool(f, nil)
	f.Fuzz(func(t *testing.T, raw []byte) {
		if _, bad := tool.check(json.RawMessage(raw)); bad != nil {
			if bad.Executed || bad.Status == tools.StatusOK || bad.Error == "" {
				t.Fatalf("a refusal claims to have run or says nothing: %s", bad.JSON())
			}
		}
		tool.Preview(context.Background(), json.RawMessage(raw))
	})
}
