package shell

import (
	"bufio"
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
	fh, _ := os.Open(f)
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		r := a.Analyze(sc.Text())
		fmt.Printf("%-50q ro=%v A=%q D=%q U=%q\n", sc.Text(), r.ReadOnly, r.Absurd, r.Danger, r.Unknown)
	}
}
