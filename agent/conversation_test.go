package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/countersign/countersign/tools"
)

func user(s string) Message      { return Message{Role: RoleUser, Content: s} }
func assistant(s string) Message { return Message{Role: RoleAssistant, Content: s} }
func calls(ids ...string) Message {
	m := Message{Role: RoleAssistant}
	for _, id := range ids {
		m.ToolCalls = append(m.ToolCalls, ToolCall{ID: id, Name: "execute_command", Arguments: `{"command":"ls"}`})
	}
	return m
}
func result(id string) Message {
	return Message{Role: RoleTool, ToolCallID: id, Content: `{"status":"ok","executed":true}`}
}

// label names messages for compact comparisons: u:text, a:text, call:id,id, tool:id.
func label(msgs []Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		switch {
		case m.Role == RoleTool:
			out[i] = "tool:" + m.ToolCallID
		case len(m.ToolCalls) > 0:
			var ids []string
			for _, c := range m.ToolCalls {
				ids = append(ids, c.ID)
			}
			out[i] = "call:" + strings.Join(ids, ",")
		default:
			out[i] = string(m.Role)[:1] + ":" + m.Content
		}
	}
	return out
}

func TestTrim(t *testing.T) {
	big := strings.Repeat("x", 1000)
	tests := []struct {
		name        string
		msgs        []Message
		maxMessages int
		maxBytes    int
		want        []string
	}{
		{
			name:        "under the caps nothing goes",
			msgs:        []Message{user("1"), calls("c1"), result("c1"), assistant("2")},
			maxMessages: 10, maxBytes: 10000,
			want: []string{"u:1", "call:c1", "tool:c1", "a:2"},
		},
		{
			name:        "the oldest messages go first",
			msgs:        []Message{user("1"), assistant("2"), user("3"), assistant("4")},
			maxMessages: 2,
			want:        []string{"u:3", "a:4"},
		},
		{
			name:        "a call goes with its result",
			msgs:        []Message{user("1"), calls("c1"), result("c1"), user("2"), assistant("3")},
			maxMessages: 3, // cutting at 3 would leave tool:c1 alone
			want:        []string{"u:2", "a:3"},
		},
		{
			name:        "parallel calls go with all their results",
			msgs:        []Message{user("1"), calls("c1", "c2", "c3"), result("c1"), result("c2"), result("c3"), assistant("done")},
			maxMessages: 4,
			want:        []string{"a:done"},
		},
		{
			name:        "a call unit that fits is kept whole",
			msgs:        []Message{user("1"), calls("c1", "c2"), result("c1"), result("c2"), assistant("done")},
			maxMessages: 4,
			want:        []string{"call:c1,c2", "tool:c1", "tool:c2", "a:done"},
		},
		{
			name:     "the byte estimate trims too",
			msgs:     []Message{user(big), user(big), user("last")},
			maxBytes: 1500,
			want:     []string{"u:" + big, "u:last"},
		},
		{
			name:     "the newest unit stays even when it alone is too big",
			msgs:     []Message{user("1"), calls("c1"), Message{Role: RoleTool, ToolCallID: "c1", Content: big}},
			maxBytes: 100,
			want:     []string{"call:c1", "tool:c1"},
		},
		{
			name: "a result without its call is dropped",
			msgs: []Message{result("gone"), user("1"), assistant("2")},
			want: []string{"u:1", "a:2"},
		},
		{
			name: "a call missing a result is dropped",
			msgs: []Message{user("1"), calls("c1", "c2"), result("c1"), user("2")},
			want: []string{"u:1", "u:2"},
		},
		{
			name: "a result for another call is dropped with its unit",
			msgs: []Message{user("1"), calls("c1"), result("c9"), user("2")},
			want: []string{"u:1", "u:2"},
		},
		{
			name: "empty",
			msgs: nil,
			want: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := label(trim(tt.msgs, tt.maxMessages, tt.maxBytes))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("trim (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTrimNeverSplits checks every cap on a long mixed conversation: the
// trimmed conversation is always a suffix made of whole units.
func TestTrimNeverSplits(t *testing.T) {
	var msgs []Message
	for i := range 30 {
		id := string(rune('a'+i%26)) + strings.Repeat("x", i)
		msgs = append(msgs, user("q"), calls(id+"1", id+"2"), result(id+"1"), result(id+"2"), assistant("a"))
	}
	for maxMessages := 1; maxMessages <= len(msgs)+1; maxMessages++ {
		got := trim(msgs, maxMessages, 0)
		if len(got) > maxMessages && len(got) > 3 {
			t.Fatalf("cap %d kept %d messages", maxMessages, len(got))
		}
		open := map[string]bool{}
		for i, m := range got {
			switch {
			case m.Role == RoleTool:
				if !open[m.ToolCallID] {
					t.Fatalf("cap %d: result %s at %d has no call before it", maxMessages, m.ToolCallID, i)
				}
				delete(open, m.ToolCallID)
			case len(m.ToolCalls) > 0:
				if len(open) != 0 {
					t.Fatalf("cap %d: calls %v left without results", maxMessages, open)
				}
				for _, c := range m.ToolCalls {
					open[c.ID] = true
				}
			default:
				if len(open) != 0 {
					t.Fatalf("cap %d: calls %v left without results", maxMessages, open)
				}
			}
		}
		if len(open) != 0 {
			t.Fatalf("cap %d: calls %v left without results at the end", maxMessages, open)
		}
	}
}

func TestCheckArgs(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"command":{"type":"string"},"timeout_seconds":{"type":"integer"},"recursive":{"type":"boolean"},
		"headers":{"type":"object"},"ratio":{"type":"number"},"maybe":{"type":["string","null"]},
		"risk_level":{"type":"string","enum":["low","medium","high"]}},"required":["command"]}`)
	tests := []struct {
		name    string
		args    string
		wantErr string
	}{
		{"valid", `{"command":"ls","timeout_seconds":5,"recursive":true,"headers":{},"ratio":0.5}`, ""},
		{"risk level in capitals passes to the policy", `{"command":"ls","risk_level":"HIGH"}`, ""},
		{"unknown arguments are the tool's business", `{"command":"ls","colour":"red"}`, ""},
		{"null where allowed", `{"command":"ls","maybe":null}`, ""},
		{"empty means no arguments", ``, `missing required argument "command"`},
		{"not JSON", `{"command":`, "not valid JSON"},
		{"two objects", `{"command":"ls"}{"command":"rm"}`, "not valid JSON"},
		{"a string", `"ls"`, "not a string"},
		{"null", `null`, "not null"},
		{"missing", `{"timeout_seconds":5}`, `missing required argument "command"`},
		{"wrong type", `{"command":["ls"]}`, `argument "command" must be string, not an array`},
		{"fraction for an integer", `{"command":"ls","timeout_seconds":1.5}`, `argument "timeout_seconds" must be integer`},
		{"string for a boolean", `{"command":"ls","recursive":"yes"}`, `argument "recursive" must be boolean, not a string`},
		{"null where not allowed", `{"command":null}`, `argument "command" must be string, not null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := checkArgs(tt.args, schema)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("checkArgs: %v", err)
				}
				if strings.TrimSpace(tt.args) != string(got) {
					t.Errorf("checkArgs changed the arguments: %s", got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("checkArgs error = %v, want one saying %q", err, tt.wantErr)
			}
		})
	}
}

func FuzzTrim(f *testing.F) {
	f.Add([]byte(`[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"a","name":"x","arguments":"{}"}]},{"role":"tool","tool_call_id":"a","content":"{}"}]`), 2, 100)
	f.Add([]byte(`[{"role":"tool","tool_call_id":"a"},{"role":"assistant","tool_calls":[{"id":"a"},{"id":"a"}]},{"role":"tool","tool_call_id":"a"},{"role":"tool","tool_call_id":"a"}]`), 1, 0)
	f.Fuzz(func(t *testing.T, data []byte, maxMessages, maxBytes int) {
		var msgs []Message
		if json.Unmarshal(data, &msgs) != nil {
			return
		}
		got := trim(msgs, maxMessages, maxBytes)
		for i := 0; i < len(got); i++ {
			m := got[i]
			if m.Role == RoleTool {
				t.Fatalf("result %d without its call in %s", i, label(got))
			}
			if len(m.ToolCalls) > 0 {
				j := i + 1
				for j < len(got) && got[j].Role == RoleTool {
					j++
				}
				if !complete(m.ToolCalls, got[i+1:j]) {
					t.Fatalf("call at %d without all its results in %s", i, label(got))
				}
				i = j - 1
			}
		}
	})
}

func TestToolMessagesKeepTheContract(t *testing.T) {
	tests := []struct {
		name   string
		result *tools.Result
	}{
		{"a bare not-run result", &tools.Result{Status: tools.StatusDenied, Error: "outside the root"}},
		{"a result without a status", &tools.Result{}},
		{"a not-run result with its own words", &tools.Result{Status: tools.StatusError, Message: "The server was down."}},
		{"no result at all", nil},
		{"a cancelled result", ptr(tools.Cancelled("Bob", "not now"))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msgs := toolMessages([]callState{{ID: "c1", Result: tc.result}})
			if len(msgs) != 1 || msgs[0].ToolCallID != "c1" || msgs[0].Role != RoleTool {
				t.Fatalf("messages = %+v, want one tool message for c1", msgs)
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(msgs[0].Content), &got); err != nil {
				t.Fatalf("content is not JSON: %v", err)
			}
			if got["status"] == nil || got["status"] == "" {
				t.Errorf("no status in %s", msgs[0].Content)
			}
			if exec, ok := got["executed"].(bool); !ok || exec {
				t.Errorf("executed = %v in %s, want false", got["executed"], msgs[0].Content)
			}
			if msg, _ := got["message"].(string); strings.Count(msg, tools.DidNotRun) != 1 {
				t.Errorf("message %q does not say once that it did not run", msg)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
