package sqltool

import (
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/countersign/countersign/tools"
)

// TimeFormat is how DATE, DATETIME and TIMESTAMP values are shown: the
// server's own text, which has this form (DATE has only the date part).
const TimeFormat = "2006-01-02 15:04:05"

// table is what was read from one result set.
type table struct {
	columns []tools.Column
	rows    [][]any
	more    bool // there were more rows than were kept
	full    bool // rows stopped at the byte cap, not the row cap
	cut     bool // a value was cut to the cell cap
}

// limits are the caps on what one result carries.
type limits struct {
	rows  int // rows kept
	cell  int // bytes of one value's text
	bytes int // bytes of all values' text, roughly as JSON
}

// readTable reads rows until a cap is reached, and one more to know whether
// there were more. It does not drain or close rows.
func readTable(rows *sql.Rows, lim limits) (table, error) {
	var t table
	types, err := rows.ColumnTypes()
	if err != nil {
		return t, fmt.Errorf("read columns: %w", err)
	}
	t.columns = make([]tools.Column, len(types))
	dbTypes := make([]string, len(types))
	for i, ct := range types {
		dbTypes[i] = ct.DatabaseTypeName()
		t.columns[i] = tools.Column{Name: ct.Name(), Type: dbTypes[i]}
	}
	vals := make([]any, len(types))
	ptrs := make([]any, len(types))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	t.rows = [][]any{}
	size := 0
	for rows.Next() {
		if len(t.rows) >= lim.rows || size >= lim.bytes {
			t.more = true
			t.full = len(t.rows) < lim.rows
			break
		}
		if err := rows.Scan(ptrs...); err != nil {
			return t, fmt.Errorf("read row %d: %w", len(t.rows)+1, err)
		}
		row := make([]any, len(vals))
		for i, v := range vals {
			var cut bool
			row[i], cut = jsonValue(v, dbTypes[i], lim.cell)
			t.cut = t.cut || cut
			size += valueSize(row[i])
		}
		t.rows = append(t.rows, row)
	}
	return t, nil
}

// jsonValue turns one driver value into what the LLM sees: null, a number
// for integers and floats, a string for decimals, text and times, and "0x…"
// hex for binary columns and for text that is not valid UTF-8. Long values
// are cut to maxCell bytes (reported by cut).
func jsonValue(v any, dbType string, maxCell int) (out any, cut bool) {
	switch v := v.(type) {
	case nil:
		return nil, false
	case int64, uint64:
		return v, false
	case float32:
		return floatValue(float64(v), 32), false
	case float64:
		bits := 64
		if dbType == "FLOAT" {
			bits = 32 // a widened float32: print it as one
		}
		return floatValue(v, bits), false
	case []byte:
		if binaryType(dbType) || !utf8.Valid(v) {
			return hexValue(v, maxCell)
		}
		return tools.CapText(string(v), maxCell)
	case string:
		return tools.CapText(v, maxCell)
	case time.Time:
		return v.Format(TimeFormat + ".999999"), false
	case bool:
		return v, false
	}
	return fmt.Sprint(v), false
}

// valueSize is roughly how many bytes v takes in the result's JSON.
func valueSize(v any) int {
	switch v := v.(type) {
	case string:
		return len(v) + 3
	case json.Number:
		return len(v) + 1
	}
	return 8
}

// floatValue is a JSON number with the shortest digits that read back as
// the same float of that size; NaN and infinities (which MySQL does not
// store) become strings.
func floatValue(v float64, bits int) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return json.Number(strconv.FormatFloat(v, 'g', -1, bits))
}

// hexValue writes p as "0x…", cut so the text stays within maxCell bytes.
func hexValue(p []byte, maxCell int) (string, bool) {
	n := max((maxCell-2)/2, 0)
	cut := len(p) > n
	if cut {
		p = p[:n]
	}
	return "0x" + hex.EncodeToString(p), cut
}

// binaryType reports whether the driver's column type holds bytes, not text.
func binaryType(dbType string) bool {
	switch dbType {
	case "BINARY", "VARBINARY", "BLOB", "TINYBLOB", "MEDIUMBLOB", "LONGBLOB", "BIT", "GEOMETRY":
		return true
	}
	return false
}
