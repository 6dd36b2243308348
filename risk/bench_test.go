package risk

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/countersign/countersign/internal/corpus"
)

// typicalCommands are what an on-call engineer asks for all day, with a few
// writes among them.
var typicalCommands = []string{
	"ls -la /var/log",
	"df -h",
	"free -m",
	"uptime",
	"ps aux | grep nginx | head -20",
	"kubectl get pods -n prod -o wide",
	"kubectl describe pod web-7d9f -n prod",
	"kubectl logs deploy/api -n prod --since=10m | grep -i error | tail -50",
	"journalctl -u nginx --since '1 hour ago' --no-pager | tail -100",
	"systemctl status nginx",
	"docker ps --format '{{.Names}} {{.Status}}'",
	"du -sh /var/lib/* 2>/dev/null | sort -h | tail",
	"grep -rn 'timeout' /etc/nginx/conf.d/",
	"tail -n 200 /var/log/syslog",
	"ss -tlnp",
	"dig +short api.example.com",
	"git log --oneline -20",
	"find /var/log -name '*.gz' -mtime +7",
	"cat /proc/meminfo | head",
	"systemctl restart nginx",
	"rm -rf ./build/cache",
	"kubectl rollout restart deployment/api -n prod",
	"ls; rm -rf /",
}

var typicalSQL = []string{
	"SELECT id, email, created_at FROM users WHERE id = 42",
	"SELECT o.id, o.total, c.name FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.created_at > NOW() - INTERVAL 1 DAY ORDER BY o.total DESC LIMIT 20",
	"SHOW TABLES",
	"SHOW PROCESSLIST",
	"DESCRIBE orders",
	"EXPLAIN SELECT * FROM orders WHERE status = 'pending'",
	"SELECT status, COUNT(*) FROM orders GROUP BY status",
	"WITH recent AS (SELECT * FROM events WHERE ts > NOW() - INTERVAL 1 HOUR) SELECT type, COUNT(*) FROM recent GROUP BY type",
	"SHOW ENGINE INNODB STATUS",
	"UPDATE orders SET status = 'cancelled' WHERE id = 1234",
	"DELETE FROM sessions WHERE expires_at < NOW()",
	"DROP TABLE tmp_import",
}

func benchCalls(tb testing.TB, tool string, key string, texts []string, extra ...string) []Call {
	tb.Helper()
	var calls []Call
	for _, s := range slices.Concat(texts, extra) {
		args, err := json.Marshal(map[string]string{key: s})
		if err != nil {
			tb.Fatal(err)
		}
		calls = append(calls, Call{Tool: tool, Args: args})
	}
	return calls
}

// corpusTexts returns the commands or SQL texts of the peer corpora, or
// nothing when they are absent.
func corpusTexts(tool string) []string {
	dir, missing := corpus.Dir()
	if missing != "" {
		return nil
	}
	cases, err := corpus.Read(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, c := range cases {
		if c.Tool == tool {
			out = append(out, c.Text)
		}
	}
	return out
}

// benchMix returns the realistic mixes by name.
func benchMix(tb testing.TB) map[string][]Call {
	shellCalls := benchCalls(tb, ToolCommand, "command", typicalCommands, corpusTexts(ToolCommand)...)
	sqlCalls := benchCalls(tb, ToolSQL, "sql", typicalSQL, corpusTexts(ToolSQL)...)
	files := []Call{
		{Tool: ToolFile, Args: json.RawMessage(`{"operation":"read","path":"logs/app.log"}`)},
		{Tool: ToolFile, Args: json.RawMessage(`{"operation":"list","path":"releases"}`)},
		{Tool: ToolFile, Args: json.RawMessage(`{"operation":"write","path":"notes/incident.md","content":"..."}`)},
		{Tool: ToolFile, Args: json.RawMessage(`{"operation":"read","path":".env"}`)},
	}
	web := []Call{
		{Tool: ToolHTTP, Args: json.RawMessage(`{"method":"GET","url":"https://status.example.com/api/v2/health"}`)},
		{Tool: ToolHTTP, Args: json.RawMessage(`{"method":"POST","url":"https://hooks.example.com/deploy","body":"{}"}`)},
		{Tool: ToolHTTP, Args: json.RawMessage(`{"url":"http://169.254.169.254/latest/meta-data/"}`)},
	}
	// The whole mix: typical calls weighted as a day's traffic.
	var mix []Call
	mix = append(mix, benchCalls(tb, ToolCommand, "command", typicalCommands)...)
	mix = append(mix, benchCalls(tb, ToolCommand, "command", typicalCommands)...)
	mix = append(mix, benchCalls(tb, ToolSQL, "sql", typicalSQL)...)
	mix = append(mix, files...)
	mix = append(mix, web...)
	return map[string][]Call{"shell": shellCalls, "sql": sqlCalls, "file": files, "http": web, "mix": mix}
}

// BenchmarkAssess measures Assess on realistic mixes and reports, besides
// ns/op, the median time of one call in µs.
func BenchmarkAssess(b *testing.B) {
	p := mustPolicy(b, Config{})
	mixes := benchMix(b)
	for _, name := range []string{"shell", "sql", "file", "http", "mix"} {
		calls := mixes[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			durations := make([]time.Duration, 0, 1<<16)
			i := 0
			for b.Loop() {
				c := calls[i%len(calls)]
				i++
				start := time.Now()
				p.Assess(c)
				if len(durations) < cap(durations) {
					durations = append(durations, time.Since(start))
				}
			}
			slices.Sort(durations)
			if len(durations) > 0 {
				b.ReportMetric(float64(durations[len(durations)/2].Nanoseconds())/1e3, "median-µs/call")
				b.ReportMetric(float64(durations[len(durations)*99/100].Nanoseconds())/1e3, "p99-µs/call")
			}
		})
	}
}

// BenchmarkAssessParallel measures throughput with every core judging.
func BenchmarkAssessParallel(b *testing.B) {
	p := mustPolicy(b, Config{})
	calls := benchMix(b)["mix"]
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			p.Assess(calls[i%len(calls)])
			i++
		}
	})
}

// BenchmarkShellVsParse runs the shell judgement and mvdan.cc/sh's bare
// parse of the same on-call commands side by side and reports the ratio
// (issue 16: the judgement must stay within 2× of the parse). Each
// command is parsed and then judged straight after, so both see the
// machine in the same state; the judgement includes its own parse.
func BenchmarkShellVsParse(b *testing.B) { benchShellVsParse(b, typicalCommands) }

// BenchmarkShellVsParseCorpus is BenchmarkShellVsParse over the peer
// corpora's shell commands (issue 25: within 2× of the parse, with the
// floors). Commands the parser refuses are left out of both sides.
func BenchmarkShellVsParseCorpus(b *testing.B) {
	parser := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(false))
	var cmds []string
	for _, c := range corpus.Load(b, ToolCommand) {
		if _, err := parser.Parse(strings.NewReader(c.Text), ""); err == nil {
			cmds = append(cmds, c.Text)
		}
	}
	benchShellVsParse(b, cmds)
}

// benchShellVsParse parses and then judges each of cmds straight after,
// so both see the machine in the same state, and reports each per command
// and their ratio; the judgement includes its own parse.
func benchShellVsParse(b *testing.B, cmds []string) {
	p := mustPolicy(b, Config{})
	parser := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(false))
	var parse, judge time.Duration
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range cmds {
			start := time.Now()
			if _, err := parser.Parse(strings.NewReader(c), ""); err != nil {
				b.Fatal(err)
			}
			mid := time.Now()
			p.shell.Analyze(c)
			parse += mid.Sub(start)
			judge += time.Since(mid)
		}
	}
	n := float64(b.N * len(cmds))
	b.ReportMetric(float64(parse.Nanoseconds())/n, "parse-ns/cmd")
	b.ReportMetric(float64(judge.Nanoseconds())/n, "judge-ns/cmd")
	b.ReportMetric(float64(judge)/float64(parse), "judge/parse")
}
