package agent_test

import (
	"testing"

	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/tools"
)

// TestOutcome: a task's details say how its call ended in the card's
// words, and why one that did not run did not.
func TestOutcome(t *testing.T) {
	zero, one := 0, 1
	rows := 2
	for _, c := range []struct {
		r    tools.Result
		want string
	}{
		{tools.Result{Status: tools.StatusOK, Executed: true, ExitCode: &zero}, "exit code 0"},
		{tools.Result{Status: tools.StatusError, Executed: true, ExitCode: &one, Error: "permission denied\nmore"}, "exit code 1, permission denied"},
		{tools.Result{Status: tools.StatusOK, Executed: true, RowCount: &rows}, "2 rows"},
		{tools.Blocked("writes to /etc"), "blocked: "},
		{tools.Result{Status: tools.StatusOK, Executed: true}, "done"},
	} {
		got := agent.Outcome(c.r)
		if c.want == "blocked: " {
			if len(got) <= len(c.want) || got[:len(c.want)] != c.want {
				t.Errorf("Outcome(%+v) = %q, want it to start %q and say why", c.r, got, c.want)
			}
			continue
		}
		if got != c.want {
			t.Errorf("Outcome(%+v) = %q, want %q", c.r, got, c.want)
		}
	}
}
