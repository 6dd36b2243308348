package tools_test

import (
	"context"
	"strings"
	"testing"

	"github.com/countersign/countersign/tools"
)

// TestRegistryWith: tools added later are looked up, run and described
// like the first, after them; the first registry is unchanged, and a name
// taken or a bad schema is refused.
func TestRegistryWith(t *testing.T) {
	r, err := tools.NewRegistry(stubTool{"a", objSchema})
	if err != nil {
		t.Fatal(err)
	}
	r.Off("execute_sql", tools.Direct{Verb: "!sql"}, "off")
	q, err := r.With(stubTool{"mcp__b", `{"type":"object"}`})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range q.Specs() {
		names = append(names, s.Name)
		if !strings.Contains(string(s.Parameters), tools.RiskLevelArg) {
			t.Errorf("%s's schema lacks risk_level: %s", s.Name, s.Parameters)
		}
	}
	if strings.Join(names, ",") != "a,mcp__b" {
		t.Errorf("specs after With = %v, want a then mcp__b", names)
	}
	if res := q.Run(context.Background(), "mcp__b", []byte(`{}`), tools.RunOptions{}); res.Status != tools.StatusOK {
		t.Errorf("run of an added tool: %+v", res)
	}
	if _, ok := r.Lookup("mcp__b"); ok || len(r.Specs()) != 1 {
		t.Error("With changed the first registry")
	}
	if d := q.Directs(); len(d) != 1 || d[0].Off != "off" {
		t.Errorf("the directs of tools that are off were lost: %+v", d)
	}
	if _, err := q.With(stubTool{"a", objSchema}); err == nil || !strings.Contains(err.Error(), `"a": name registered twice`) {
		t.Errorf("a taken name: %v", err)
	}
	if _, err := r.With(stubTool{"c", `{"type":"string"}`}); err == nil {
		t.Error("a schema that is not an object schema was taken")
	}
}
