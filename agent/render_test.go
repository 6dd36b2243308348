package agent

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/countersign/countersign/tools"
	"github.com/countersign/countersign/tools/httptool"
	"github.com/countersign/countersign/tools/shelltool"
	"github.com/countersign/countersign/tools/sqltool"
)

func TestRender(t *testing.T) {
	zero, one := 0, 2
	var affected int64 = 3
	tests := []struct {
		name string
		tool string
		args string
		res  tools.Result
		want []string
		not  []string
	}{
		{
			name: "shell output",
			tool: "execute_command", args: `{"command":"df -h"}`,
			res:  tools.Result{Status: tools.StatusOK, Executed: true, ExitCode: &zero, Stdout: "/dev/sda1 50%\n", DurationMS: 12},
			want: []string{"`df -h` exit code 0 · 12 ms", "```\n/dev/sda1 50%\n```"},
		},
		{
			name: "sql rows as a table",
			tool: "execute_sql", args: `{"sql":"SELECT id, name FROM users"}`,
			res: tools.Result{Status: tools.StatusOK, Executed: true, RowCount: &one,
				Columns: []tools.Column{{Name: "id", Type: "INT"}, {Name: "name", Type: "VARCHAR"}},
				Rows:    [][]any{{1, "ann"}, {22, nil}}},
			want: []string{"2 rows · ", "id | name\n1  | ann \n22 | NULL"},
		},
		{
			name: "sql write",
			tool: "execute_sql", args: `{"sql":"UPDATE t SET a=1 WHERE id=2"}`,
			res:  tools.Result{Status: tools.StatusOK, Executed: true, RowsAffected: &affected},
			want: []string{"3 rows affected"},
		},
		{
			name: "http",
			tool: "http_request", args: `{"method":"get","url":"https://example.com/health"}`,
			res:  tools.Result{Status: tools.StatusOK, Executed: true, HTTPStatus: 200, Body: `{"ok":true}`, Truncated: true, Note: "body cut at 64 KiB"},
			want: []string{"`GET https://example.com/health` HTTP 200", `{"ok":true}`, "_body cut at 64 KiB_"},
		},
		{
			name: "blocked",
			tool: "execute_command", args: `{"command":"rm -rf /"}`,
			res:  tools.Blocked("deletes the root directory"),
			want: []string{"did not run: blocked by policy (deletes the root directory)."},
			not:  []string{"exit"},
		},
		{
			name: "cancelled",
			tool: "execute_command", args: `{"command":"reboot"}`,
			res:  tools.Cancelled("Bob", "not now"),
			want: []string{"`reboot` did not run: cancelled by Bob (not now)."},
		},
		{
			name: "fences in output cannot close the block",
			tool: "execute_command", args: `{"command":"cat x.md"}`,
			res: tools.Result{Status: tools.StatusOK, Executed: true, ExitCode: &zero, Stdout: "a\n```\nb"},
			not: []string{"a\n```\nb"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := describing(t).render(tt.tool, json.RawMessage(tt.args), tt.res)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("render =\n%s\nwant it to contain\n%s", got, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("render =\n%s\nwant it not to contain %q", got, n)
				}
			}
		})
	}
}

// TestRenderSaysTheOutcomeOfTheCard: the chat's line for a run says how it
// ended in the same words as the card (tools.Result.Outcome; the card's
// side is bot's TestCardSaysTheOutcomeOfTheChat).
func TestRenderSaysTheOutcomeOfTheCard(t *testing.T) {
	for _, r := range outcomes() {
		got := describing(t).render("execute_command", json.RawMessage(`{"command":"true"}`), r)
		if head, _, _ := strings.Cut(got, "\n"); !strings.Contains(head, r.Outcome()+" · ") {
			t.Errorf("render = %q, want its first line to say %q", got, r.Outcome())
		}
	}
}

// outcomes are results of every kind of outcome.
func outcomes() []tools.Result {
	zero, two := 0, 2
	var one int64 = 1
	return []tools.Result{
		{Status: tools.StatusOK, Executed: true, ExitCode: &zero, DurationMS: 12},
		{Status: tools.StatusError, Executed: true, ExitCode: &two, Error: "no such file"},
		{Status: tools.StatusOK, Executed: true, RowsAffected: &one},
		{Status: tools.StatusOK, Executed: true, RowCount: &two},
		{Status: tools.StatusOK, Executed: true, HTTPStatus: 200},
	}
}

func BenchmarkTrim(b *testing.B) {
	var msgs []Message
	for range 60 {
		msgs = append(msgs, user("how full is the disk?"), calls("c1", "c2"), result("c1"), result("c2"), assistant("About half."))
	}
	b.ReportAllocs()
	for b.Loop() {
		trim(msgs, DefaultMaxMessages, DefaultMaxBytes)
	}
}

func BenchmarkCheckArgs(b *testing.B) {
	schema := json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"workdir":{"type":"string"},"timeout_seconds":{"type":"integer"},"risk_level":{"type":"string"}},"required":["command"]}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := checkArgs(`{"command":"df -h | sort -k5 -n | tail -3","timeout_seconds":30,"risk_level":"low"}`, schema); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCutsKeepWholeCharacters: the reply and the audit operation cut long
// text at a byte budget; a cut through a multi-byte character would send
// invalid UTF-8 to the chat and the audit log.
func TestCutsKeepWholeCharacters(t *testing.T) {
	long := strings.Repeat("é", renderBytes+operationCap) // two bytes each: the budget ends inside one at some offset
	tests := []struct {
		name string
		got  string
	}{
		{"reply output, even cut", describing(t).render("execute_command", nil, tools.Result{Status: tools.StatusOK, Executed: true, Stdout: long})},
		{"reply output, odd cut", describing(t).render("execute_command", nil, tools.Result{Status: tools.StatusOK, Executed: true, Stdout: "x" + long})},
		{"operation, even cut", describing(t).operation("execute_command", mustJSON(t, map[string]string{"command": long}))},
		{"operation, odd cut", describing(t).operation("execute_command", mustJSON(t, map[string]string{"command": "x" + long}))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !utf8.ValidString(tt.got) {
				t.Errorf("cut text is not valid UTF-8: …%q", tt.got[max(0, len(tt.got)-20):])
			}
		})
	}
}

// describing is an agent with only what rendering needs: the command and
// SQL tools, which describe their calls.
func describing(t *testing.T) *Agent {
	t.Helper()
	sh, err := shelltool.New(shelltool.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	sq, err := sqltool.New(sqltool.Config{Connections: map[string]sqltool.Connection{"main": {DSN: "u:p@tcp(127.0.0.1:1)/db"}}})
	if err != nil {
		t.Fatal(err)
	}
	ht, err := httptool.New(httptool.Config{})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tools.NewRegistry(sh, sq, ht)
	if err != nil {
		t.Fatal(err)
	}
	return &Agent{tools: reg}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
