package risk

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// metadataHosts are host names of cloud metadata services. Their addresses
// are blocked too; the names are here so that a call is refused before any
// name is resolved.
var metadataHosts = map[string]bool{
	"metadata":                     true, // GCP, short name
	"metadata.google.internal":     true, // GCP
	"metadata.goog":                true, // GCP
	"instance-data":                true, // AWS, short name
	"instance-data.ec2.internal":   true, // AWS
	"metadata.tencentyun.com":      true, // Tencent Cloud
	"metadata.platformequinix.com": true,
	"metadata.packet.net":          true,
	"api.metadata.cloud.ibm.com":   true, // IBM Cloud VPC
}

// metadataAddrs are metadata endpoints outside the link-local ranges, which
// are blocked as a whole.
var metadataAddrs = []netip.Prefix{
	netip.MustParsePrefix("fd00:ec2::254/128"),  // AWS, IPv6
	netip.MustParsePrefix("fd00:ec2::23/128"),   // AWS EKS Pod Identity Agent, IPv6 (credentials)
	netip.MustParsePrefix("100.100.100.200/32"), // Alibaba Cloud
	netip.MustParsePrefix("192.0.0.192/32"),     // Oracle Cloud
	netip.MustParsePrefix("168.63.129.16/32"),   // Azure WireServer (extensions, certificates)
	netip.MustParsePrefix("169.254.0.0/16"),     // link-local: AWS, GCP, Azure, ECS, OpenStack...
	netip.MustParsePrefix("fe80::/10"),          // IPv6 link-local
}

// readMethods are the HTTP methods the whitelist runs at once.
var readMethods = map[string]bool{"GET": true, "HEAD": true, "OPTIONS": true}

// judgeHTTP applies the HTTP rules. A missing method is GET, as in the
// http_request tool.
func (p *Policy) judgeHTTP(a args) judgement {
	var j judgement
	method, ok, err := a.str("method")
	if err != nil {
		return malformed(err)
	}
	if !ok || method == "" {
		method = "GET"
	}
	// Not trimmed: the tool refuses " GET" and "GET\n", so the policy does
	// not read them as GET.
	method = strings.ToUpper(method)
	if !isToken(method) {
		return malformed(fmt.Errorf("argument %q is not an HTTP method", "method"))
	}
	raw, err := a.requiredStr("url")
	if err != nil {
		return malformed(err)
	}
	if err := a.kind("headers", '{'); err != nil {
		return malformed(err)
	}
	if err := a.kind("body", '"'); err != nil {
		return malformed(err)
	}
	u := strings.TrimSpace(raw)
	j.op = method + " " + u
	why, host := absurdURL(u)
	if why != "" {
		j.absurd = append(j.absurd, why)
		return j
	}
	if why := secretRead(a, u); why != "" {
		j.danger = append(j.danger, why)
	}
	if !readMethods[method] {
		j.why = []string{method + " is not a read-only HTTP method"}
		return j
	}
	j.why = notRead(a, method, host)
	if len(j.why) == 0 {
		j.readOnly = true
		j.why = []string{method + " is a read-only HTTP method"}
	}
	return j
}

// methodOverrides are the request headers with which many frameworks
// (Rails, Express, Symfony, Google APIs) take the method from the header
// instead of the request line: a GET carrying one may be a DELETE.
var methodOverrides = []string{"X-HTTP-Method-Override", "X-HTTP-Method", "X-Method-Override"}

// notRead returns why a GET, HEAD or OPTIONS request is still not a plain
// read, or nil. The arguments are well-formed (judgeHTTP checked them).
func notRead(a args, method, host string) []string {
	var why []string
	if body, _, _ := a.str("body"); body != "" {
		why = append(why, "the "+method+" request carries a body, which some APIs act on")
	}
	if raw, ok := a.get("headers"); ok && string(raw) != "null" {
		h, err := parseArgs(raw)
		if err != nil {
			why = append(why, "the headers cannot be read: "+err.Error())
		}
		for _, name := range methodOverrides {
			if v, ok, _ := h.str(name); ok {
				why = append(why, fmt.Sprintf("the header %s: %s asks the server for another method", name, clip(v)))
			}
		}
	}
	for i := 0; i < len(host); i++ {
		if host[i] >= utf8.RuneSelf {
			why = append(why, fmt.Sprintf("the host %s is not plain ASCII; IDNA may map it to another name or address", clip(host)))
			break
		}
	}
	return why
}

// isToken reports whether s is a plausible HTTP method token.
func isToken(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// absurdURL returns why a URL must never be fetched, or "" and the URL's
// normalised host.
func absurdURL(raw string) (why, host string) {
	if raw == "" {
		return "the URL is empty", ""
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] < 0x20 || raw[i] == 0x7f {
			return "the URL contains control characters", ""
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Sprintf("the URL %s does not parse", clip(raw)), ""
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "":
		return fmt.Sprintf("the URL %s has no http or https scheme", clip(raw)), ""
	default:
		return fmt.Sprintf("the URL scheme %s: is not http or https", clip(u.Scheme)), ""
	}
	if u.Opaque != "" {
		return fmt.Sprintf("the URL %s has no host", clip(raw)), ""
	}
	host = normalHost(u.Hostname())
	if host == "" {
		return fmt.Sprintf("the URL %s has no host", clip(raw)), ""
	}
	return forbiddenHost(host), host
}

// normalHost maps a host name as a resolver's IDNA (UTS #46) mapping
// does before any check: compatibility forms folded (NFKC: full-width,
// mathematical and circled letters and digits), case folded, the
// ideographic and other full stops made dots; it drops trailing dots and
// an IPv6 zone.
func normalHost(h string) string {
	for i := 0; i < len(h); i++ {
		if h[i] >= 0x80 {
			h = norm.NFKC.String(h)
			break
		}
	}
	var b strings.Builder
	for _, r := range h {
		switch {
		case r >= 0xFF01 && r <= 0xFF5E: // full-width ASCII
			r -= 0xFEE0
		case r == 0x3002 || r == 0xFF0E || r == 0xFF61: // ideographic and other full stops
			r = '.'
		}
		b.WriteRune(r)
	}
	h = strings.ToLower(b.String())
	if i := strings.IndexByte(h, '%'); i >= 0 && strings.Contains(h, ":") {
		h = h[:i]
	}
	return strings.TrimRight(h, ".")
}

// ForbiddenHost returns why a host (as written in a URL or on a command
// line) is a cloud metadata or link-local endpoint, or "". The shell
// assessor uses it for curl, wget and their kin, which have no
// connect-time fence.
func ForbiddenHost(host string) string { return forbiddenHost(normalHost(host)) }

// forbiddenHost returns why a normalised host is a metadata or link-local
// endpoint, or "".
func forbiddenHost(host string) string {
	if metadataHosts[host] {
		return fmt.Sprintf("%s is a cloud metadata endpoint", host)
	}
	var addrs []netip.Addr
	if addr, ok := parseHostAddr(host); ok {
		addrs = []netip.Addr{addr}
	} else {
		addrs = spelledAddrs(host)
	}
	for _, addr := range addrs {
		for _, a := range embeddedAddrs(addr) {
			for _, pfx := range metadataAddrs {
				if pfx.Contains(a) {
					return fmt.Sprintf("%s is a link-local or cloud metadata address (%s)", host, a)
				}
			}
		}
	}
	return ""
}

// spelledAddrs returns the IPv4 addresses a wildcard-DNS name may resolve to
// (nip.io, sslip.io and the like): four labels in a row anywhere in the name
// (app.169.254.169.254.nip.io), four dash-separated parts of a label
// (app-169-254-169-254.sslip.io), or eight hexadecimal digits at the end of a
// label (app-a9fea9fe.nip.io).
func spelledAddrs(host string) []netip.Addr {
	var out []netip.Addr
	labels := strings.Split(host, ".")
	for i := 0; i+4 <= len(labels); i++ {
		if a, ok := parseIPv4(strings.Join(labels[i:i+4], ".")); ok {
			out = append(out, a)
		}
	}
	for _, l := range labels {
		parts := strings.Split(l, "-")
		for i := 0; i+4 <= len(parts); i++ {
			if a, ok := parseIPv4(strings.Join(parts[i:i+4], ".")); ok {
				out = append(out, a)
			}
		}
		// sslip.io spells IPv6 with dashes for colons: fd00-ec2--254.sslip.io.
		if strings.Count(l, "-") >= 2 {
			if a, err := netip.ParseAddr(strings.ReplaceAll(l, "-", ":")); err == nil {
				out = append(out, a)
			}
		}
		if last := parts[len(parts)-1]; len(last) == 8 {
			if v, err := strconv.ParseUint(last, 16, 32); err == nil {
				out = append(out, netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}))
			}
		}
	}
	return out
}

// parseHostAddr parses a host as an IP address in any spelling a resolver
// accepts: IPv6, dotted IPv4, and the inet_aton forms (decimal, octal, hex,
// and fewer than four parts).
func parseHostAddr(host string) (netip.Addr, bool) {
	if strings.Contains(host, ":") {
		a, err := netip.ParseAddr(host)
		if err != nil {
			return netip.Addr{}, false
		}
		return a, true
	}
	return parseIPv4(host)
}

// parseIPv4 parses s the way inet_aton does: one to four parts, each
// decimal, octal (leading 0) or hexadecimal (0x); the last part fills the
// remaining bytes.
func parseIPv4(s string) (netip.Addr, bool) {
	if s == "" {
		return netip.Addr{}, false
	}
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var vals [4]uint64
	for i, p := range parts {
		if p == "" {
			return netip.Addr{}, false
		}
		base := 10
		digits := p
		switch {
		case len(p) > 1 && (p[:2] == "0x" || p[:2] == "0X"):
			base, digits = 16, p[2:]
			if digits == "" {
				digits = "0"
			}
		case len(p) > 1 && p[0] == '0':
			base, digits = 8, p[1:]
		}
		v, err := strconv.ParseUint(digits, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	n := len(parts)
	for i := 0; i < n-1; i++ {
		if vals[i] > 0xff {
			return netip.Addr{}, false
		}
	}
	last := vals[n-1]
	if last >= 1<<(8*(5-n)) {
		return netip.Addr{}, false
	}
	var ip uint32
	for i := 0; i < n-1; i++ {
		ip |= uint32(vals[i]) << (24 - 8*i)
	}
	ip |= uint32(last)
	return netip.AddrFrom4([4]byte{byte(ip >> 24), byte(ip >> 16), byte(ip >> 8), byte(ip)}), true
}

// embeddedAddrs returns a and the IPv4 addresses embedded in it by the
// common IPv6 transition forms: mapped (::ffff:a.b.c.d), compatible
// (::a.b.c.d), NAT64 (64:ff9b::/96, 64:ff9b:1::/48), 6to4 (2002::/16) and
// Teredo (2001::/32).
func embeddedAddrs(a netip.Addr) []netip.Addr {
	out := []netip.Addr{a}
	if !a.Is6() {
		return out
	}
	b := a.As16()
	var zero10 = [10]byte{}
	switch {
	case a.Is4In6():
		out = append(out, a.Unmap())
	case [10]byte(b[:10]) == zero10 && b[10] == 0 && b[11] == 0 && (b[12] != 0 || b[13] != 0):
		out = append(out, netip.AddrFrom4([4]byte(b[12:16])))
	case b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b: // 64:ff9b::/96 and 64:ff9b:1::/48
		out = append(out, netip.AddrFrom4([4]byte(b[12:16])))
	case b[0] == 0x20 && b[1] == 0x02:
		out = append(out, netip.AddrFrom4([4]byte(b[2:6])))
	case b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0: // Teredo: the client address, inverted
		out = append(out, netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}))
	}
	return out
}

// secretAPIPaths are URL paths of secret managers' HTTP APIs: reading a
// secret through them is a secret read, as cat .env is (issue 11). The
// Vault paths are matched under /v1/ only.
var secretAPIPaths = []string{
	"/secrets",               // Kubernetes: /api/v1/namespaces/N/secrets[/NAME], Docker Engine /secrets, Key Vault
	"/secretsmanager",        // AWS Secrets Manager behind a proxy
	"/computemetadata/",      // GCP metadata (also blocked by host)
	"/latest/meta-data/iam/", // AWS instance credentials (also blocked by host)
}

// vaultSecretPaths are Vault API paths (after /v1/) that return secrets:
// KV v1, the cubbyhole, token lookups, the system backend (unwrapping, raw
// storage, root generation; all of it but the health endpoints), OIDC
// tokens; and Consul's KV store.
var vaultSecretPaths = []string{"secret/", "kv/", "cubbyhole/", "auth/token/lookup", "sys/", "identity/oidc/token/"}

// vaultSecretSegments are path segments after /v1/<mount>/ that return
// secrets whatever the mount is called: KV v2 and dynamic credentials on
// any host; on a host that is plainly Vault (vault.*, port 8200) also
// transit decryption and export, and issued or signed certificates.
var (
	vaultSecretSegments = []string{"/data/", "/creds/"}
	vaultOnlySegments   = []string{"/decrypt/", "/export/", "/issue/", "/sign/"}
	vaultHealth         = map[string]bool{"sys/health": true, "sys/seal-status": true, "sys/leader": true, "sys/ha-status": true, "sys/init": true, "sys/version-history": true}
)

// awsSecretTargets are X-Amz-Target values (the JSON APIs' operation) that
// return a secret value: Secrets Manager, SSM parameters (SecureString
// values come back decrypted on request), KMS decryption.
var awsSecretTargets = []string{
	"secretsmanager.getsecretvalue", "secretsmanager.batchgetsecretvalue",
	"amazonssm.getparameter", "amazonssm.getparameters", "amazonssm.getparametersbypath", "amazonssm.getparameterhistory",
	"trentservice.decrypt", "trentservice.generatedatakey",
}

// secretRead returns why a request reads a secret through its manager's
// API, whatever its method, or "".
func secretRead(a args, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	p := strings.ToLower(u.EscapedPath())
	if dp, err := url.PathUnescape(p); err == nil {
		p = strings.ToLower(dp)
	}
	host := normalHost(u.Hostname())
	reads := fmt.Sprintf("%s reads a secret through its manager's API", clip(raw))
	if target := amzTarget(a); target != "" {
		for _, t := range awsSecretTargets {
			if target == t {
				return fmt.Sprintf("the request (X-Amz-Target: %s) reads a secret value", clip(target))
			}
		}
		if strings.HasPrefix(host, "secretsmanager.") {
			return "" // another Secrets Manager operation: names and metadata
		}
	}
	switch {
	case host == "secretmanager.googleapis.com" || strings.HasSuffix(host, "-secretmanager.googleapis.com"):
		if strings.HasSuffix(p, ":access") {
			return reads
		}
		return "" // listing secrets and reading their metadata shows no value
	case strings.HasPrefix(host, "secretsmanager."):
		return reads
	}
	if rest, ok := strings.CutPrefix(p, "/v1/"); ok {
		// A health check of a secret store is no secret read
		// (mechanism 9): /v1/sys/health, seal-status, leader, ...
		rest = strings.TrimRight(rest, "/")
		if vaultHealth[rest] {
			return ""
		}
		for _, v := range vaultSecretPaths {
			if strings.HasPrefix(rest+"/", v) || strings.HasPrefix(rest, v) {
				return reads
			}
		}
		segs := vaultSecretSegments
		vault := strings.HasPrefix(host, "vault.") || u.Port() == "8200"
		if vault {
			segs = append(segs[:len(segs):len(segs)], vaultOnlySegments...)
		}
		for _, seg := range segs {
			if strings.Contains("/"+rest+"/", seg) {
				return reads
			}
		}
		if vault {
			return reads // any other Vault API path but its health
		}
	}
	for _, s := range secretAPIPaths {
		if strings.Contains(p, s) {
			return reads
		}
	}
	return ""
}

// amzTarget returns the request's X-Amz-Target header in lower case, or "".
func amzTarget(a args) string {
	raw, ok := a.get("headers")
	if !ok {
		return ""
	}
	h, err := parseArgs(raw)
	if err != nil {
		return ""
	}
	v, _, _ := h.str("X-Amz-Target")
	return strings.ToLower(strings.TrimSpace(v))
}
