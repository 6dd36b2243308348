package shell

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

// benchMix is a realistic mix of what an on-call engineer asks to run:
// mostly looks, some writes and dangers, a few absurd ones.
var benchMix = []string{
	"ls -la",
	"df -h",
	"free -m",
	"uptime",
	"ps aux | grep nginx",
	"tail -n 200 /var/log/nginx/error.log",
	"grep -rn 'timeout' /etc/nginx/ 2>/dev/null",
	"journalctl -u api --since '1 hour ago' --no-pager | tail -50",
	"systemctl status nginx",
	"kubectl get pods -n prod -o wide",
	"kubectl logs deploy/api -n prod --tail=100",
	"docker ps -a",
	"git log --oneline -20",
	"git status",
	"du -sh /var/log/* | sort -h | tail",
	"ss -tlnp",
	"ip addr",
	"dig +short api.example.com",
	"awk '{print $9}' access.log | sort | uniq -c | sort -rn | head",
	"find /var/log -name '*.gz' -mtime +7",
	"cat /etc/os-release",
	"sed -n '1,20p' config.yaml",
	"echo \"load: $(uptime)\"",
	"for f in /var/log/*.log; do wc -l \"$f\"; done",
	"rm -rf ./build",
	"systemctl restart nginx",
	"kubectl delete pod api-123 -n prod",
	"sudo apt-get install -y htop",
	"cat .env",
	"ls; rm -rf /",
}

func BenchmarkAnalyze(b *testing.B) {
	a := newAnalyzer(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		a.Analyze(benchMix[i%len(benchMix)])
	}
}

// BenchmarkAnalyzeMedian reports the median time of one Analyze over the
// mix (the SPEC target is a median under 20 µs).
func BenchmarkAnalyzeMedian(b *testing.B) { benchPercentiles(b, benchMix) }

// benchPercentiles times each Analyze of scripts, in turn, and reports the
// median and the 99th percentile.
func benchPercentiles(b *testing.B, scripts []string) {
	a := newAnalyzer(b)
	var times []time.Duration
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		a.Analyze(scripts[i%len(scripts)])
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "median-ns")
	b.ReportMetric(float64(times[len(times)*99/100].Nanoseconds()), "p99-ns")
}

// scaleShapes build a command of about n bytes in shapes that stress the
// judge's cost per word: a long argument list of a reader, a long list of
// an unknown program (a reason per word), many commands in a list, and
// nesting.
var scaleShapes = []struct {
	name  string
	build func(n int) string
}{
	{"reader-args", func(n int) string { return grow("ls", n, func(i int) string { return fmt.Sprintf(" f%05d.log", i) }) }},
	{"unknown-args", func(n int) string {
		return grow("deploy-tool", n, func(i int) string { return fmt.Sprintf(" --opt%d=/srv/x%d", i, i) })
	}},
	{"list", func(n int) string {
		return grow("true", n, func(i int) string { return fmt.Sprintf("; tool%d x%d", i, i) })
	}},
	{"rm-targets", func(n int) string {
		return grow("rm -f", n, func(i int) string { return fmt.Sprintf(" d%d/*.tmp", i) })
	}},
	{"subshells", func(n int) string {
		depth := max(1, n/8)
		return strings.Repeat("( ", depth) + "ls" + strings.Repeat(" )", depth)
	}},
	{"substitutions", func(n int) string {
		depth := max(1, n/10)
		return strings.Repeat("echo $(", depth) + "ls" + strings.Repeat(")", depth)
	}},
}

// grow builds head followed by parts until the text is n bytes long.
func grow(head string, n int, part func(int) string) string {
	var b strings.Builder
	b.WriteString(head)
	for i := 0; b.Len() < n; i++ {
		b.WriteString(part(i))
	}
	return b.String()
}

// BenchmarkScale judges each shape at 1, 4, 16 and 64 KiB and reports the
// judgement's cost per byte and its ratio to mvdan.cc/sh's bare parse
// (issue 25: linear, each doubling at most doubling, and 64 KiB in under
// 10 ms).
func BenchmarkScale(b *testing.B) {
	a := newAnalyzer(b)
	parser := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(false))
	for _, shape := range scaleShapes {
		for _, kib := range []int{1, 4, 16, 64} {
			src := shape.build(kib << 10)
			b.Run(fmt.Sprintf("%s/%dKiB", shape.name, kib), func(b *testing.B) {
				var parse, judge time.Duration
				for b.Loop() {
					start := time.Now()
					if _, err := parser.Parse(strings.NewReader(src), ""); err != nil {
						b.Fatal(err)
					}
					mid := time.Now()
					a.Analyze(src)
					parse += mid.Sub(start)
					judge += time.Since(mid)
				}
				b.ReportMetric(float64(judge.Nanoseconds())/float64(b.N*len(src)), "judge-ns/B")
				b.ReportMetric(float64(judge)/float64(parse), "judge/parse")
			})
		}
	}
}
