package httptool

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"

	"code.dny.dev/ssrf"
)

// alwaysDenied are addresses no configuration can open: link-local ranges
// (where cloud metadata services live), the metadata endpoints that sit
// elsewhere, and the unspecified addresses (which reach the local host).
var alwaysDenied = []netip.Prefix{
	netip.MustParsePrefix("169.254.0.0/16"),     // IPv4 link-local: AWS, GCP, Azure, OpenStack metadata
	netip.MustParsePrefix("fe80::/10"),          // IPv6 link-local
	netip.MustParsePrefix("fd00:ec2::254/128"),  // AWS metadata over IPv6
	netip.MustParsePrefix("100.100.100.200/32"), // Alibaba Cloud metadata
	netip.MustParsePrefix("168.63.129.16/32"),   // Azure wire server
	netip.MustParsePrefix("0.0.0.0/8"),          // "this host"
	netip.MustParsePrefix("::/128"),             // unspecified
}

// nat64 embeds an IPv4 address in its last 32 bits.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// RefusedError is the dialer guard refusing an address. It is safe to show.
type RefusedError struct {
	Host string
	Addr netip.Addr
	Why  string
}

// Error says which address was refused and why.
func (e *RefusedError) Error() string {
	if e.Host != "" && e.Host != e.Addr.String() {
		return fmt.Sprintf("connecting to %s (%s) is refused: %s", e.Host, e.Addr, e.Why)
	}
	return fmt.Sprintf("connecting to %s is refused: %s", e.Addr, e.Why)
}

// guard decides which addresses may be connected to.
type guard struct {
	allowHosts map[string]bool
	allowNets  []netip.Prefix
	ssrf       *ssrf.Guardian
}

func newGuard(hosts, cidrs []string) (*guard, error) {
	g := &guard{
		allowHosts: map[string]bool{},
		ssrf:       ssrf.New(ssrf.WithAnyPort(), ssrf.WithNetworks("tcp4", "tcp6")),
	}
	for _, h := range hosts {
		n := normHost(h)
		if n == "" || strings.ContainsAny(n, "/:@ ") && !isIP(n) {
			return nil, fmt.Errorf("allow_hosts: %q is not a host name", h)
		}
		g.allowHosts[n] = true
	}
	for _, c := range cidrs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			a, aerr := netip.ParseAddr(c)
			if aerr != nil {
				return nil, fmt.Errorf("allow_cidrs: %q: %w", c, err)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		p = p.Masked()
		if a := p.Addr(); a.Is4In6() {
			p = netip.PrefixFrom(a.Unmap(), max(p.Bits()-96, 0))
		}
		g.allowNets = append(g.allowNets, p)
	}
	return g, nil
}

func isIP(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}

// normHost is the form host names are compared in.
func normHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
}

// check says whether a connection to ip, reached through host, may be made.
func (g *guard) check(host string, ip netip.Addr) error {
	ip = ip.WithZone("").Unmap()
	const always = "link-local and cloud metadata addresses are always refused"
	if neverAllowed(ip) {
		return &RefusedError{Host: host, Addr: ip, Why: always}
	}
	if nat64.Contains(ip) {
		b := ip.As16()
		if v4 := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}); neverAllowed(v4) {
			return &RefusedError{Host: host, Addr: ip, Why: "it embeds " + v4.String() + ", and " + always}
		}
	}
	if g.allowHosts[normHost(host)] {
		return nil
	}
	for _, p := range g.allowNets {
		if p.Contains(ip) {
			return nil
		}
	}
	if err := g.ssrf.SafeAddr(ip); err != nil {
		return &RefusedError{Host: host, Addr: ip,
			Why: "private, loopback and reserved addresses are refused unless the operator allows them (allow_hosts, allow_cidrs)"}
	}
	return nil
}

func neverAllowed(ip netip.Addr) bool {
	for _, p := range alwaysDenied {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// resolve turns a URL host into addresses. IP literals are taken as they
// are, including the legacy forms a C resolver would accept (2852039166,
// 0xa9fea9fe, 0251.0376.0251.0376, 169.254.43518), so the guard sees the
// address that would really be reached. Names go through the resolver.
// lookup resolves names that are not addresses (tests replace it to play
// a DNS server that changes its answer).
func resolve(ctx context.Context, host string, lookup lookupFunc) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	if ip, ok := parseLegacyIPv4(host); ok {
		return []netip.Addr{ip}, nil
	}
	ips, err := lookup(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", host, err)
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("resolving %s: no addresses", host)
	}
	return ips, nil
}

// parseLegacyIPv4 parses the forms inet_aton accepts: one to four parts,
// each decimal, octal (leading 0) or hex (0x), the last filling the
// remaining bytes.
func parseLegacyIPv4(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if s == "" || len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		base := 10
		switch {
		case len(p) > 2 && (p[:2] == "0x" || p[:2] == "0X"):
			p, base = p[2:], 16
		case len(p) > 1 && p[0] == '0':
			p, base = p[1:], 8
		}
		if p == "" || strings.ContainsAny(p, "+-_") {
			return netip.Addr{}, false
		}
		v, err := strconv.ParseUint(p, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	n := len(parts)
	var v uint64
	for i := 0; i < n-1; i++ {
		if vals[i] > 255 {
			return netip.Addr{}, false
		}
		v |= vals[i] << (24 - 8*i)
	}
	if vals[n-1] > (uint64(1)<<(8*(5-n)))-1 {
		return netip.Addr{}, false
	}
	v |= vals[n-1]
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// lookupFunc is the shape of net.Resolver.LookupNetIP.
type lookupFunc func(ctx context.Context, network, host string) ([]netip.Addr, error)

// dialer connects only where the guard allows. The check runs in the
// socket's Control hook, after the address is final and before connect, so
// redirects and DNS answers that change between lookups are covered too.
type dialer struct {
	guard   *guard
	timeout time.Duration
	lookup  lookupFunc
}

// DialContext resolves addr and tries each address in turn. It returns the
// first connection made; failing that, the first error of an address the
// guard allowed, or else the guard's refusal.
func (d *dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("dialing %s: %w", addr, err)
	}
	ips, err := resolve(ctx, host, d.lookup)
	if err != nil {
		return nil, err
	}
	var refused, failed error
	for _, ip := range ips {
		nd := net.Dialer{
			Timeout: d.timeout,
			Control: func(nw, address string, _ syscall.RawConn) error {
				if nw != "tcp4" && nw != "tcp6" {
					return fmt.Errorf("network %s is not allowed", nw)
				}
				ap, err := netip.ParseAddrPort(address)
				if err != nil {
					return fmt.Errorf("dialing %s: %w", address, err)
				}
				return d.guard.check(host, ap.Addr())
			},
		}
		conn, err := nd.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		var re *RefusedError
		switch {
		case errors.As(err, &re) && refused == nil:
			refused = err
		case failed == nil:
			failed = err
		}
	}
	if failed != nil {
		return nil, failed
	}
	return nil, refused
}
