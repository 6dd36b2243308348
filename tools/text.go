package tools

import (
	"encoding/json"
	"fmt"
	"strings"
)

// How a result's rows are shown as text.
const (
	// TableRows is how many rows Table shows.
	TableRows = 20
	// cellRunes caps one cell.
	cellRunes = 60
)

// Output is what a result shows as text, in one place for the card and the
// chat: the command's output, the rows as a table, the response body, the
// file's content.
func (r Result) Output() string {
	var b strings.Builder
	add := func(s string) {
		if s == "" {
			return
		}
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(s)
	}
	add(r.Stdout)
	if r.Stderr != "" {
		add("stderr:\n" + r.Stderr)
	}
	if len(r.Columns) > 0 {
		add(Table(r.Columns, r.Rows))
	}
	add(r.Body)
	add(r.Content)
	if len(r.Data) > 0 && r.Content == "" {
		add(string(r.Data))
	}
	return b.String()
}

// Table lays rows out in aligned columns, at most TableRows of them, and
// says how many more there are.
func Table(cols []Column, rows [][]any) string {
	cells := make([][]string, 0, min(len(rows), TableRows)+1)
	head := make([]string, len(cols))
	for i, c := range cols {
		head[i] = c.Name
	}
	cells = append(cells, head)
	for _, row := range rows[:min(len(rows), TableRows)] {
		line := make([]string, len(cols))
		for i := range cols {
			if i < len(row) {
				line[i] = Cell(row[i])
			}
		}
		cells = append(cells, line)
	}
	width := make([]int, len(cols))
	for _, line := range cells {
		for i, c := range line {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	var b strings.Builder
	for _, line := range cells {
		for i, c := range line {
			if i > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(c + strings.Repeat(" ", width[i]-len([]rune(c))))
		}
		b.WriteString("\n")
	}
	if len(rows) > TableRows {
		fmt.Fprintf(&b, "… %d more rows\n", len(rows)-TableRows)
	}
	return b.String()
}

// Cell is one value of a row as text, on one line and capped: NULL for
// nil, strings as they are, anything else as JSON.
func Cell(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case string:
		return OneLine(v, cellRunes)
	case []byte:
		return OneLine(string(v), cellRunes)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return OneLine(string(b), cellRunes)
}

// OneLine folds s onto one line of at most limit runes, marking a cut
// with "…".
func OneLine(s string, limit int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > limit {
		s = string(r[:limit]) + "…"
	}
	return s
}
