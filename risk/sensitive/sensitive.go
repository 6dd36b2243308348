// Package sensitive recognises paths that hold secrets (SPEC §2 rule 4):
// .env files, keys and certificates, SSH, cloud, Kerberos, VPN, cluster
// and registry credentials, kubeconfig files, vault passwords, database
// client password files, web applications' config files that hold their
// database password, shell and client histories, /etc/shadow and the like,
// and backups and copies of any of them (.env.bak, id_rsa~, shadow-). It is
// the one list: the shell, the file rules and the file tool all use it, so
// that `cat .env` and a file read of .env are judged alike. It also
// recognises paths where a write plants code that runs later, or changes
// the account files (RunsLater).
package sensitive

import (
	"fmt"
	"path"
	"strings"
)

// Defaults are the patterns of SPEC §2 and their kin. A pattern with a slash
// matches the last segments of a path, each segment with path.Match
// ("/proc/*/environ", ".aws/credentials"); a pattern ending in a slash
// matches any path inside such a directory (".ssh/"); any other pattern is
// matched against the base name with path.Match. Matching ignores case:
// on a case-insensitive file system .ENV is .env.
var Defaults = []string{
	".env", ".env.*", "*.env", ".envrc",
	"*.pem", "*.key", "*.p12", "*.pfx", "*.keystore", "*.jks", "*.ppk", "*.kdbx",
	"id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "ssh_host_*_key",
	".ssh/", ".gnupg/", ".password-store/",
	".aws/credentials", ".aws/config", ".azure/", ".config/gcloud/",
	".netrc", ".git-credentials", ".git/config", ".pgpass", ".my.cnf", ".mylogin.cnf",
	".npmrc", ".pypirc", ".boto", ".s3cfg", ".dockercfg", ".htpasswd", ".vault-token",
	".docker/config.json", ".config/gh/hosts.yml", ".cargo/credentials", ".cargo/credentials.toml",
	".gem/credentials", ".terraform.d/credentials.tfrc.json", "*.tfstate", "*.tfstate.backup",
	"/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/sudoers.d/", "/etc/ssl/private/",
	"/etc/mysql/debian.cnf", "run/secrets/",
	// Orchestrator secret volumes as the node sees them (issue 16).
	// A container's config.v2.json holds its environment.
	"kubernetes.io~secret/", "kubernetes.io~projected/", "/var/lib/docker/containers/*/config.v2.json",
	"kubeconfig*", "*.kubeconfig", ".kube/config", ".kube/",
	"*credentials*.json", "service-account*.json",
	// Histories hold what was typed, passwords included.
	".*_history", ".histfile", "fish_history",
	// Process environments hold the secrets a process was given.
	"/proc/*/environ", "/proc/*/task/*/environ",

	// Issue 11: one list for the shell and the file tool.
	// Kerberos and VPN credentials.
	"*.keytab", "krb5cc_*", "/etc/wireguard/", "/etc/openvpn/", "*.ovpn", "ipsec.secrets", "/etc/ppp/*-secrets",
	// Cluster-agent credentials: kubelet and control-plane keys, k3s and
	// RKE tokens, the kubeconfigs kubeadm writes under /etc/kubernetes.
	"/etc/kubernetes/*.conf", "/etc/kubernetes/pki/", "/var/lib/kubelet/pki/", "/var/lib/kubelet/kubeconfig",
	"/etc/rancher/", "/var/lib/rancher/*/server/token", "/var/lib/rancher/*/server/node-token", "/var/lib/rancher/*/server/tls/",
	"/etc/cni/net.d/*kubeconfig", "/var/lib/kube-proxy/kubeconfig*",
	// ACME account keys and certificates.
	"/etc/letsencrypt/", ".acme.sh/", "acme.json",
	// Registry auth.
	"containers/auth.json", ".config/containers/auth.json", ".m2/settings.xml", ".m2/settings-security.xml",
	".gradle/gradle.properties", ".config/helm/registry/", ".composer/auth.json", ".config/composer/auth.json",
	".nuget/nuget/nuget.config", ".yarnrc.yml", "pip.conf", ".pip/pip.conf",
	// Cloud CLI caches and configs.
	".aws/sso/", ".aws/cli/", ".oci/", ".config/doctl/", ".config/hcloud/", ".terraformrc", "clouds.yaml", ".config/openstack/",
	".aliyun/", ".bluemix/", ".ibmcloud/", ".config/scw/", ".linode-cli", ".config/linode-cli",
	// Vault, Ansible Vault and password-manager files.
	".vault_pass*", "vault_pass*", ".vault-pass*", "vault-password*", "*.vault_pass", ".ansible/vault*",
	// Service-account JSON keys.
	"*service_account*.json", "*serviceaccount*.json", "*sa-key*.json", "gcp-key*.json", "application_default_credentials.json",
	// Database client password files.
	".pg_service.conf", ".cqlshrc", ".odbc.ini", "/etc/odbc.ini", ".dbshell", ".mongorc.js", ".influxdbv2/",
	// Web applications' config files that hold their database password:
	// decided in issue 11 to be secrets, since reading one prints it; the
	// file names are the frameworks' own, so a generic config.php is not.
	"wp-config.php", "localsettings.php", "config/database.yml", "config/secrets.yml", "config/master.key",
	"sites/*/settings.php", "app/etc/env.php", "config.inc.php", "parameters.yml",
	// Other credential stores the shell list held before: one list now.
	"rclone.conf", "opasswd", ".history", "/etc/security/opasswd",
	// Issue 25: credential files by name, and memory images.
	".erlang.cookie", "my.cnf", "pgpass.conf", ".rediscli_auth", "*service-account*.json", "sa.json", "*-sa.json", "*_sa.json",
	"/proc/*/mem", "/proc/*/task/*/mem",
}

// backupSuffixes are the endings editors, package managers and people
// give copies of a file: .env.bak is the .env it copies.
var backupSuffixes = []string{"~", ".bak", ".backup", ".old", ".orig", ".save", ".swp", ".swo", ".tmp",
	".copy", ".1", ".2", ".dpkg-old", ".dpkg-dist", ".rpmsave", ".rpmnew", ".sav", "-"}

// original returns the name a backup copy was made from, or "" when p is
// not one: .env.bak, id_rsa~, .#.env, #.env#, shadow-, credentials.json.old.
func original(clean string) string {
	dir, base := path.Split(clean)
	orig := base
	for changed := true; changed; {
		changed = false
		for _, suf := range backupSuffixes {
			if len(orig) > len(suf)+1 && strings.HasSuffix(orig, suf) {
				orig, changed = strings.TrimSuffix(orig, suf), true
			}
		}
		if s, ok := strings.CutPrefix(orig, ".#"); ok && s != "" {
			orig, changed = s, true
		}
		if len(orig) > 2 && orig[0] == '#' && orig[len(orig)-1] == '#' {
			orig, changed = orig[1:len(orig)-1], true
		}
	}
	if orig == base {
		return ""
	}
	return dir + orig
}

type pattern struct {
	text     string // lower case
	dir      bool   // ".ssh/": anything inside a directory of that name
	segments []glob // "a/b": the last segments of a path; for a dir pattern, its segments
	anchored bool   // a segment pattern that starts with "/"
	base     glob   // otherwise: the base name
}

// glob is one path.Match pattern, with a fast path for the common shapes:
// a literal, or one '*' between a literal prefix and suffix.
type glob struct {
	text           string
	simple         bool // text is a literal, or prefix*suffix
	prefix, suffix string
	star           bool
}

func newGlob(text string) (glob, error) {
	if _, err := path.Match(text, ""); err != nil {
		return glob{}, err
	}
	g := glob{text: text}
	if !strings.ContainsAny(text, `?[\`) && strings.Count(text, "*") <= 1 {
		g.simple = true
		g.prefix, g.suffix, g.star = strings.Cut(text, "*")
	}
	return g, nil
}

func (g glob) match(name string) bool {
	if !g.simple {
		ok, _ := path.Match(g.text, name)
		return ok
	}
	if !g.star {
		return name == g.prefix
	}
	// path.Match's '*' does not cross a '/', and names here hold none.
	return len(name) >= len(g.prefix)+len(g.suffix) &&
		strings.HasPrefix(name, g.prefix) && strings.HasSuffix(name, g.suffix)
}

// literal reports whether the glob has no wildcard.
func (g glob) literal() bool { return !strings.ContainsAny(g.text, `*?[\`) }

// key is the byte a name must end with (last) or start with (first) to
// match, so that a lookup tries only the patterns that can match; ok is
// false when both ends are wildcards.
func (g glob) key() (b byte, last, ok bool) {
	t := g.text
	if t == "" {
		return 0, false, false
	}
	if c := t[len(t)-1]; !strings.ContainsRune(`*?]\`, rune(c)) {
		return c, true, true
	}
	if c := t[0]; !strings.ContainsRune(`*?[\`, rune(c)) {
		return c, false, true
	}
	return 0, false, false
}

// byteIndex holds pattern indexes by the last or first byte their names
// must have, and those that can match any name; each list is in the
// patterns' order.
type byteIndex struct {
	last, first [256][]int
	any         []int
}

func (x *byteIndex) add(g glob, i int) {
	switch b, last, ok := g.key(); {
	case !ok:
		x.any = append(x.any, i)
	case last:
		x.last[b] = append(x.last[b], i)
	default:
		x.first[b] = append(x.first[b], i)
	}
}

// Matcher matches paths against the default patterns and any extra ones
// from config. It is compiled once in New (STYLE habit 4): each lookup
// tries only the patterns its path can match. It is safe for concurrent
// use.
type Matcher struct {
	patterns []pattern
	// literal holds the base-name patterns without wildcards (.netrc,
	// wp-config.php), looked up at once instead of one by one.
	literal map[string]string
	bases   byteIndex // base-name globs, by the base name's last or first byte
	tails   byteIndex // segment patterns with a wildcard in their last segment, by it
	// tailsLit holds the segment patterns whose last segment is literal
	// (.aws/config), by that segment: only a path with that base name
	// can match them.
	tailsLit map[string][]int
	dirs     map[string][]int // directory patterns by their first segment
	dirsAny  []int            // directory patterns whose first segment is a wildcard
	// holders are the segment patterns MatchDir reads into a directory
	// (.aws/credentials: .aws holds a secret), by their next-to-last
	// segment, and those where that segment is a wildcard.
	holders    map[string][]int
	holdersAny []int
}

// New builds a Matcher from the defaults plus extra patterns. A malformed
// pattern is an error that names it.
func New(extra []string) (*Matcher, error) {
	m := &Matcher{literal: map[string]string{}, dirs: map[string][]int{}, holders: map[string][]int{}, tailsLit: map[string][]int{}}
	for _, list := range [][]string{Defaults, extra} {
		for _, p := range list {
			if strings.TrimSpace(p) == "" {
				return nil, fmt.Errorf("sensitive path pattern %q is empty", p)
			}
			pt := pattern{text: strings.ToLower(p)}
			switch {
			case strings.HasSuffix(p, "/"):
				pt.dir = true
				pt.text = strings.Trim(pt.text, "/")
				for _, s := range strings.Split(pt.text, "/") {
					g, err := newGlob(s)
					if err != nil {
						return nil, fmt.Errorf("sensitive path pattern %q: %w", p, err)
					}
					pt.segments = append(pt.segments, g)
				}
			case strings.Contains(p, "/"):
				pt.anchored = strings.HasPrefix(p, "/")
				for _, s := range strings.Split(strings.Trim(pt.text, "/"), "/") {
					g, err := newGlob(s)
					if err != nil {
						return nil, fmt.Errorf("sensitive path pattern %q: %w", p, err)
					}
					pt.segments = append(pt.segments, g)
				}
			default:
				g, err := newGlob(pt.text)
				if err != nil {
					return nil, fmt.Errorf("sensitive path pattern %q: %w", p, err)
				}
				pt.base = g
				if g.simple && !g.star {
					if _, dup := m.literal[g.prefix]; !dup {
						m.literal[g.prefix] = pt.text
					}
					continue
				}
			}
			m.add(pt)
		}
	}
	return m, nil
}

// add indexes one pattern.
func (m *Matcher) add(pt pattern) {
	i := len(m.patterns)
	m.patterns = append(m.patterns, pt)
	switch {
	case pt.dir:
		if first := pt.segments[0]; first.literal() {
			m.dirs[first.text] = append(m.dirs[first.text], i)
		} else {
			m.dirsAny = append(m.dirsAny, i)
		}
	case pt.segments != nil:
		n := len(pt.segments)
		if last := pt.segments[n-1]; last.literal() {
			m.tailsLit[last.text] = append(m.tailsLit[last.text], i)
		} else {
			m.tails.add(last, i)
		}
		if n > 1 && !pt.anchored {
			if h := pt.segments[n-2]; h.literal() {
				m.holders[h.text] = append(m.holders[h.text], i)
			} else {
				m.holdersAny = append(m.holdersAny, i)
			}
		}
	default:
		m.bases.add(pt.base, i)
	}
}

// Match reports whether p names a sensitive path, and a short reason that
// names the pattern. p may be relative or absolute, with or without ./ or a
// trailing slash; case is ignored.
func (m *Matcher) Match(p string) (reason string, ok bool) {
	if p == "" {
		return "", false
	}
	if why := procWalk(p); why != "" {
		return p + " " + why, true
	}
	clean := cleanPath(p)
	if why, ok := m.match(p, clean); ok {
		return why, true
	}
	if orig := original(clean); orig != "" {
		if why, ok := m.match(p, orig); ok {
			return why + ", as a backup or copy", true
		}
	}
	return "", false
}

// cleanPath is p as the patterns are matched against it: lower case,
// slashes for backslashes, absolute and clean.
func cleanPath(p string) string {
	if cleanAlready(p) {
		return p // most paths on a command line: nothing to copy or scan again
	}
	p = strings.ToLower(strings.ReplaceAll(p, `\`, "/")) // both copy only when they change p
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return path.Clean(p)
}

// cleanAlready reports whether p is its own cleanPath: absolute, in ASCII
// lower case, without backslashes, empty, "." or ".." segments, or a
// trailing slash.
func cleanAlready(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	if p == "/" {
		return true
	}
	start := 1 // of the segment being read
	for i := 1; i <= len(p); i++ {
		if i < len(p) {
			c := p[i]
			if c == '\\' || c >= 'A' && c <= 'Z' || c >= 0x80 {
				return false
			}
			if c != '/' {
				continue
			}
		}
		switch p[start:i] {
		case "", ".", "..":
			return false // also a trailing slash: an empty last segment
		}
		start = i + 1
	}
	return true
}

// match is Match of p, given as cleanPath(p). Of the patterns that match,
// the first in the list gives the reason.
func (m *Matcher) match(p, clean string) (reason string, ok bool) {
	if why := ProcSecret(clean); why != "" {
		return p + " " + why, true
	}
	base := path.Base(clean)
	if text, ok := m.literal[base]; ok {
		return fmt.Sprintf("%s is a sensitive path (%s)", p, text), true
	}
	best := -1
	// try tries the candidates in order, up to the best match so far.
	try := func(list []int) {
		for _, i := range list {
			if best >= 0 && i >= best {
				return
			}
			if m.matches(&m.patterns[i], clean, base) {
				best = i
				return
			}
		}
	}
	if base != "" {
		try(m.bases.last[base[len(base)-1]])
		try(m.bases.first[base[0]])
		try(m.tailsLit[base])
		try(m.tails.last[base[len(base)-1]])
		try(m.tails.first[base[0]])
	}
	try(m.bases.any)
	try(m.tails.any)
	try(m.dirsAny)
	// Directory patterns whose first segment is literal are indexed by it:
	// at each segment of the path, those that start with it are tried
	// there alone. A pattern found anywhere in the path is found at the
	// segment where it starts, so this is containsDir without its scan.
	for rest := clean; rest != ""; {
		here, seg := rest, rest
		if k := strings.IndexByte(rest[1:], '/'); k >= 0 {
			seg, rest = rest[1:k+1], rest[k+1:]
		} else {
			seg, rest = rest[1:], ""
		}
		for _, i := range m.dirs[seg] {
			if best >= 0 && i >= best {
				break
			}
			if dirAt(here, m.patterns[i].segments) {
				best = i
				break
			}
		}
	}
	if best < 0 {
		return "", false
	}
	pt := &m.patterns[best]
	if pt.dir {
		return fmt.Sprintf("%s is inside %s/, which holds secrets", p, pt.text), true
	}
	return fmt.Sprintf("%s is a sensitive path (%s)", p, pt.text), true
}

// matches reports whether one pattern matches the clean path.
func (m *Matcher) matches(pt *pattern, clean, base string) bool {
	switch {
	case pt.dir:
		return containsDir(clean, pt.segments)
	case pt.segments != nil:
		return matchTail(pt.segments, clean)
	default:
		return pt.base.match(base)
	}
}

// MatchDir reports whether commands run in the directory dir may read
// secrets by their base names alone: dir is sensitive itself (.ssh), or it
// is the directory of a sensitive path (.aws holds credentials, .docker
// holds config.json). Patterns that start with "/" name system paths and
// are not read into a relative directory.
func (m *Matcher) MatchDir(dir string) (reason string, ok bool) {
	if dir == "" {
		return "", false
	}
	clean := cleanPath(dir)
	if why, ok := m.match(dir, clean); ok {
		return why, true
	}
	best := -1
	for _, list := range [2][]int{m.holders[path.Base(clean)], m.holdersAny} {
		for _, i := range list {
			if best >= 0 && i >= best {
				break
			}
			pt := &m.patterns[i]
			if matchTail(pt.segments[:len(pt.segments)-1], clean) {
				best = i
				break
			}
		}
	}
	if best < 0 {
		return "", false
	}
	return fmt.Sprintf("%s holds %s, a sensitive path", dir, m.patterns[best].text), true
}

// containsDir reports whether the clean absolute path holds the
// directory segments dir as whole, consecutive segments.
func containsDir(clean string, dir []glob) bool {
	for rest := clean; rest != ""; {
		// rest starts with "/": try dir at this segment.
		if dirAt(rest, dir) {
			return true
		}
		k := strings.IndexByte(rest[1:], '/')
		if k < 0 {
			return false
		}
		rest = rest[k+1:]
	}
	return false
}

// dirAt reports whether rest ("/a/b/...") starts with the segments dir.
func dirAt(rest string, dir []glob) bool {
	for _, g := range dir {
		if rest == "" {
			return false
		}
		seg := rest[1:]
		next := ""
		if k := strings.IndexByte(seg, '/'); k >= 0 {
			seg, next = seg[:k], seg[k:]
		}
		if !g.match(seg) {
			return false
		}
		rest = next
	}
	return true
}

// matchTail reports whether the last len(pat) segments of the clean
// absolute path match pat, segment by segment.
func matchTail(pat []glob, clean string) bool {
	rest := clean
	for i := len(pat) - 1; i >= 0; i-- {
		if rest == "" || rest == "/" {
			return false
		}
		j := strings.LastIndexByte(rest, '/')
		if !pat[i].match(rest[j+1:]) {
			return false
		}
		rest = rest[:j]
	}
	return true
}

// RunsLater reports whether writing p plants code that runs later (shell,
// editor, runtime and tool start-up files, git hooks and config, Python's
// sitecustomize and .pth files, cron, at, systemd units, logrotate, udev,
// modprobe and sysctl.d, PAM, sshd, authorized_keys, the preload list)
// or changes the account files, with a short reason. The shell's
// redirections and the file tool's writes both use it. Such a write is a danger even when
// nothing runs now.
func RunsLater(p string) (reason string, ok bool) {
	if p == "" {
		return "", false
	}
	if strings.IndexByte(p, '/') < 0 && strings.IndexByte(p, '\\') < 0 {
		// A bare name: only the name itself can plant (.bashrc, crontab).
		if runsLaterNames[p] {
			return fmt.Sprintf("writing %s plants code that runs later", p), true
		}
		return "", false
	}
	if !strings.ContainsAny(p, `.\`) && !strings.Contains(p, "etc") && !strings.Contains(p, "lib/") && !strings.Contains(p, "var/") {
		// No directory below can hold it, nor an account file: only its
		// name can plant (authorized_keys, crontab). Most words end here.
		if !runsLaterNames[p[strings.LastIndexByte(p, '/')+1:]] {
			return "", false
		}
	}
	clean := path.Clean("/" + strings.ReplaceAll(p, `\`, "/"))
	base := path.Base(clean)
	if runsLaterNames[base] || strings.HasSuffix(base, ".pth") && strings.Contains(clean, "-packages/") {
		return fmt.Sprintf("writing %s plants code that runs later", p), true
	}
	if strings.Count(clean, "/") < 2 {
		// One segment (x, /x): no directory below can hold it.
		if accountFiles[clean] {
			return fmt.Sprintf("writing %s changes who may log in and as what", p), true
		}
		return "", false
	}
	// Every directory below holds one of these; most paths hold none.
	if !strings.Contains(clean, "/etc") && !strings.Contains(clean, "/.") && !strings.Contains(clean, "/lib/") &&
		!strings.Contains(clean, "/var/") {
		return "", false
	}
	asDir := clean + "/" // cp x ~/.config/autostart: the folder itself
	for _, dir := range runsLaterDirs {
		if strings.Contains(asDir, dir) {
			return fmt.Sprintf("writing %s plants code that runs later", p), true
		}
	}
	if accountFiles[clean] {
		return fmt.Sprintf("writing %s changes who may log in and as what", p), true
	}
	return "", false
}

// runsLaterNames are files, by base name, whose content a shell, an
// editor, a runtime, a mail or network daemon or the loader runs or reads
// commands from at start-up, login or on a schedule.
var runsLaterNames = map[string]bool{
	// Shells.
	".bashrc": true, ".bash_profile": true, ".bash_login": true, ".bash_logout": true, ".profile": true,
	".zshrc": true, ".zprofile": true, ".zshenv": true, ".zlogin": true, ".zlogout": true, ".bash_aliases": true,
	"config.fish": true, ".kshrc": true, ".mkshrc": true, ".cshrc": true, ".tcshrc": true, ".login": true,
	".logout": true, ".envrc": true, ".pam_environment": true,
	// Editors, pagers, debuggers and terminals.
	".vimrc": true, ".exrc": true, ".gvimrc": true, "init.vim": true, "init.lua": true, ".emacs": true, "init.el": true,
	".tmux.conf": true, ".screenrc": true, ".gdbinit": true, ".lldbinit": true, ".lesskey": true, ".nanorc": true,
	".xinitrc": true, ".xsession": true, ".xprofile": true, ".xsessionrc": true,
	// Tools that run commands from their config.
	".gitconfig": true, ".hgrc": true, ".wgetrc": true, ".curlrc": true, ".psqlrc": true, ".mailcap": true,
	".forward": true, ".procmailrc": true, ".muttrc": true,
	// Runtimes.
	"sitecustomize.py": true, "usercustomize.py": true, ".pythonrc": true, ".pythonrc.py": true, ".irbrc": true,
	".pryrc": true, ".perldb": true, ".Rprofile": true, ".npmrc": true, ".yarnrc": true,
	// SSH and the loader.
	"authorized_keys": true, "authorized_keys2": true, "ld.so.preload": true,
	"crontab": true, "anacrontab": true, "rc.local": true, "sshd_config": true, "ssh_config": true,
	"logrotate.conf": true, "sysctl.conf": true, "environment.d": true, "pam_env.conf": true,
}

// runsLaterDirs are places whose files are run, or read for commands, at
// boot, login, on a schedule, on rotation, on a device or network event,
// or when a package is installed.
var runsLaterDirs = []string{"/etc/cron", "/etc/systemd/", "/etc/profile", "/etc/rc", "/etc/init.d/", "/etc/init/",
	"/etc/bash", "/var/spool/cron/", "/var/spool/at/", "/lib/systemd/", "/usr/lib/systemd/", "/.config/systemd/",
	"/.config/autostart/", "/.git/hooks/", "/etc/xdg/autostart/", "/etc/logrotate.d/", "/etc/update-motd.d/",
	"/etc/udev/rules.d/", "/lib/udev/rules.d/", "/etc/modprobe.d/", "/etc/modules-load.d/", "/etc/sysctl.d/",
	"/etc/ld.so.conf", "/etc/networkmanager/dispatcher.d/", "/etc/NetworkManager/dispatcher.d/", "/etc/network/if-",
	"/etc/dhcp/dhclient-", "/etc/apt/apt.conf.d/", "/etc/yum/pluginconf.d/", "/etc/dnf/plugins/", "/etc/pam.d/",
	"/etc/security/", "/etc/X11/Xsession.d/", "/etc/supervisor/", "/etc/sudoers", "/etc/ssh/sshd_config.d/",
	"/etc/environment", "/.ssh/rc", "/.ssh/environment", "/.config/fish/", "/.config/nvim/", "/.emacs.d/",
	"/.local/share/systemd/", "/.config/environment.d/", "/etc/containers/systemd/", "/etc/tmpfiles.d/",
	"/.git/config", "/.gitmodules", "/var/lib/dpkg/info/"}

// accountFiles decide who may log in and as whom.
var accountFiles = map[string]bool{"/etc/passwd": true, "/etc/shadow": true, "/etc/group": true,
	"/etc/gshadow": true, "/etc/subuid": true, "/etc/subgid": true, "/etc/login.defs": true}

// ProcSecret says why a clean absolute path under /proc reaches another
// process's secrets, or "": its environment (/proc/PID/environ, under any
// pid, task or spelling), and anything read through its working
// directory, its root or its open files (/proc/PID/cwd/config.yaml,
// /proc/PID/root/..., /proc/PID/fd/3), where the bot's own tokens and
// config live even though the shell's environment is scrubbed. The pid
// may be anything, a variable included (/proc/$PPID/cwd/x): the shell
// judge passes it with the variable in place. The directories themselves
// (ls /proc/1234/fd) are not secrets: they show names only.
func ProcSecret(clean string) string {
	rest, ok := strings.CutPrefix(clean, "/proc/")
	if !ok {
		return ""
	}
	_, rest, _ = strings.Cut(rest, "/") // the pid, self, thread-self, $PPID
	if t, ok := strings.CutPrefix(rest, "task/"); ok {
		_, rest, _ = strings.Cut(t, "/")
	}
	what, inside, _ := strings.Cut(rest, "/")
	switch {
	case what == "environ":
		return "is a process's environment, which holds its secrets"
	case what == "mem":
		return "is a process's memory, which holds its secrets"
	case inside != "" && (what == "cwd" || what == "root" || what == "fd" || what == "map_files"):
		return "reads through another process's " + what + ", where its secrets and config live"
	}
	return ""
}

// pathFolders are the folders on a usual PATH: a file written there
// replaces or shadows a command that people and services run.
var pathFolders = []string{"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin",
	"/usr/games", "/usr/local/games", "/snap/bin", "/~/bin", "/~/.local/bin", "/root/bin", "/root/.local/bin"}

// OnPath reports whether p is a folder on a usual PATH or a file directly
// in one (/usr/local/bin/ls, ~/.local/bin/), with a short reason. A write
// there plants a command that runs when someone types its name.
func OnPath(p string) (reason string, ok bool) {
	if !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~") {
		return "", false // relative: inside the directory the command runs in
	}
	clean := path.Clean("/" + strings.ReplaceAll(p, `\`, "/"))
	for _, dir := range []string{clean, path.Dir(clean)} {
		for _, f := range pathFolders {
			if dir == f || strings.HasPrefix(f, "/~/") && (strings.HasSuffix(dir, f[2:]) && strings.HasPrefix(dir, "/home/")) {
				return fmt.Sprintf("%s is on the PATH, where a file replaces a command others run", p), true
			}
		}
	}
	return "", false
}

// procWalk says why a path, as written, walks through a process's working
// directory, root or open files (/proc/self/cwd/../config.yaml,
// /proc/1/root/etc/shadow, /proc/self/fd/3/..), or "": cleaning it
// first would fold the walk away (/proc/self/cwd/.. is /proc/self), yet
// the kernel follows cwd and root out of any root, into the bot's own
// files (issue 25, item 6).
func procWalk(p string) string {
	raw := strings.ReplaceAll(p, `\`, "/")
	for k := strings.Index(raw, "proc/"); k >= 0; {
		if k == 0 || raw[k-1] == '/' {
			rest := raw[k+len("proc/"):]
			_, rest, _ = strings.Cut(rest, "/") // the pid, self, thread-self, $PPID
			if t, ok := strings.CutPrefix(rest, "task/"); ok {
				_, rest, _ = strings.Cut(t, "/")
			}
			what, inside, _ := strings.Cut(rest, "/")
			what = strings.ToLower(what)
			if inside != "" && strings.Trim(inside, "/.") != "" || strings.Contains(inside, "..") {
				switch what {
				case "cwd", "root", "fd", "map_files":
					return "walks through a process's " + what + ", out of any root and into its files, the bot's own included"
				}
			}
		}
		next := strings.Index(raw[k+1:], "proc/")
		if next < 0 {
			break
		}
		k += 1 + next
	}
	return ""
}
