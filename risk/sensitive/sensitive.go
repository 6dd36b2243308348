// Package sensitive recognises paths that hold secrets (SPEC §2 rule 4):
// .env files, keys and certificates, SSH and cloud credentials, kubeconfig
// files, /etc/shadow and the like. Both the shell and the file rules use it,
// so that `cat .env` and a file read of .env are judged alike.
package sensitive

import (
	"fmt"
	"path"
	"strings"
)

// Defaults are the patterns of SPEC §2. A pattern with a slash matches a path
// suffix ("/.aws/credentials"); a pattern ending in a slash matches any path
// inside such a directory (".ssh/"); any other pattern is matched against the
// base name with path.Match.
var Defaults = []string{
	".env", ".env.*", "*.env",
	"*.pem", "*.key", "*.p12", "*.pfx", "*.keystore", "*.jks",
	"id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
	".ssh/", ".gnupg/",
	".aws/credentials", ".aws/config", ".azure/", ".config/gcloud/",
	".netrc", ".git-credentials", ".pgpass", ".my.cnf", ".npmrc", ".pypirc",
	".docker/config.json",
	"/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/sudoers.d/",
	"kubeconfig", "*.kubeconfig", ".kube/config", ".kube/",
	".vault-token", "credentials.json", "service-account*.json",
}

type pattern struct {
	text   string
	dir    bool // ".ssh/": anything inside a directory of that name
	suffix bool // contains a slash: matches a path suffix
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
			pt := pattern{text: p}
			switch {
			case strings.HasSuffix(p, "/"):
				pt.dir = true
				pt.text = strings.Trim(p, "/")
			case strings.Contains(p, "/"):
				pt.suffix = true
			default:
				if _, err := path.Match(p, ""); err != nil {
					return nil, fmt.Errorf("sensitive path pattern %q: %w", p, err)
				}
			}
			m.patterns = append(m.patterns, pt)
		}
	}
	return m, nil
}

// Match reports whether p names a sensitive path, and a short reason that
// names the pattern. p may be relative or absolute, with or without ./ or a
// trailing slash.
func (m *Matcher) Match(p string) (reason string, ok bool) {
	if p == "" {
		return "", false
	}
	clean := path.Clean("/" + strings.ReplaceAll(p, `\`, "/"))
	base := path.Base(clean)
	for _, pt := range m.patterns {
		switch {
		case pt.dir:
			seg := "/" + pt.text
			if strings.Contains(clean+"/", seg+"/") {
				return fmt.Sprintf("%s is inside %s/, which holds secrets", p, pt.text), true
			}
		case pt.suffix:
			want := pt.text
			if !strings.HasPrefix(want, "/") {
				want = "/" + want
			}
			if clean == want || strings.HasSuffix(clean, want) {
				return fmt.Sprintf("%s is a sensitive path (%s)", p, pt.text), true
			}
		default:
			if ok, _ := path.Match(pt.text, base); ok {
				return fmt.Sprintf("%s is a sensitive path (%s)", p, pt.text), true
			}
		}
	}
	return "", false
}
