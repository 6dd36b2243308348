package httptool

import (
	"strings"
	"testing"

	"github.com/countersign/countersign/tools"
)

// The tool registers as it is, and the registry can add risk_level to its
// schema.
func TestRegisters(t *testing.T) {
	reg, err := tools.NewRegistry(newTool(t, Config{}))
	if err != nil {
		t.Fatalf("NewRegistry: %v", err)
	}
	specs := reg.Specs()
	if len(specs) != 1 || specs[0].Name != Name || !strings.Contains(string(specs[0].Parameters), `"risk_level"`) {
		t.Fatalf("specs %+v", specs)
	}
}
