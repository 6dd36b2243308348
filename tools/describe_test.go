package tools_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/countersign/countersign/tools"
	"github.com/countersign/countersign/tools/filetool"
	"github.com/countersign/countersign/tools/httptool"
	"github.com/countersign/countersign/tools/shelltool"
	"github.com/countersign/countersign/tools/sqltool"
)

// fourTools is a registry of the four tools, as main wires them.
func fourTools(t testing.TB) *tools.Registry {
	t.Helper()
	root := t.TempDir()
	sh, err := shelltool.New(shelltool.Config{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	sq, err := sqltool.New(sqltool.Config{Connections: map[string]sqltool.Connection{"main": {DSN: "u:p@tcp(127.0.0.1:1)/db"}}})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := filetool.New(filetool.Config{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	ht, err := httptool.New(httptool.Config{})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tools.NewRegistry(sh, sq, fi, ht)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// parseDirect finds the direct command of text among reg's and parses
// it, as the bot does.
func parseDirect(reg *tools.Registry, text string) (tool string, args map[string]any, usage string, ok bool) {
	verb, rest, _ := strings.Cut(strings.TrimSpace(text), " ")
	for _, d := range reg.Directs() {
		if d.Verb == strings.ToLower(verb) {
			args, usage := d.Parse(strings.TrimSpace(rest))
			return d.Tool, args, usage, true
		}
	}
	return "", nil, "", false
}

func TestParseDirect(t *testing.T) {
	tests := []struct {
		name      string
		text      string
		tool      string
		args      map[string]any
		wantUsage bool
		notTool   bool
	}{
		{name: "run", text: "!run rm -rf ./tmp_*", tool: shelltool.Name, args: map[string]any{"command": "rm -rf ./tmp_*"}},
		{name: "run keeps the command byte for byte", text: "!run   echo  'a  b' | wc -c  ", tool: shelltool.Name, args: map[string]any{"command": "echo  'a  b' | wc -c"}},
		{name: "run without a command", text: "!run", wantUsage: true},
		{name: "sql", text: "!sql SELECT 1", tool: sqltool.Name, args: map[string]any{"sql": "SELECT 1"}},
		{name: "sql without a statement", text: "!sql   ", wantUsage: true},
		{name: "http", text: "!http get https://example.com/health", tool: httptool.Name, args: map[string]any{"method": "GET", "url": "https://example.com/health"}},
		{name: "http without a url", text: "!http GET", wantUsage: true},
		{name: "http with junk after the url", text: "!http GET https://a b", wantUsage: true},
		{name: "file read", text: "!file read logs/app.log", tool: filetool.Name, args: map[string]any{"operation": "read", "path": "logs/app.log"}},
		{name: "file list defaults to the root", text: "!file list", tool: filetool.Name, args: map[string]any{"operation": "list", "path": "."}},
		{name: "file write", text: "!file write notes.txt hello  world", tool: filetool.Name, args: map[string]any{"operation": "write", "path": "notes.txt", "content": "hello  world"}},
		{name: "file write without content", text: "!file write notes.txt", wantUsage: true},
		{name: "file delete recursive", text: "!file delete -r build", tool: filetool.Name, args: map[string]any{"operation": "delete", "path": "build", "recursive": true}},
		{name: "file unknown operation", text: "!file chmod x", wantUsage: true},
		{name: "file nothing", text: "!file", wantUsage: true},
		{name: "help is not a tool call", text: "!help", notTool: true},
		{name: "unknown", text: "!deploy prod", notTool: true},
	}
	reg := fourTools(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tool, args, usage, ok := parseDirect(reg, tc.text)
			if ok == tc.notTool {
				t.Fatalf("ok = %v, want %v", ok, !tc.notTool)
			}
			if tc.notTool {
				return
			}
			if (usage != "") != tc.wantUsage {
				t.Fatalf("usage = %q, want usage: %v", usage, tc.wantUsage)
			}
			if tc.wantUsage {
				return
			}
			if tool != tc.tool {
				t.Errorf("tool = %q, want %q", tool, tc.tool)
			}
			if diff := cmp.Diff(tc.args, args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOperation(t *testing.T) {
	tests := []struct {
		name, tool, args, want string
	}{
		{"command", "execute_command", `{"command":"ls -la | grep x"}`, "ls -la | grep x"},
		{"sql with database", "execute_sql", `{"sql":"DELETE FROM t WHERE id=1","database":"shop"}`, "DELETE FROM t WHERE id=1\n(database: shop)"},
		{"file write", "file_operations", `{"operation":"write","path":"a.txt","content":"hi"}`, "write a.txt\n--- content, 2 bytes ---\nhi"},
		{"http", "http_request", `{"method":"post","url":"https://x.test/a","headers":{"X-B":"2","A":"1"},"body":"{}"}`, "POST https://x.test/a\nA: 1\nX-B: 2\n\n{}"},
		{"long http body says it is cut", "http_request", `{"method":"POST","url":"https://x.test/a","body":"` + strings.Repeat("a", 499) + ` DROP"}`,
			"POST https://x.test/a\n\n" + strings.Repeat("a", 499) + " \n--- body cut: the first 500 of 504 bytes are shown ---"},
		{"unknown tool", "mcp_thing", `{"b":1,"a":"x"}`, `{"a":"x","b":1}`},
		{"not json", "execute_command", `rm -rf /`, `rm -rf /`},
	}
	reg := fourTools(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := reg.Operation(tc.tool, json.RawMessage(tc.args)).Text; got != tc.want {
				t.Errorf("operation = %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzParseDirect: no command line makes parseDirect panic, and a call it
// returns carries the command's text unchanged where the tool runs text.
func FuzzParseDirect(f *testing.F) {
	for _, s := range []string{"!run ls -la", "!sql SELECT 1", "!http GET http://x", "!file write a b c", "!file delete -r x", "!file", "!run"} {
		f.Add(s)
	}
	reg := fourTools(f)
	f.Fuzz(func(t *testing.T, text string) {
		tool, args, usage, ok := parseDirect(reg, text)
		if !ok || usage != "" {
			return
		}
		if _, err := json.Marshal(args); err != nil {
			t.Fatalf("parseDirect(%q) made arguments that do not encode: %v", text, err)
		}
		if tool == shelltool.Name && !strings.Contains(text, args["command"].(string)) {
			t.Fatalf("parseDirect(%q) changed the command to %q", text, args["command"])
		}
	})
}
