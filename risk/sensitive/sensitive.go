// Package sensitive recognises paths that hold secrets (SPEC §2 rule 4):
// .env files, keys and certificates, SSH and cloud credentials, kubeconfig
// files, shell and client histories, /etc/shadow and the like. Both the
// shell and the file rules use it, so that `cat .env` and a file read of
// .env are judged alike. It also recognises paths where a write plants code
// that runs later (RunsLater).
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
	"kubeconfig*", "*.kubeconfig", ".kube/config", ".kube/",
	"*credentials*.json", "service-account*.json",
	// Histories hold what was typed, passwords included.
	".*_history", ".histfile", "fish_history",
	// Process environments hold the secrets a process was given.
	"/proc/*/environ", "/proc/*/task/*/environ",
}

type pattern struct {
	text     string // lower case
	dir      bool   // ".ssh/": anything inside a directory of that name
	segments []glob // "a/b": the last segments of a path
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

// Matcher matches paths against the default patterns and any extra ones
// from config. It is safe for concurrent use.
type Matcher struct {
	patterns []pattern
}

// New builds a Matcher from the defaults plus extra patterns. A malformed
// pattern is an error that names it.
func New(extra []string) (*Matcher, error) {
	m := &Matcher{}
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
			}
			m.patterns = append(m.patterns, pt)
		}
	}
	return m, nil
}

// Match reports whether p names a sensitive path, and a short reason that
// names the pattern. p may be relative or absolute, with or without ./ or a
// trailing slash; case is ignored.
func (m *Matcher) Match(p string) (reason string, ok bool) {
	if p == "" {
		return "", false
	}
	return m.match(p, cleanPath(p))
}

// cleanPath is p as the patterns are matched against it: lower case,
// slashes for backslashes, absolute and clean.
func cleanPath(p string) string {
	p = strings.ToLower(strings.ReplaceAll(p, `\`, "/")) // both copy only when they change p
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return path.Clean(p)
}

// match is Match of p, given as cleanPath(p).
func (m *Matcher) match(p, clean string) (reason string, ok bool) {
	base := path.Base(clean)
	for _, pt := range m.patterns {
		switch {
		case pt.dir:
			if containsDir(clean, pt.text) {
				return fmt.Sprintf("%s is inside %s/, which holds secrets", p, pt.text), true
			}
		case pt.segments != nil:
			if matchTail(pt.segments, clean) {
				return fmt.Sprintf("%s is a sensitive path (%s)", p, pt.text), true
			}
		default:
			if pt.base.match(base) {
				return fmt.Sprintf("%s is a sensitive path (%s)", p, pt.text), true
			}
		}
	}
	return "", false
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
	for _, pt := range m.patterns {
		if n := len(pt.segments); n > 1 && !pt.anchored && matchTail(pt.segments[:n-1], clean) {
			return fmt.Sprintf("%s holds %s, a sensitive path", dir, pt.text), true
		}
	}
	return "", false
}

// containsDir reports whether the clean absolute path holds dir ("a" or
// "a/b") as whole segments.
func containsDir(clean, dir string) bool {
	for rest := clean; ; {
		i := strings.Index(rest, "/"+dir)
		if i < 0 {
			return false
		}
		end := i + 1 + len(dir)
		if end == len(rest) || rest[end] == '/' {
			return true
		}
		rest = rest[i+1:]
	}
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

// RunsLater reports whether writing p plants code that runs later (shell
// and editor start-up files, git hooks and .gitconfig (pager, aliases),
// Python's sitecustomize, cron, systemd units, authorized_keys, the preload
// list), with a short reason. Such a write is a danger even when
// nothing runs now.
func RunsLater(p string) (reason string, ok bool) {
	if p == "" {
		return "", false
	}
	clean := path.Clean("/" + strings.ReplaceAll(p, `\`, "/"))
	switch path.Base(clean) {
	case ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile",
		".zshenv", ".zlogin", ".bash_aliases", "config.fish", ".envrc", ".gitconfig", ".vimrc", ".tmux.conf",
		"sitecustomize.py", "usercustomize.py", "authorized_keys", "authorized_keys2", "ld.so.preload", "crontab":
		return fmt.Sprintf("writing %s plants code that runs later", p), true
	}
	for _, dir := range []string{"/etc/cron", "/etc/systemd/", "/etc/profile", "/etc/rc", "/etc/init.d/",
		"/etc/bash", "/var/spool/cron/", "/lib/systemd/", "/usr/lib/systemd/", "/.config/systemd/",
		"/.config/autostart/", "/.git/hooks/"} {
		if strings.Contains(clean, dir) {
			return fmt.Sprintf("writing %s plants code that runs later", p), true
		}
	}
	return "", false
}
