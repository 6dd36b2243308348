package httptool

import (
	"net"
	"net/http/httptrace"
	"net/netip"
	"sync"
)

// chain records, for one request and its redirects, each host asked and
// the address its connection reached, so that the result can say whether
// the response came from outside: a host the operator did not make
// reachable with allow_hosts or allow_cidrs (tools.Result.Outside). Text
// from there may carry instructions to the model, and the policy trusts
// the model less for the rest of the turn (risk.taint).
type chain struct {
	mu    sync.Mutex
	hosts []string
	addrs []netip.Addr
}

// host records the host of a request about to be sent.
func (h *chain) host(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hosts = append(h.hosts, name)
}

// trace records the address of each connection a request gets.
func (h *chain) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		var addr netip.Addr
		if tcp, ok := info.Conn.RemoteAddr().(*net.TCPAddr); ok {
			addr = tcp.AddrPort().Addr().Unmap()
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		h.addrs = append(h.addrs, addr)
	}}
}

// outside returns the first host of the chain the operator did not make
// reachable (by name in allow_hosts, or by address in allow_cidrs), or "".
// When hosts and connections do not pair up, every host not allowed by
// name counts as outside.
func (h *chain) outside(g *guard) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	paired := len(h.hosts) == len(h.addrs)
	for i, name := range h.hosts {
		if g.allowHosts[normHost(name)] {
			continue
		}
		if paired && g.allowedNet(h.addrs[i]) {
			continue
		}
		return normHost(name)
	}
	return ""
}

// allowedNet reports whether ip is in allow_cidrs.
func (g *guard) allowedNet(ip netip.Addr) bool {
	for _, p := range g.allowNets {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
