package discord

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
)

// TestRuleCardGolden: the card states of approval rules (who may decide,
// the count, finished titles) as Discord messages.
func TestRuleCardGolden(t *testing.T) {
	for name, c := range adaptertest.RuleCards("a1b2c3d4e5f6") {
		t.Run(name, func(t *testing.T) {
			m := render(adapters.Content{Card: &c})
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(golden{Message: m, Files: m.Files}); err != nil {
				t.Fatal(err)
			}
			got := buf.Bytes()
			path := filepath.Join("testdata", name+".golden.json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to write it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the golden file; run go test -update and review the diff.\ngot:\n%s", path, got)
			}
		})
	}
}
