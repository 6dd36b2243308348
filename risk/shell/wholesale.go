package shell

import (
	"net/url"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Wholesale and absurd whatever the form: shell HTTP clients aimed at a
// cloud metadata endpoint, the tools that wipe a disk given one by any
// name, commands behind wrappers the table does not know, and endless
// loops that fork.

// netClients are the commands that fetch from or connect to a host named
// among their words: a URL, host:port, or a host then a port.
var netClients = map[string]bool{"curl": true, "wget": true, "http": true, "https": true, "xh": true,
	"aria2c": true, "lynx": true, "links": true, "w3m": true, "elinks": true, "nc": true, "ncat": true,
	"netcat": true, "telnet": true, "socat": true, "openssl": true, "httpie": true, "curlie": true, "fetch": true}

// plainMetadata is the host check when none is configured: the usual
// metadata addresses and names, as written.
func plainMetadata(host string) string {
	h := strings.ToLower(strings.Trim(host, "[]."))
	if strings.HasPrefix(h, "169.254.") || h == "fd00:ec2::254" || h == "metadata.google.internal" || h == "100.100.100.200" {
		return host + " is a cloud metadata endpoint"
	}
	return ""
}

// metadataReach makes a network client aimed at a metadata endpoint
// absurd: the shell, unlike http_request, has no dialer that refuses it.
// A host given through a variable could be one: never a look (the client
// is not a reader anyway), and not blocked.
func (j *judge) metadataReach(name string, args []arg) {
	for _, a := range args {
		if a.dynamic {
			continue
		}
		for _, h := range hostsIn(a.text) {
			if why := j.a.forbidden(h); why != "" {
				j.absurd(name + " " + a.text + " reaches " + why)
				return
			}
		}
	}
}

// hostsIn returns the host names a word may name: a URL's host, the host
// of host:port or host/path, the address of curl's --resolve and
// --connect-to (name:port:addr), socat's TCP:host:port, or the word.
func hostsIn(t string) []string {
	if t == "" || strings.HasPrefix(t, "-") && !strings.Contains(t, "=") {
		return nil
	}
	if _, v, ok := strings.Cut(t, "="); ok && strings.HasPrefix(t, "-") {
		t = v
	}
	var out []string
	if strings.Contains(t, "://") {
		if u, err := url.Parse(t); err == nil && u.Hostname() != "" {
			out = append(out, u.Hostname())
		}
		return out
	}
	if u, err := url.Parse("http://" + t); err == nil && u.Hostname() != "" {
		out = append(out, u.Hostname())
	}
	out = append(out, strings.FieldsFunc(t, func(r rune) bool { return r == ':' || r == ',' || r == '/' })...)
	if strings.Count(t, ":") >= 2 { // an IPv6 address written bare
		out = append(out, strings.Trim(t, "[]"))
	}
	return out
}

// diskWipers are the tools that destroy a disk they are given, with the
// words that make them wipe ("" for any use): absurd on a disk, or on a
// device named at run time (/dev/$DISK, $DEV: it could be one), and a
// danger elsewhere.
var diskWipers = map[string]string{
	"wipefs": "", "blkdiscard": "", "shred": "", "sg_format": "", "pvcreate": "", "ddrescue": "", "dcfldd": "",
	"nvme": "format sanitize", "hdparm": "--security-erase --security-erase-enhanced --trim-sector-ranges --write-sector",
	"cryptsetup": "luksFormat erase luksErase reencrypt", "mdadm": "--zero-superblock --create -C",
	"badblocks": "-w", "sgdisk": "-Z --zap-all -o --clear", "sfdisk": "--delete", "zpool": "create labelclear",
	"vgcreate": "", "mkswap": "",
}

// wipesDisk judges a wiper: absurd when a word names a disk or a device
// computed at run time, else a danger. It reports whether name is a wiper
// used to wipe.
func (j *judge) wipesDisk(name string, args []arg) bool {
	words, ok := diskWipers[name]
	if !ok {
		return false
	}
	if words != "" {
		found := false
		for _, a := range args {
			k, _, _ := strings.Cut(a.text, "=")
			found = found || in(k, strings.Fields(words)...)
		}
		if !found {
			return false
		}
	}
	for _, a := range args {
		_, v, _ := strings.Cut(a.text, "=")
		for _, t := range []string{a.text, v} {
			p := j.resolve(arg{text: t, dynamic: a.dynamic})
			if isRawDisk(p) || a.dynamic && couldBeDevice(p) {
				j.absurd(name + " " + a.text + " would destroy the disk")
				return true
			}
		}
	}
	j.danger(name + " wipes what it is given")
	return true
}

// couldBeDevice reports whether a word computed at run time could name a
// disk: /dev/$X, or a bare $X / $(...) (blocked for the wipers and mkfs,
// whose only use is a device).
func couldBeDevice(p string) bool {
	return strings.HasPrefix(p, "/dev/") || strings.HasPrefix(p, "$") || strings.HasPrefix(p, "${")
}

// wrapped judges a command the table does not know whose next word is
// one it does (nsenter -t 1 -m rm -rf /, proxychains kubectl delete ...,
// firejail mkfs ...): the inner command's absurd and dangerous findings
// stand. Up to four words are tried past the options.
func (j *judge) wrapped(args []arg, depth int) {
	tries := 0
	for i, a := range args {
		if a.dynamic || strings.HasPrefix(a.text, "-") || isAssignment(a.text) {
			continue
		}
		if tries++; tries > 4 {
			return
		}
		name, _, ok := commandName(a)
		if !ok {
			continue
		}
		_, known := j.a.commands[name]
		if known || j.a.effects[name] != nil || isMkfs(name) || interpreterKnown(name) || diskWipers[name] != "" {
			j.remote(func() { j.command(args[i:], depth) })
			return
		}
	}
}

// endlessCond reports whether a loop condition never ends the loop: true,
// :, [ 1 ], [[ 1 ]], test 1, ((1)), sleep N.
func endlessCond(stmts []*syntax.Stmt, until bool) bool {
	if len(stmts) != 1 || stmts[0].Negated {
		return false
	}
	switch c := stmts[0].Cmd.(type) {
	case *syntax.CallExpr:
		if len(c.Args) == 0 {
			return false
		}
		argv := words(c.Args, nil)
		name, _, _ := commandName(argv[0])
		if until {
			return name == "false" && len(argv) == 1
		}
		switch {
		case (name == "true" || name == ":") && len(argv) == 1, name == "sleep":
			return true
		case name == "[" && len(argv) == 3 && argv[2].text == "]", name == "test" && len(argv) == 2:
			return argv[1].text != "" && !argv[1].dynamic
		}
	case *syntax.TestClause:
		if w, ok := c.X.(*syntax.Word); ok {
			t, lit := word(w).lit()
			return lit && t != "" && !until
		}
	case *syntax.ArithmCmd:
		if w, ok := c.X.(*syntax.Word); ok {
			t, lit := word(w).lit()
			return lit && t != "0" && isDigits(t) && !until
		}
	}
	return false
}

// zeroArith reports whether a constant arithmetic condition is the
// literal 0 (for ((;0;)) never loops).
func zeroArith(x syntax.ArithmExpr) bool {
	w, ok := x.(*syntax.Word)
	if !ok {
		return false
	}
	t, lit := word(w).lit()
	return lit && strings.Trim(t, "0") == ""
}
