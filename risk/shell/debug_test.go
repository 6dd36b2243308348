package shell

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

func TestDebugPrint(t *testing.T) {
	f := os.Getenv("SHDBG")
	if f == "" {
		t.Skip()
	}
	a, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(f)
	var cases []string
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		r := a.Analyze(c)
		fmt.Printf("%-50q ro=%v A=%q D=%q U=%q\n", c, r.ReadOnly, r.Absurd, r.Danger, r.Unknown)
	}
}
