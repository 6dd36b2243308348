package tools

import (
	"strconv"
	"strings"
)

// Outcome says how a run ended, in the words every surface uses (the card's
// state line and the chat's reply): the exit code, the rows, or the HTTP
// status, whichever the tool reported first in that order ("exit code 0",
// "1 row affected", "2 rows", "HTTP 200"); "" when it reported none.
// The error, the output and the time are each surface's to place.
func (r Result) Outcome() string {
	switch {
	case r.ExitCode != nil:
		return "exit code " + strconv.Itoa(*r.ExitCode)
	case r.RowsAffected != nil:
		return plural(int(*r.RowsAffected), "row") + " affected"
	case r.RowCount != nil:
		return plural(*r.RowCount, "row")
	case r.HTTPStatus != 0:
		return "HTTP " + strconv.Itoa(r.HTTPStatus)
	}
	return ""
}

// OutcomeWithError is Outcome followed by the run's error, when it has
// one: "exit code 1, permission denied".
func (r Result) OutcomeWithError() string {
	var parts []string
	if o := r.Outcome(); o != "" {
		parts = append(parts, o)
	}
	if r.Error != "" {
		parts = append(parts, r.Error)
	}
	return strings.Join(parts, ", ")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
