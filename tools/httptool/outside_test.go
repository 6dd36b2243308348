package httptool

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"testing"

	"github.com/countersign/countersign/tools"
)

// TestOutside: a response from a host the operator made reachable (by
// name or address) is not from outside; any other is, and the result
// names the host (risk.taint reads it through the agent).
func TestOutside(t *testing.T) {
	g, err := newGuard([]string{"status.internal"}, []string{"10.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	public := netip.MustParseAddr("93.184.216.34")
	private := netip.MustParseAddr("10.1.2.3")
	cases := []struct {
		name  string
		hosts []string
		addrs []netip.Addr
		want  string
	}{
		{"public host", []string{"example.com"}, []netip.Addr{public}, "example.com"},
		{"allowed name", []string{"Status.Internal."}, []netip.Addr{public}, ""},
		{"allowed address", []string{"db.corp"}, []netip.Addr{private}, ""},
		{"redirect to a public host", []string{"db.corp", "evil.example"}, []netip.Addr{private, public}, "evil.example"},
		{"redirect from a public host", []string{"evil.example", "db.corp"}, []netip.Addr{public, private}, "evil.example"},
		{"connections not paired", []string{"db.corp"}, nil, "db.corp"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := chain{hosts: tc.hosts, addrs: tc.addrs}
			if got := c.outside(g); got != tc.want {
				t.Errorf("outside = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestOutsideOfARealRequest: through the tool, a host reached through
// allow_cidrs or allow_hosts, redirects included, is not outside.
func TestOutsideOfARealRequest(t *testing.T) {
	srv, _ := counting(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hop" {
			http.Redirect(w, r, "/end", http.StatusFound)
			return
		}
		fmt.Fprint(w, "ok")
	})
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	for name, tc := range map[string]struct {
		cfg Config
		url string
	}{
		"allow_cidrs": {loopback, srv.URL + "/hop"},
		"allow_hosts": {Config{AllowHosts: []string{"localhost"}}, fmt.Sprintf("http://localhost:%d/hop", port)},
	} {
		t.Run(name, func(t *testing.T) {
			res := do(t, newTool(t, tc.cfg), "GET", tc.url, nil)
			if res.Status != tools.StatusOK || res.Body != "ok" {
				t.Fatalf("result = %s", res.JSON())
			}
			if res.Outside != "" {
				t.Errorf("Outside = %q for a host the operator allowed", res.Outside)
			}
		})
	}
}
