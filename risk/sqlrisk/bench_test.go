package sqlrisk

import (
	"sort"
	"testing"
	"time"
)

// benchMix is a realistic mix of what an on-call engineer asks for: short
// SELECTs with joins, SHOW, DESCRIBE, EXPLAIN, and some writes.
var benchMix = []string{
	"SELECT id, status, created_at FROM orders WHERE customer_id = 42 ORDER BY created_at DESC LIMIT 20",
	"SELECT o.id, c.email, SUM(i.price * i.qty) AS total FROM orders o JOIN customers c ON c.id = o.customer_id JOIN order_items i ON i.order_id = o.id WHERE o.created_at > NOW() - INTERVAL 1 DAY GROUP BY o.id, c.email HAVING total > 100 ORDER BY total DESC LIMIT 50",
	"SHOW TABLES",
	"SHOW FULL PROCESSLIST",
	"DESCRIBE orders",
	"SHOW CREATE TABLE orders",
	"EXPLAIN SELECT * FROM orders WHERE status = 'pending'",
	"SELECT COUNT(*) FROM users WHERE last_login < DATE_SUB(CURDATE(), INTERVAL 30 DAY)",
	"WITH recent AS (SELECT * FROM orders WHERE created_at > '2026-01-01') SELECT status, COUNT(*) FROM recent GROUP BY status",
	"SELECT table_name, table_rows FROM information_schema.tables WHERE table_schema = 'shop'",
	"SHOW GLOBAL STATUS LIKE 'Threads_%'",
	"UPDATE orders SET status = 'cancelled' WHERE id = 1234",
	"DELETE FROM sessions WHERE expires_at < NOW()",
	"INSERT INTO audit_notes (order_id, note) VALUES (1234, 'refunded')",
	"SELECT * FROM orders WHERE id IN (SELECT order_id FROM refunds WHERE amount > 50)",
	"DROP TABLE tmp_import",
}

func BenchmarkAnalyze(b *testing.B) {
	a, err := New("")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		a.Analyze(benchMix[i%len(benchMix)])
		i++
	}
}

// BenchmarkAnalyzeMedian reports the median time of one Analyze over the mix
// (the target is under 20 µs on the 2-core machine).
func BenchmarkAnalyzeMedian(b *testing.B) {
	a, err := New("")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	times := make([]time.Duration, 0, 1<<16)
	i := 0
	for b.Loop() {
		start := time.Now()
		a.Analyze(benchMix[i%len(benchMix)])
		if len(times) < cap(times) {
			times = append(times, time.Since(start))
		}
		i++
	}
	sort.Slice(times, func(x, y int) bool { return times[x] < times[y] })
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "median-ns")
}

func BenchmarkAnalyzeParallel(b *testing.B) {
	a, err := New("")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			a.Analyze(benchMix[i%len(benchMix)])
			i++
		}
	})
}
