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
