package sqltool

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/countersign/countersign/tools"
)

// Preview implements tools.Previewer: for a DELETE or UPDATE, the rows
// EXPLAIN estimates it would touch. The EXPLAIN is of the SELECT over the
// same tables and WHERE (never EXPLAIN ANALYZE, never the statement itself),
// built from the parsed statement and sent on a read-only session inside a
// read-only transaction with the preview time limit, so nothing can change.
// Other statements get no preview. A failed preview says why in Err.
func (t *Tool) Preview(ctx context.Context, raw json.RawMessage) tools.Preview {
	a, d, err := t.args(raw)
	if err != nil {
		return tools.Preview{Err: err.Error()}
	}
	st := t.class.classify(a.SQL)
	if st.kind != kindDelete && st.kind != kindUpdate {
		return tools.Preview{}
	}
	q, err := explainSelect(st)
	if err != nil {
		return tools.Preview{Err: "no estimate: " + err.Error()}
	}
	limit := t.cfg.PreviewTimeout
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	tx, done, err := t.readOnlyTx(ctx, d, limit)
	if err != nil {
		return tools.Preview{Err: "no estimate: " + err.Error()}
	}
	defer done()
	rows, err := tx.QueryContext(ctx, q)
	if err != nil {
		return tools.Preview{Err: "no estimate: EXPLAIN failed: " + t.plainError(err, limit)}
	}
	plan, err := readExplain(rows)
	if err != nil {
		return tools.Preview{Err: "no estimate: reading EXPLAIN: " + t.plainError(err, limit)}
	}
	if len(plan) == 0 {
		return tools.Preview{Err: "no estimate: EXPLAIN returned no plan"}
	}
	return planPreview(st, plan)
}

// planRow is one row of EXPLAIN output.
type planRow struct {
	table, access, key, extra string
	rows                      int64
	known                     bool // rows was a number
}

func readExplain(rows *sql.Rows) ([]planRow, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	idx := map[string]int{}
	for i, c := range cols {
		idx[strings.ToLower(c)] = i
	}
	if _, ok := idx["rows"]; !ok {
		return nil, errors.New("EXPLAIN has no rows column")
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	get := func(name string) string {
		if i, ok := idx[name]; ok {
			return vals[i].String
		}
		return ""
	}
	var plan []planRow
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		pr := planRow{table: get("table"), access: get("type"), key: get("key"), extra: get("extra")}
		if n, err := strconv.ParseInt(get("rows"), 10, 64); err == nil {
			pr.rows, pr.known = n, true
		}
		plan = append(plan, pr)
	}
	return plan, rows.Err()
}

// planPreview summarises a plan: the first row is the statement's main
// table; every row is listed.
func planPreview(st statement, plan []planRow) tools.Preview {
	verb := "delete"
	if st.kind == kindUpdate {
		verb = "update"
	}
	p := tools.Preview{}
	for _, r := range plan {
		item := r.table
		if item == "" {
			item = "(no table)"
		}
		if r.known {
			item += fmt.Sprintf(": about %s rows", tools.FormatCount(r.rows))
		} else {
			item += ": no row estimate"
		}
		how := r.access
		if r.key != "" {
			how += " using index " + r.key
		} else if r.access == "ALL" {
			how += ", no index: a full table scan"
		}
		if how != "" {
			item += " (" + how + ")"
		}
		if r.extra != "" {
			item += "; " + r.extra
		}
		p.Items = append(p.Items, item)
	}
	first := plan[0]
	if first.known {
		p.Estimate = first.rows
		p.Summary = fmt.Sprintf("EXPLAIN estimates this would %s about %s rows of %s", verb, tools.FormatCount(first.rows), first.table)
	} else {
		p.Summary = fmt.Sprintf("EXPLAIN gave no row estimate for %s", first.table)
	}
	if len(plan) > 1 {
		p.Summary += fmt.Sprintf(" (the plan reads %d tables; see each)", len(plan))
	}
	p.Summary += ". It is the optimizer's estimate, not a count."
	return p
}
