package tools

import (
	"cmp"
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

// Briefly says in a few words how a call ended, for its task: the words
// of the card (Result.Outcome: "exit code 0", "2 rows", "HTTP
// 200"), with the first line of the error of a failure; or why it did not
// run ("blocked: writes to /etc", "denied: …").
func (r Result) Briefly() string {
	why := strings.TrimSpace(cmp.Or(r.Error, r.Message))
	why, _, _ = strings.Cut(why, "\n")
	switch {
	case r.Status == StatusBlocked:
		return "blocked: " + why
	case !r.Executed:
		return strings.TrimSuffix(string(r.Status)+": "+why, ": ")
	}
	out := r.Outcome()
	if r.Status != StatusOK && why != "" {
		out = strings.TrimPrefix(out+", "+why, ", ")
	}
	return cmp.Or(out, "done")
}
