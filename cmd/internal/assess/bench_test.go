package assess

import (
	"bytes"
	"encoding/json"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/countersign/countersign/risk"
)

// benchInput is a realistic stream of calls: mostly reads, some writes and
// an absurd one now and then.
func benchInput(tb testing.TB, n int) []byte {
	tb.Helper()
	commands := []string{
		"ls -la /var/log", "df -h", "kubectl get pods -n prod", "ps aux | grep nginx | head",
		"journalctl -u nginx --since '1 hour ago' | tail -50", "systemctl restart nginx",
		"rm -rf ./build", "ls; rm -rf /",
	}
	sqls := []string{
		"SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.id = 7",
		"SHOW TABLES", "UPDATE orders SET status = 'x' WHERE id = 1", "DROP TABLE t",
	}
	var buf bytes.Buffer
	for i := range n {
		var line map[string]any
		switch i % 3 {
		case 0, 1:
			line = map[string]any{"tool": risk.ToolCommand, "args": map[string]string{"command": commands[i%len(commands)]}}
		default:
			line = map[string]any{"tool": risk.ToolSQL, "args": map[string]string{"sql": sqls[i%len(sqls)]}}
		}
		b, err := json.Marshal(line)
		if err != nil {
			tb.Fatal(err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// BenchmarkAssessStream measures countersign assess end to end (read,
// decode, judge, encode, write) and reports calls per second.
func BenchmarkAssessStream(b *testing.B) {
	p, err := risk.New(risk.Config{})
	if err != nil {
		b.Fatal(err)
	}
	const n = 20000
	input := benchInput(b, n)
	b.ReportAllocs()
	b.SetBytes(int64(len(input)))
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := Stream(p, "", bytes.NewReader(input), io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	calls := float64(n) * float64(b.N)
	b.ReportMetric(calls/b.Elapsed().Seconds(), "calls/s")
	// On a shared machine wall time says little; CPU time says what the
	// command costs.
	if cpu := (cpuTime() - cpu0).Seconds(); cpu > 0 {
		b.ReportMetric(calls/cpu, "calls/cpu-s")
	}
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
