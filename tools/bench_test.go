package tools_test

import (
	"encoding/json"
	"testing"

	"github.com/countersign/countersign/tools"
)

// BenchmarkCallOverhead is the tool layer's own cost per call: decode the
// arguments, build a result with a little output, encode it for the LLM.
func BenchmarkCallOverhead(b *testing.B) {
	raw := json.RawMessage(`{"command":"ls -l /var/log","timeout_seconds":30}`)
	code := 0
	b.ReportAllocs()
	for b.Loop() {
		var a shellArgs
		if err := tools.DecodeArgs(raw, &a); err != nil {
			b.Fatal(err)
		}
		r := tools.Result{Status: tools.StatusOK, Executed: true, ExitCode: &code, Stdout: "total 0\n", DurationMS: 3}
		if len(r.JSON()) == 0 {
			b.Fatal("empty")
		}
	}
}

// BenchmarkDecodeArgsWithRiskLevel decodes arguments that carry risk_level,
// as most calls from a model will.
func BenchmarkDecodeArgsWithRiskLevel(b *testing.B) {
	raw := json.RawMessage(`{"command":"ls -l /var/log","timeout_seconds":30,"risk_level":"low"}`)
	b.ReportAllocs()
	for b.Loop() {
		var a shellArgs
		if err := tools.DecodeArgs(raw, &a); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNotRunJSON(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if len(tools.Cancelled("alice", "wrong table").JSON()) == 0 {
			b.Fatal("empty")
		}
	}
}
