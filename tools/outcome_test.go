package tools_test

import (
	"testing"

	"github.com/countersign/countersign/tools"
)

// TestOutcome: the words of a run's end that the card and the chat both
// show (bot/card.go outcome, agent/render.go render).
func TestOutcome(t *testing.T) {
	zero, two := 0, 2
	var one int64 = 1
	tests := []struct {
		r    tools.Result
		want string
	}{
		{tools.Result{ExitCode: &zero, RowCount: &two}, "exit code 0"},
		{tools.Result{RowsAffected: &one}, "1 row affected"},
		{tools.Result{RowCount: &two}, "2 rows"},
		{tools.Result{HTTPStatus: 503, Error: "unavailable"}, "HTTP 503"},
		{tools.Result{}, ""},
	}
	for _, tt := range tests {
		if got := tt.r.Outcome(); got != tt.want {
			t.Errorf("Outcome(%+v) = %q, want %q", tt.r, got, tt.want)
		}
	}
	if got := (tools.Result{HTTPStatus: 503, Error: "unavailable"}).OutcomeWithError(); got != "HTTP 503, unavailable" {
		t.Errorf("OutcomeWithError = %q, want %q", got, "HTTP 503, unavailable")
	}
}

// TestBriefly: a task's details say how its call ended in the card's
// words, and why one that did not run did not.
func TestBriefly(t *testing.T) {
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
		got := c.r.Briefly()
		if c.want == "blocked: " {
			if len(got) <= len(c.want) || got[:len(c.want)] != c.want {
				t.Errorf("Briefly(%+v) = %q, want it to start %q and say why", c.r, got, c.want)
			}
			continue
		}
		if got != c.want {
			t.Errorf("Briefly(%+v) = %q, want %q", c.r, got, c.want)
		}
	}
}
