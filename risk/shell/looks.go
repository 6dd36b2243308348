package shell

import (
	"strings"
)

// More looks an on-call engineer runs all day, each with the narrow form
// that only reads: read loops, certificate and config checks, archive
// listings, package queries, hardware sensors, version checks.

// identifier reports whether t is a plain shell variable name.
func identifier(t string) bool {
	return t != "" && !isDigits(t[:1]) && strings.Trim(t, "_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == ""
}

// readCheck: read and mapfile set the variables they name. A subscript
// (a[$(cmd)]) runs code; PATH, IFS and friends change later commands;
// mapfile -C runs a callback.
func readCheck(j *judge, c *cmd, opts []opt, operands []arg) string {
	names := operands
	for _, o := range opts {
		if o.is('a', "") && c.name == "read" {
			names = append(names, o.value)
		}
	}
	for _, n := range names {
		j.markAssigned(n.text)
		if !identifier(n.text) && !isDigits(n.text) {
			return c.name + " " + n.text + " assigns through a subscript or a name built at run time"
		}
		if riskyVar(n.text) {
			return c.name + " " + n.text + " changes what later commands do"
		}
	}
	return ""
}

// opensslCheck allows printing certificates, requests and connections:
// openssl x509|req|crl -noout -text..., s_client to look at a server's
// certificate, verify, version. Every option must be on the subcommand's
// list; none of them writes a file or prints a private key.
func opensslCheck(j *judge, c *cmd, _ []opt, _ []arg) string {
	if len(c.args) == 0 {
		return "openssl with no command needs a terminal"
	}
	sub, rest := c.args[0].text, c.args[1:]
	var allowed []string
	valued := []string{"-in", "-inform", "-nameopt", "-certopt", "-checkend", "-ext", "-CAfile", "-CApath", "-purpose",
		"-connect", "-servername", "-starttls", "-alpn", "-verify", "-host", "-port", "-proxy", "-verify_hostname", "-untrusted", "-sigopt"}
	switch sub {
	case "version":
		allowed = []string{"-a", "-v", "-b", "-o", "-f", "-p", "-d", "-e"}
	case "x509":
		allowed = []string{"-in", "-inform", "-noout", "-text", "-dates", "-startdate", "-enddate", "-subject", "-issuer",
			"-serial", "-fingerprint", "-sha1", "-sha256", "-md5", "-hash", "-subject_hash", "-issuer_hash", "-ocspid",
			"-email", "-ocsp_uri", "-pubkey", "-modulus", "-purpose", "-nameopt", "-certopt", "-checkend", "-ext", "-alias", "-nocert"}
	case "req", "crl":
		allowed = []string{"-in", "-inform", "-noout", "-text", "-subject", "-verify", "-nameopt", "-pubkey", "-issuer",
			"-lastupdate", "-nextupdate", "-hash", "-fingerprint"}
	case "verify":
		allowed = []string{"-CAfile", "-CApath", "-untrusted", "-purpose", "-verify_hostname", "-show_chain", "-x509_strict", "-no-CAfile", "-no-CApath"}
	case "s_client":
		allowed = []string{"-connect", "-servername", "-showcerts", "-brief", "-CAfile", "-CApath", "-verify", "-verify_return_error",
			"-starttls", "-alpn", "-status", "-host", "-port", "-tls1_2", "-tls1_3", "-no_tls1_3", "-4", "-6", "-proxy",
			"-verify_hostname", "-ign_eof", "-quiet", "-noservername", "-prexit"}
	default:
		return "openssl " + sub + " is not a look"
	}
	for i := 0; i < len(rest); i++ {
		t := rest[i].text
		if !strings.HasPrefix(t, "-") {
			if sub == "verify" {
				continue // the certificates to verify
			}
			return "openssl " + sub + " " + t + " is not a look"
		}
		if !in(t, allowed...) {
			return "openssl " + sub + " " + t + " is not a look"
		}
		if in(t, valued...) {
			i++
		}
	}
	return ""
}

// nginxCheck: nginx -t and -T test and print the configuration; -v and -V
// print the version. -c, -g and -p could load another configuration, and
// with it modules (code); -s signals the server.
func nginxCheck(j *judge, c *cmd, opts []opt, operands []arg) string {
	for _, o := range opts {
		if !o.is('t', "") && !o.is('T', "") && !o.is('v', "") && !o.is('V', "") && !o.is('q', "") && !o.is('h', "") {
			return "nginx " + o.String() + " is not a look"
		}
	}
	if len(opts) == 0 || len(operands) > 0 {
		return "nginx without -t, -T or -v starts the server"
	}
	return ""
}

// apachectlCheck: configtest, -t, -S, -M and -v only look.
func apachectlCheck(j *judge, c *cmd, _ []opt, _ []arg) string {
	if len(c.args) == 0 {
		return c.name + " with no command starts the server"
	}
	for _, a := range c.args {
		if !in(a.text, "configtest", "-t", "-S", "-M", "-v", "-V", "-l", "-L", "-D", "DUMP_VHOSTS", "DUMP_MODULES", "DUMP_RUN_CFG") {
			return c.name + " " + a.text + " is not a look"
		}
	}
	return ""
}

// tarCheck allows listing an archive: tar -tf, tar tvzf (the old form
// without a dash), tar --list. Compression programs, scripts, remote
// archives (host:file) and snapshot files are refused.
func tarCheck(j *judge, c *cmd, _ []opt, _ []arg) string {
	list := false
	args := c.args
	if len(args) > 0 && !strings.HasPrefix(args[0].text, "-") && strings.Trim(args[0].text, "tvzjJfa") == "" {
		// tar tzf ARCHIVE: the first word is a cluster without its dash.
		args = append([]arg{{text: "-" + args[0].text}}, args[1:]...)
	}
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch {
		case t == "--":
			return tarResult(list)
		case strings.HasPrefix(t, "--"):
			name, val, eq := strings.Cut(t[2:], "=")
			switch {
			case in(name, "list", "verbose", "gzip", "gunzip", "bzip2", "xz", "zstd", "lzma", "auto-compress", "wildcards",
				"numeric-owner", "full-time", "utc", "no-wildcards", "anchored", "ignore-case", "quoting-style", "exclude", "occurrence"):
				list = list || name == "list"
			case name == "file":
				if !eq && i+1 < len(args) {
					i++
					val = args[i].text
				}
				if strings.Contains(val, ":") {
					return "tar --file " + val + " names a remote archive, which runs rsh"
				}
			default:
				return "tar " + t + " is not a look"
			}
		case strings.HasPrefix(t, "-") && len(t) > 1:
			for k := 1; k < len(t); k++ {
				switch t[k] {
				case 't':
					list = true
				case 'v', 'z', 'j', 'J', 'a':
				case 'f':
					v := t[k+1:]
					if v == "" && i+1 < len(args) {
						i++
						v = args[i].text
					}
					if strings.Contains(v, ":") {
						return "tar -f " + v + " names a remote archive, which runs rsh"
					}
					k = len(t)
				default:
					return "tar -" + string(t[k]) + " is not a look"
				}
			}
		}
	}
	return tarResult(list)
}

func tarResult(list bool) string {
	if !list {
		return "tar without -t creates or extracts archives"
	}
	return ""
}

// unzipCheck: unzip -l, -v and -t list or test an archive; zipinfo lists.
func unzipCheck(j *judge, c *cmd, opts []opt, _ []arg) string {
	if c.name == "zipinfo" {
		return ""
	}
	list := false
	for _, o := range opts {
		switch {
		case o.is('l', "") || o.is('v', "") || o.is('t', "") || o.is('Z', ""):
			list = true
		case o.is('q', ""):
		default:
			return "unzip " + o.String() + " is not a look"
		}
	}
	if !list {
		return "unzip without -l extracts files"
	}
	return ""
}

// packageQuery allows asking the package manager what is installed.
func packageQuery(j *judge, c *cmd, opts []opt, operands []arg) string {
	switch c.name {
	case "dpkg", "dpkg-query":
		if len(opts) == 0 {
			return c.name + " without a query option is not a look"
		}
		for _, o := range opts {
			if !o.is('l', "list") && !o.is('s', "status") && !o.is('L', "listfiles") && !o.is('S', "search") &&
				!o.is('p', "print-avail") && !o.is('W', "show") && !o.is(0, "showformat") && !o.is('f', "") &&
				!o.is(0, "get-selections") && !o.is(0, "print-architecture") && !o.is(0, "version") {
				return c.name + " " + o.String() + " is not a look"
			}
		}
		return ""
	case "rpm":
		query := false
		for _, o := range opts {
			switch {
			case o.is('q', "query"):
				query = true
			case o.is('a', "all") || o.is('i', "info") || o.is('l', "list") || o.is('f', "file") || o.is('R', "requires") ||
				o.is('c', "configfiles") || o.is('d', "docfiles") || o.is(0, "provides") || o.is(0, "whatprovides") ||
				o.is(0, "whatrequires") || o.is(0, "changelog") || o.is(0, "last") || o.is(0, "scripts"):
			default:
				return "rpm " + o.String() + " is not a look"
			}
		}
		if !query {
			return "rpm without -q is not a look"
		}
		return ""
	case "apt", "apt-cache":
		for _, o := range opts {
			if !o.is(0, "installed") && !o.is(0, "upgradable") && !o.is(0, "all-versions") && !o.is('a', "") &&
				!o.is('n', "names-only") && !o.is('q', "quiet") && !o.is(0, "full") && !o.is(0, "recurse") {
				return c.name + " " + o.String() + " is not a look"
			}
		}
		if len(operands) == 0 || !in(operands[0].text, "list", "show", "policy", "search", "depends", "rdepends", "madison", "showpkg", "showsrc", "stats") {
			return c.name + " is not a look without list, show, policy or search"
		}
		return ""
	case "pip", "pip3":
		for _, o := range opts {
			if !o.is('o', "outdated") && !o.is(0, "format") && !o.is('v', "verbose") && !o.is('f', "files") && !o.is(0, "not-required") && !o.is('l', "local") && !o.is(0, "user") {
				return c.name + " " + o.String() + " is not a look"
			}
		}
		if len(operands) == 0 || !in(operands[0].text, "list", "show", "freeze") {
			return c.name + " is not a look without list, show or freeze"
		}
		return ""
	}
	return c.name + " is not a look"
}

// ufwCheck: ufw status [verbose|numbered].
func ufwCheck(j *judge, c *cmd, _ []opt, operands []arg) string {
	if len(operands) == 0 || operands[0].text != "status" || len(operands) > 2 || len(operands) == 2 && !in(operands[1].text, "verbose", "numbered") {
		return "ufw changes firewall rules"
	}
	return ""
}

// smartctlCheck: reading SMART data is a look; starting a self-test,
// switching SMART features or aborting a test is not.
func smartctlCheck(j *judge, c *cmd, opts []opt, _ []arg) string {
	for _, o := range opts {
		if !o.is('a', "all") && !o.is('A', "attributes") && !o.is('H', "health") && !o.is('i', "info") && !o.is('x', "xall") &&
			!o.is('c', "capabilities") && !o.is('l', "log") && !o.is('j', "json") && !o.is('d', "device") && !o.is(0, "scan") &&
			!o.is(0, "scan-open") && !o.is('q', "quietmode") && !o.is('n', "nocheck") && !o.is('T', "tolerance") && !o.is(0, "version") {
			return "smartctl " + o.String() + " is not a look"
		}
		if o.is('l', "log") && (strings.HasPrefix(o.value.text, "scterc,") || strings.HasPrefix(o.value.text, "scttempint")) {
			return "smartctl -l " + o.value.text + " sets the drive's timers"
		}
	}
	return ""
}

// ipmitoolCheck: sensor, sdr, sel list, chassis status, fru, mc info and
// lan print read the BMC; everything else (chassis power off, sel clear,
// sensor thresh) changes it.
func ipmitoolCheck(j *judge, c *cmd, _ []opt, _ []arg) string {
	args := c.args
	for len(args) > 0 && strings.HasPrefix(args[0].text, "-") {
		t := args[0].text
		if !in(t, "-I", "-H", "-U", "-p", "-L", "-c", "-v", "-E", "-P", "-f") {
			return "ipmitool " + t + " is not a look"
		}
		args = args[1:]
		if in(t, "-I", "-H", "-U", "-p", "-L", "-P", "-f") && len(args) > 0 {
			args = args[1:]
		}
	}
	if len(args) == 0 {
		return "ipmitool with no command"
	}
	verb := args[0].text
	next := ""
	if len(args) > 1 {
		next = args[1].text
	}
	switch {
	case in(verb, "sensor", "sdr") && (next == "" || in(next, "list", "elist", "get", "type")):
	case verb == "sel" && (next == "" || in(next, "list", "elist", "info")):
	case verb == "chassis" && next == "status":
	case verb == "fru" && (next == "" || next == "print"):
	case verb == "mc" && next == "info":
	case verb == "lan" && next == "print":
	default:
		return "ipmitool " + verb + " " + next + " changes the BMC or the machine"
	}
	return ""
}

// ncCheck: nc -z only checks that a port answers; it sends nothing. Any
// other nc use sends data or runs programs (-e, -c).
func ncCheck(j *judge, c *cmd, opts []opt, _ []arg) string {
	scan := false
	for _, o := range opts {
		switch {
		case o.is('z', ""):
			scan = true
		case o.is('v', "") || o.is('n', "") || o.is('u', "") || o.is('4', "") || o.is('6', "") || o.is('w', ""):
		default:
			return "nc " + o.String() + " is not a look"
		}
	}
	if !scan {
		return "nc without -z sends data"
	}
	return ""
}

// versionFlags are the short spellings of "print the version and exit",
// per program; --version is that for all of them. python -v and mysql -v
// are verbose modes that go on to run a script from standard input, and
// are not on the list.
var versionFlags = map[string][]string{
	"python": {"-V"}, "python2": {"-V"}, "python3": {"-V"}, "pypy": {"-V"}, "pypy3": {"-V"},
	"node": {"-v"}, "nodejs": {"-v"}, "perl": {"-v", "-V"}, "ruby": {"-v"}, "php": {"-v"},
	"lua": {"-v"}, "luajit": {"-v"}, "java": {"-version"}, "bun": {"-v"}, "deno": {"-V"},
	"psql": {"-V"}, "mysql": {"-V"}, "mariadb": {"-V"}, "redis-cli": {"-v"}, "sqlite3": {"-version"},
}

// versionOnly reports whether args ask the program name for its version
// and no more: python3 --version, java -version, psql -V.
func versionOnly(name string, args []arg) bool {
	if len(args) != 1 || args[0].dynamic {
		return false
	}
	return args[0].text == "--version" || in(args[0].text, versionFlags[interpreterName(name)]...)
}

// asksAboutItself reports whether a command line is a program's own
// --version or --help and nothing else, which any program answers by
// printing and exiting (issue 25). A longer line is judged as it stands
// (rm -rf / --help is still rm -rf /), and so is -V or -h, which mean
// other things to other programs (shutdown -h halts), and "X help", a
// target a Makefile or a task runner defines. The builtins that take a
// file or a command as their word are left out: dash's . --help reads a
// file named --help.
func asksAboutItself(name string, args []arg) bool {
	if len(args) != 1 || args[0].dynamic || args[0].glob || args[0].text != "--version" && args[0].text != "--help" {
		return false
	}
	return !in(name, "source", ".", "eval", "exec", "command", "builtin", "trap", "alias")
}

// versioned: java and friends are a look only when asked their version.
func versioned(j *judge, c *cmd) {
	if c.trusted && versionOnly(c.name, c.args) {
		return
	}
	j.unknown(c.name + " runs a program")
}

// goCheck: go version and go env print; go env -w and -u change settings.
func goCheck(j *judge, c *cmd, _ []opt, _ []arg) string {
	if len(c.args) == 0 {
		return "go with no command"
	}
	switch c.args[0].text {
	case "version":
		return ""
	case "env":
		for _, a := range c.args[1:] {
			if strings.HasPrefix(a.text, "-") && !in(a.text, "-json", "-changed") {
				return "go env " + a.text + " changes settings"
			}
		}
		return ""
	}
	return "go " + c.args[0].text + " builds or runs code"
}

// ethtoolCheck: showing a device's settings, driver and counters is a
// look; -s, -K, -G, -E (eeprom write), -f (flash), -t (self-test, which
// takes the link down) and the other set options are not.
func ethtoolCheck(j *judge, c *cmd, opts []opt, operands []arg) string {
	for _, o := range opts {
		if !o.is('i', "driver") && !o.is('S', "statistics") && !o.is('k', "show-features") && !o.is(0, "show-offload") &&
			!o.is('g', "show-ring") && !o.is('c', "show-coalesce") && !o.is('a', "show-pause") && !o.is('l', "show-channels") &&
			!o.is('P', "show-permaddr") && !o.is('m', "module-info") && !o.is('T', "show-time-stamping") &&
			!o.is(0, "show-eee") && !o.is(0, "show-fec") && !o.is(0, "json") && !o.is(0, "version") {
			return "ethtool " + o.String() + " changes the device"
		}
	}
	if len(operands) > 1 {
		return "ethtool " + operands[1].text + " changes the device"
	}
	return ""
}

// systemdAnalyzeCheck: the verbs that report; log-level and log-target
// with a value set them.
func systemdAnalyzeCheck(j *judge, c *cmd, _ []opt, operands []arg) string {
	if len(operands) == 0 {
		return ""
	}
	switch verb := operands[0].text; {
	case in(verb, "time", "blame", "critical-chain", "security", "calendar", "timestamp", "timespan", "cat-config",
		"unit-paths", "dump", "verify", "syscall-filter", "filesystems", "condition", "plot", "dot"):
		return ""
	case in(verb, "log-level", "log-target", "service-watchdogs") && len(operands) == 1:
		return ""
	default:
		return "systemd-analyze " + verb + " is not a look"
	}
}

// sshKeygenCheck: ssh-keygen -l prints a key's fingerprint, -F finds a
// host in known_hosts, -y derives the public key; anything else makes or
// changes keys and known_hosts (-R, -H).
func sshKeygenCheck(j *judge, c *cmd, opts []opt, operands []arg) string {
	look := false
	for _, o := range opts {
		switch {
		case o.is('l', "") || o.is('F', "") || o.is('y', ""):
			look = true
		case o.is('f', "") || o.is('E', "") || o.is('v', ""):
		default:
			return "ssh-keygen " + o.String() + " makes or changes keys"
		}
	}
	if !look || len(operands) > 0 {
		return "ssh-keygen without -l makes keys"
	}
	return ""
}

// batchCheck: iotop and systemd-cgtop need -b (batch) without a terminal.
func batchCheck(j *judge, c *cmd, opts []opt, _ []arg) string {
	if !hasOpt(opts, 'b', "batch") {
		return c.name + " without -b needs a terminal"
	}
	return ""
}

// allowed builds a check that admits only the listed options, matched
// exactly (an abbreviation could be a different option), and, when verbs
// are given, only those first operands (none is also fine unless need).
func allowed(optList string, need bool, verbs ...string) func(j *judge, c *cmd, opts []opt, operands []arg) string {
	ok := strings.Fields(optList)
	return func(j *judge, c *cmd, opts []opt, operands []arg) string {
		for _, o := range opts {
			if !in(o.String(), ok...) {
				return c.name + " " + o.String() + " is not a look"
			}
		}
		if len(verbs) == 0 {
			return ""
		}
		if len(operands) == 0 {
			if need {
				return c.name + " with no command is not a look"
			}
			return ""
		}
		if !in(operands[0].text, verbs...) {
			return c.name + " " + operands[0].text + " is not a look"
		}
		return ""
	}
}

// requires builds a check that one of the listed options is present:
// swapon --show, chage -l, slabtop -o.
func requires(optList string, then check) check {
	want := strings.Fields(optList)
	return func(j *judge, c *cmd, opts []opt, operands []arg) string {
		for _, o := range opts {
			if in(o.String(), want...) {
				return then(j, c, opts, operands)
			}
		}
		return c.name + " without " + want[0] + " is not a look"
	}
}

// tcCheck: tc [-s] [-d] qdisc|class|filter show|ls|list [dev X]; bridge
// link|fdb|vlan|mdb [show]. Anything else changes traffic control.
func tcCheck(j *judge, c *cmd, _ []opt, _ []arg) string {
	args := c.args
	for len(args) > 0 && in(args[0].text, "-s", "-d", "-j", "-p", "-stats", "-details", "-json", "-pretty", "-c", "-color") {
		args = args[1:]
	}
	if len(args) == 0 {
		return c.name + " with no object"
	}
	if len(args) == 1 || in(args[1].text, "show", "ls", "list") {
		return ""
	}
	return c.name + " " + args[0].text + " " + args[1].text + " changes the network"
}

// resolvectlCheck: the link settings verbs (dns, domain, llmnr...) set
// them when given values after the link.
func resolvectlCheck(j *judge, c *cmd, _ []opt, operands []arg) string {
	if len(operands) > 2 && in(operands[0].text, "dns", "domain", "llmnr", "mdns", "dnssec", "dnsovertls", "nta", "default-route") {
		return "resolvectl " + operands[0].text + " with values changes the link's settings"
	}
	return ""
}

// nvidiaSmiCheck: the queries; -r (reset), -pm, -pl, -ac, -e, -c and the
// other settings change the GPU.
func nvidiaSmiCheck(j *judge, c *cmd, opts []opt, operands []arg) string {
	for _, o := range opts {
		if !o.is('L', "list-gpus") && !o.is('q', "query") && !o.is('i', "id") && !o.is('d', "display") && !o.is('x', "xml-format") &&
			!o.is('l', "loop") && !o.is(0, "lms") && !o.is(0, "loop-ms") && !o.is(0, "query-gpu") &&
			!o.is(0, "query-compute-apps") && !o.is(0, "format") && !o.is(0, "help") && !o.is(0, "version") {
			return "nvidia-smi " + o.String() + " changes the GPU"
		}
	}
	if len(operands) > 0 && !in(operands[0].text, "topo", "nvlink", "pmon", "dmon") {
		return "nvidia-smi " + operands[0].text + " is not a look"
	}
	return ""
}

// firewallCmdCheck: firewall-cmd --state, --list-*, --get-*, --query-*.
func firewallCmdCheck(j *judge, c *cmd, _ []opt, _ []arg) string {
	for _, a := range c.args {
		name, _, _ := strings.Cut(a.text, "=")
		if name == "--state" || name == "--zone" || name == "--permanent" || strings.HasPrefix(name, "--list-") ||
			strings.HasPrefix(name, "--get-") || strings.HasPrefix(name, "--query-") {
			continue
		}
		return "firewall-cmd " + a.text + " changes the firewall"
	}
	if len(c.args) == 0 {
		return "firewall-cmd with no option"
	}
	return ""
}

// both runs two checks; the first reason wins.
func both(f, g check) check {
	return func(j *judge, c *cmd, opts []opt, operands []arg) string {
		if why := f(j, c, opts, operands); why != "" {
			return why
		}
		return g(j, c, opts, operands)
	}
}

// zoneTransfer: asking a DNS server for a whole zone (dig axfr, dig -t
// ixfr, host -l, nslookup's ls) is not a look: it copies the zone, and is
// what an attacker maps a network with.
func zoneTransfer(j *judge, c *cmd, opts []opt, operands []arg) string {
	for _, a := range c.args {
		t := strings.ToLower(a.text)
		if k := strings.LastIndexAny(t, "=-"); k >= 0 && strings.HasPrefix(t, "-") {
			t = t[k+1:]
		}
		t = strings.TrimPrefix(t, "type=")
		if in(t, "axfr", "ixfr", "+axfr", "+ixfr", "ls") || strings.HasPrefix(t, "ixfr=") || strings.HasPrefix(t, "-tixfr") || strings.HasPrefix(t, "-taxfr") {
			return c.name + " " + a.text + " asks for a zone transfer, not a look"
		}
	}
	return ""
}

// etcdctlCheck: get of a key, or of a prefix, that cannot reach the
// Secrets of a Kubernetes etcd (/registry/secrets/) is a look; a get
// whose range covers them (etcdctl get / --prefix, --from-key) reads
// every Secret, unless --keys-only prints their names alone. Its verb
// paths say what else is a look.
func etcdctlCheck(j *judge, c *cmd, opts []opt, operands []arg) string {
	if len(operands) == 0 || operands[0].text != "get" {
		return ""
	}
	keysOnly, prefix, fromKey := false, false, false
	for _, o := range opts {
		switch {
		case o.is(0, "keys-only"):
			keysOnly = !o.hasValue || o.value.text == "true"
		case o.is(0, "prefix"):
			prefix = !o.hasValue || o.value.text != "false"
		case o.is(0, "from-key"):
			fromKey = !o.hasValue || o.value.text != "false"
		}
	}
	if len(operands) < 2 {
		return "etcdctl get with no key is not a look"
	}
	key := operands[1]
	if key.dynamic || len(operands) > 2 && operands[2].dynamic {
		return "cannot tell which keys etcdctl get " + key.text + " reads"
	}
	const secrets = "/registry/secrets/"
	covers := strings.HasPrefix(key.text, secrets) || strings.HasPrefix(key.text+"/", secrets) ||
		(prefix || fromKey || len(operands) > 2) && strings.HasPrefix(secrets, key.text) ||
		fromKey && key.text < secrets || len(operands) > 2 && key.text < secrets && operands[2].text > secrets
	if covers && !keysOnly {
		j.danger("etcdctl get " + key.text + " reads the cluster's Secrets (" + secrets + ")")
	}
	return ""
}
