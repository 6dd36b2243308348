package tools_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/countersign/countersign/tools"
)

func TestNotRunResults(t *testing.T) {
	tests := []struct {
		name       string
		r          tools.Result
		wantStatus tools.Status
		wantJSON   []string // fragments of the JSON the LLM gets
	}{
		{"blocked", tools.Blocked("rm -r of /", "absurd"), tools.StatusBlocked,
			[]string{`"reason":"rm -r of /; absurd"`, "blocked by policy"}},
		{"cancelled with reason", tools.Cancelled("alice", "wrong table"), tools.StatusCancelled,
			[]string{`"decided_by":"alice"`, `"reason":"wrong table"`, "cancelled by alice"}},
		{"cancelled without reason", tools.Cancelled("", ""), tools.StatusCancelled,
			[]string{"The operation was cancelled. The operation did not run"}},
		{"expired", tools.Expired(), tools.StatusExpired, []string{"before its approval expired"}},
		{"denied", tools.Denied(errors.New("path leaves the root")), tools.StatusDenied,
			[]string{`"error":"path leaves the root"`}},
		{"invalid args", tools.InvalidArgs(tools.MissingArg("sql")), tools.StatusError,
			[]string{`"error":"argument \"sql\": is required"`}},
		{"not started", tools.NotStarted(errors.New("server unreachable")), tools.StatusError,
			[]string{`"error":"server unreachable"`}},
		{"custom", tools.NotRun(tools.StatusDenied, "Refused."), tools.StatusDenied,
			[]string{`"message":"Refused. The operation did not run`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.r.Status != tt.wantStatus || tt.r.Executed {
				t.Errorf("status %q executed %v, want %q false", tt.r.Status, tt.r.Executed, tt.wantStatus)
			}
			if !strings.Contains(tt.r.Message, "did not run and should not be retried unless the user asks again") {
				t.Errorf("message %q lacks the did-not-run sentence", tt.r.Message)
			}
			js := tt.r.JSON()
			if !json.Valid([]byte(js)) {
				t.Fatalf("invalid JSON %s", js)
			}
			if !strings.Contains(js, `"executed":false`) {
				t.Errorf("JSON %s lacks executed:false", js)
			}
			for _, f := range tt.wantJSON {
				if !strings.Contains(js, f) {
					t.Errorf("JSON %s lacks %s", js, f)
				}
			}
		})
	}
}

func TestFailedRanAndSaysSo(t *testing.T) {
	r := tools.Failed(errors.New("syntax error"))
	if r.Status != tools.StatusError || !r.Executed || r.Error != "syntax error" {
		t.Errorf("Failed = %+v", r)
	}
}
