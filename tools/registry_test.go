package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/countersign/countersign/tools"
	"github.com/countersign/countersign/tools/filetool"
	"github.com/countersign/countersign/tools/httptool"
	"github.com/countersign/countersign/tools/shelltool"
	"github.com/google/go-cmp/cmp"
)

// stubTool is a hand-written tool for the registry tests.
type stubTool struct {
	name   string
	schema string
}

var _ tools.Tool = stubTool{}

func (s stubTool) Name() string            { return s.name }
func (s stubTool) Description() string     { return "stub " + s.name }
func (s stubTool) Schema() json.RawMessage { return json.RawMessage(s.schema) }
func (s stubTool) Run(context.Context, json.RawMessage, tools.RunOptions) tools.Result {
	return tools.Result{Status: tools.StatusOK, Executed: true}
}

const objSchema = `{"type":"object","properties":{"sql":{"type":"string"}},"required":["sql"]}`

func TestNewRegistryErrors(t *testing.T) {
	tests := []struct {
		name    string
		tools   []tools.Tool
		wantErr string
	}{
		{"duplicate name", []tools.Tool{stubTool{"a", objSchema}, stubTool{"a", objSchema}}, `"a": name registered twice`},
		{"empty name", []tools.Tool{stubTool{"", objSchema}}, "name is empty"},
		{"nil tool", []tools.Tool{nil}, "tool is nil"},
		{"schema not JSON", []tools.Tool{stubTool{"a", `{`}}, `"a": schema: not a JSON object`},
		{"schema an array", []tools.Tool{stubTool{"a", `[]`}}, `"a": schema: not a JSON object`},
		{"schema a string type", []tools.Tool{stubTool{"a", `{"type":"string"}`}}, `"type" must be "object"`},
		{"schema without type", []tools.Tool{stubTool{"a", `{"properties":{}}`}}, `"type" must be "object"`},
		{"properties not an object", []tools.Tool{stubTool{"a", `{"type":"object","properties":[]}`}}, `"properties" must be an object`},
		{"declares risk_level", []tools.Tool{stubTool{"a", `{"type":"object","properties":{"risk_level":{}}}`}}, `declares "risk_level" itself`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tools.NewRegistry(tt.tools...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("NewRegistry error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestRegistrySpecsAddRiskLevelToEveryTool(t *testing.T) {
	r, err := tools.NewRegistry(
		stubTool{"execute_sql", objSchema},
		stubTool{"no_args", `{"type":"object"}`},
		stubTool{"plugin", `{"type":"object","properties":{"x":{"type":"integer"}},"additionalProperties":false}`},
	)
	if err != nil {
		t.Fatal(err)
	}
	specs := r.Specs()
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
		var schema struct {
			Type       string                                `json:"type"`
			Properties map[string]map[string]json.RawMessage `json:"properties"`
			Required   []string                              `json:"required"`
		}
		if err := json.Unmarshal(s.Parameters, &schema); err != nil {
			t.Fatalf("%s: parameters are not JSON: %v", s.Name, err)
		}
		rl, ok := schema.Properties["risk_level"]
		if !ok {
			t.Fatalf("%s: no risk_level in %s", s.Name, s.Parameters)
		}
		if got := string(rl["enum"]); got != `["low","medium","high"]` {
			t.Errorf("%s: risk_level enum = %s", s.Name, got)
		}
		if !strings.Contains(string(rl["description"]), "Leave it out when unsure") {
			t.Errorf("%s: risk_level description = %s", s.Name, rl["description"])
		}
		for _, req := range schema.Required {
			if req == "risk_level" {
				t.Errorf("%s: risk_level must stay optional", s.Name)
			}
		}
	}
	if diff := cmp.Diff([]string{"execute_sql", "no_args", "plugin"}, names); diff != "" {
		t.Errorf("Specs order (-want +got):\n%s", diff)
	}
	var sqlSchema map[string]json.RawMessage
	_ = json.Unmarshal(specs[0].Parameters, &sqlSchema)
	if string(sqlSchema["required"]) != `["sql"]` {
		t.Errorf("the tool's own schema keys were lost: %s", specs[0].Parameters)
	}

	// Changing the returned specs does not change the registry's.
	specs[0].Parameters[0] = 'X'
	if again := r.Specs(); again[0].Parameters[0] != '{' {
		t.Error("Specs returned the registry's own bytes")
	}
}

func TestRegistryLookup(t *testing.T) {
	r, err := tools.NewRegistry(stubTool{"a", objSchema})
	if err != nil {
		t.Fatal(err)
	}
	if tool, ok := r.Lookup("a"); !ok || tool.Name() != "a" {
		t.Errorf("Lookup(a) = %v, %v", tool, ok)
	}
	if _, ok := r.Lookup("b"); ok {
		t.Error("Lookup(b) found a tool that was never registered")
	}
}

// panicTool panics in Run and Preview.
type panicTool struct{ stubTool }

func (panicTool) Run(context.Context, json.RawMessage, tools.RunOptions) tools.Result {
	panic("boom")
}

func (panicTool) Preview(context.Context, json.RawMessage) tools.Preview { panic("boom") }

func TestRegistryRunAndPreview(t *testing.T) {
	r, err := tools.NewRegistry(stubTool{"ok", objSchema}, panicTool{stubTool{"panics", objSchema}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tests := []struct {
		name         string
		tool         string
		wantStatus   tools.Status
		wantExecuted bool
		wantErr      string
	}{
		{"runs the tool", "ok", tools.StatusOK, true, ""},
		{"unknown tool did not run", "nope", tools.StatusError, false, `there is no tool named "nope"`},
		{"panic is an error result", "panics", tools.StatusError, true, "failed unexpectedly"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := r.Run(ctx, tt.tool, nil, tools.RunOptions{})
			if res.Status != tt.wantStatus || res.Executed != tt.wantExecuted || !strings.Contains(res.Error, tt.wantErr) {
				t.Errorf("Run = %s", res.JSON())
			}
		})
	}
	if _, ok := r.Preview(ctx, "ok", nil); ok {
		t.Error("a tool without Preview gave one")
	}
	if p, ok := r.Preview(ctx, "panics", nil); !ok || p.Err == "" {
		t.Errorf("panicking preview = %+v, %v", p, ok)
	}
}

// Every tool registers as it is: its schema is one the registry can add
// risk_level to, and it does not declare risk_level itself. (execute_sql
// needs a database to build; sqltool's own tests register it.)
func TestEveryToolRegisters(t *testing.T) {
	tests := []struct {
		name  string
		build func(root string) (tools.Tool, error)
	}{
		{name: filetool.Name, build: func(root string) (tools.Tool, error) { return filetool.New(filetool.Config{Root: root}) }},
		{name: shelltool.Name, build: func(root string) (tools.Tool, error) { return shelltool.New(shelltool.Config{Root: root}) }},
		{name: httptool.Name, build: func(string) (tools.Tool, error) { return httptool.New(httptool.Config{}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := tt.build(t.TempDir())
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if c, ok := tool.(interface{ Close() error }); ok {
				t.Cleanup(func() { _ = c.Close() })
			}
			reg, err := tools.NewRegistry(tool)
			if err != nil {
				t.Fatalf("NewRegistry: %v", err)
			}
			specs := reg.Specs()
			if len(specs) != 1 || specs[0].Name != tt.name || !strings.Contains(string(specs[0].Parameters), `"risk_level"`) {
				t.Fatalf("specs %+v", specs)
			}
		})
	}
}
