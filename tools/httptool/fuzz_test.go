package httptool

import (
	"context"
	"encoding/json"
	"net/netip"
	"testing"

	"github.com/countersign/countersign/tools"
)

// FuzzArgs feeds arbitrary arguments to the decoding, and previews the
// calls whose host is an address (names would need a resolver): nothing may
// panic, and a metadata address is never allowed.
func FuzzArgs(f *testing.F) {
	for _, seed := range []string{
		`{"method":"GET","url":"http://example.com/"}`,
		`{"method":"POST","url":"https://10.0.0.1:8443/x","headers":{"X":"y"},"body":"{}","risk_level":"high"}`,
		`{"method":"GET","url":"http://2852039166/"}`,
		`{"method":"GET","url":"http://[::ffff:a9fe:a9fe]/"}`,
		`{"method":"get","url":"file:///etc/passwd"}`,
		`{"method":"GET","url":"http://0251.0376.0251.0376/","headers":{"Host":"x"}}`,
	} {
		f.Add([]byte(seed))
	}
	tool := newTool(f, Config{AllowCIDRs: []string{"0.0.0.0/0", "::/0"}})
	f.Fuzz(func(t *testing.T, raw []byte) {
		rq, bad := tool.check(json.RawMessage(raw))
		if bad != nil {
			if bad.Executed || bad.Status == tools.StatusOK {
				t.Fatalf("a refusal claims to have run: %s", bad.JSON())
			}
			return
		}
		host := rq.url.Hostname()
		ip, err := netip.ParseAddr(host)
		if err != nil {
			var ok bool
			if ip, ok = parseLegacyIPv4(host); !ok {
				return
			}
		}
		p := tool.Preview(context.Background(), json.RawMessage(raw))
		if neverAllowed(ip.WithZone("").Unmap()) && tool.guard.check(host, ip) == nil {
			t.Fatalf("metadata address %s allowed (preview %+v)", ip, p)
		}
	})
}

// FuzzParseLegacyIPv4: any host string parses to an IPv4 address or not at
// all, without panicking.
func FuzzParseLegacyIPv4(f *testing.F) {
	for _, s := range []string{"2852039166", "0xa9.0xfe.0xa9.0xfe", "0251.0376.0251.0376", "169.254.43518", "1.2.3.4.5", "0x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if ip, ok := parseLegacyIPv4(s); ok && !ip.Is4() {
			t.Fatalf("parseLegacyIPv4(%q) = %v, not IPv4", s, ip)
		}
	})
}
