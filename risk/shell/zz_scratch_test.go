package shell

import (
	"os"
	"strings"
	"testing"
)

func TestZZScratch(t *testing.T) {
	data, err := os.ReadFile("/tmp/rs_cases.txt")
	if err != nil {
		t.Skip()
	}
	a := newAnalyzer(t)
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		r := a.Analyze(line)
		v := "UNKNOWN"
		switch {
		case len(r.Absurd) > 0:
			v = "ABSURD"
		case len(r.Danger) > 0:
			v = "DANGER"
		case r.ReadOnly:
			v = "READ"
		}
		t.Logf("%-7s %s  || %v %v %v", v, line, r.Absurd, r.Danger, r.Unknown)
	}
}
