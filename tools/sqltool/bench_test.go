package sqltool

import (
	"context"
	"testing"

	"github.com/countersign/countersign/tools"
)

// BenchmarkOverhead is the tool layer's own work per call, without the
// server: decode and check the arguments, classify the SQL, convert a row
// of values, encode the result.
func BenchmarkOverhead(b *testing.B) {
	tool := offlineTool(b)
	raw := args("SELECT id, name, created_at FROM orders WHERE id = 42")
	b.ReportAllocs()
	for b.Loop() {
		a, _, err := tool.args(raw)
		if err != nil {
			b.Fatal(err)
		}
		if st := tool.class.classify(a.SQL); st.kind != kindRead {
			b.Fatal(st.notRead)
		}
		row := make([]any, 3)
		row[0], _ = jsonValue(int64(42), "INT", 4096)
		row[1], _ = jsonValue([]byte("widget"), "VARCHAR", 4096)
		row[2], _ = jsonValue([]byte("2024-02-29 13:14:15"), "DATETIME", 4096)
		n := 1
		r := tools.Result{Status: tools.StatusOK, Executed: true, Columns: []tools.Column{{Name: "id", Type: "INT"}, {Name: "name", Type: "VARCHAR"}, {Name: "created_at", Type: "DATETIME"}}, Rows: [][]any{row}, RowCount: &n}
		if len(r.JSON()) == 0 {
			b.Fatal("empty")
		}
	}
}

func BenchmarkClassify(b *testing.B) {
	c, _ := newClassifier()
	b.ReportAllocs()
	for b.Loop() {
		c.classify("SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.created_at > '2024-01-01' ORDER BY o.id LIMIT 50")
	}
}

// BenchmarkRun is a whole call of SELECT 1 against the test MariaDB: the
// round trips dominate (auto-run: SET session, START TRANSACTION READ ONLY,
// the query, ROLLBACK).
func BenchmarkRun(b *testing.B) {
	f := newFixture(b)
	for _, bc := range []struct {
		name string
		auto bool
	}{{"auto-run", true}, {"approved", false}} {
		b.Run(bc.name, func(b *testing.B) {
			tool := f.tool(b, true, nil)
			raw := args("SELECT 1")
			b.ReportAllocs()
			for b.Loop() {
				if r := tool.Run(context.Background(), raw, tools.RunOptions{AutoRun: bc.auto}); r.Status != tools.StatusOK {
					b.Fatal(r.JSON())
				}
			}
		})
	}
}
