package slack

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/countersign/countersign/adapters/adaptertest"
)

// TestRuleCardGolden: the card states of approval rules (who may decide,
// the count, finished titles) as Slack blocks.
func TestRuleCardGolden(t *testing.T) {
	for name, c := range adaptertest.RuleCards("a1b2c3") {
		t.Run(name, func(t *testing.T) {
			c.Requester = "U0ALICE"
			got, err := json.MarshalIndent(blocks(c, attached{}), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
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
				t.Errorf("card %s differs from %s (go test -update rewrites it):\n%s", name, path, got)
			}
		})
	}
}
