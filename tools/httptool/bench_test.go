package httptool

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/countersign/countersign/tools"
)

// BenchmarkCheck is the tool layer's own work before a request: decoding
// and validating the arguments, the URL and the headers.
func BenchmarkCheck(b *testing.B) {
	tool := newTool(b, Config{})
	raw := json.RawMessage(`{"method":"GET","url":"https://status.example.com/api/health?x=1","headers":{"Accept":"application/json"},"risk_level":"low"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, bad := tool.check(raw); bad != nil {
			b.Fatal(bad.JSON())
		}
	}
}

// BenchmarkGuardCheck is the dialer guard's decision for one address.
func BenchmarkGuardCheck(b *testing.B) {
	g, err := newGuard([]string{"status.internal"}, []string{"10.0.0.0/8"})
	if err != nil {
		b.Fatal(err)
	}
	ip := netip.MustParseAddr("93.184.216.34")
	b.ReportAllocs()
	for b.Loop() {
		if err := g.check("example.com", ip); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunLocal is a whole GET to a local server over a kept-alive
// connection: the tool's per-call overhead plus a loopback round trip.
func BenchmarkRunLocal(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	tool := newTool(b, loopback)
	raw := json.RawMessage(`{"method":"GET","url":"` + srv.URL + `/health"}`)
	b.ReportAllocs()
	for b.Loop() {
		if res := tool.Run(context.Background(), raw, tools.RunOptions{}); res.Body != "ok" {
			b.Fatal(res.JSON())
		}
	}
}
