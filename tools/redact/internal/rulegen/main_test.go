package main

import (
	"bytes"
	"os"
	"testing"
)

// TestTableUpToDate: the checked-in table is what gitleaks' rule set in
// go.mod gives; after a change of version, run go generate in tools/redact.
func TestTableUpToDate(t *testing.T) {
	want, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../" + out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("tools/redact/%s is not what rulegen writes from gitleaks' rule set; run go generate ./tools/redact", out)
	}
}
