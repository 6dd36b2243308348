package shell

import (
	"slices"
	"testing"
	"time"
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
