package shell

import (
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/countersign/countersign/risk/sensitive"
)

// Secrets a shell reader can reach beyond the configured sensitive paths,
// and patterns: cat .e* reads .env as surely as cat .env does.

// shellSecret reports whether p is a secret the configured matcher cannot
// see as written: a process environment under any spelling of its pid
// (/proc/self/environ, /proc/1/task/1/environ). Every other secret is in
// the one list the file tool shares (sensitive.Defaults).
func shellSecret(p string) bool {
	if rest, ok := strings.CutPrefix(p, "/proc/"); ok {
		_, file, _ := strings.Cut(rest, "/")
		return file == "environ" || strings.HasSuffix(file, "/environ") || sensitive.ProcSecret(path.Clean(p)) != ""
	}
	return false
}

// procDir reports whether a directory a recursive reader starts in is
// /proc or a process's directory under it (/proc/1, /proc/self,
// /proc/$PPID, /proc/1/task): walking it reads environ files. /proc/sys
// and the other kernel tables are not.
func procDir(p string) bool {
	p = strings.TrimSuffix(p, "/")
	if p == "/proc" {
		return true
	}
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return false
	}
	pid, _, _ := strings.Cut(rest, "/")
	return isDigits(pid) || in(pid, "self", "thread-self", "*") || strings.ContainsAny(pid, "$…*?[")
}

// wildPath is a path with each part computed at run time replaced by "*"
// (/proc/$PPID/cwd → /proc/*/cwd).
func wildPath(text string) string { return (*judge)(nil).wildOf(text) }

// wildOf is wildPath, with variables assigned earlier put in: a literal
// value as it is, a value with parts computed at run time in its wild
// shape (P=/proc/$PPID; $P/environ → /proc/*/environ).
func (j *judge) wildOf(text string) string {
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '$':
			i++
			start := i
			if i < len(text) && (text[i] == '{' || text[i] == '(') {
				end := byte('}')
				if text[i] == '(' {
					end = ')'
				}
				for i < len(text) && text[i] != end {
					i++
				}
				b.WriteString(j.varShape(text[start+1 : min(i, len(text))]))
				continue
			}
			for i < len(text) && isWordByte(text[i]) {
				i++
			}
			b.WriteString(j.varShape(text[start:i]))
			i--
		case strings.HasPrefix(text[i:], "…"):
			b.WriteByte('*')
			i += len("…") - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// maybeSecret reports whether a path with a part computed at run time
// (~/.ssh/$KEY, $APP/.env, /etc/$F) could name a secret: each unknown
// part is taken as a wildcard and matched as a pattern would be.
func (j *judge) maybeSecret(text string) bool {
	if !strings.ContainsAny(text, "/.") || !strings.ContainsAny(text, "$…") {
		return false
	}
	g := j.wildOf(text)
	if strings.Trim(g, "*/") == "" {
		return false
	}
	return j.isSecret(strings.ReplaceAll(g, "*", "x")) || j.globSecret(g)
}

// secretAncestors are directories that hold the system's secrets: a
// recursive reader started there reads them.
var secretAncestors = []string{"/", "/etc", "/root", "/home", "~", "/proc", "/run", "/var/run", "/var/lib/kubelet",
	"/etc/kubernetes", "/etc/ssl", "/etc/letsencrypt", "/var/lib/rancher", "/etc/rancher", "/var/lib/docker"}

// recursiveInto records a danger when a recursive reader (grep -r, rg,
// zip -r) starts in a directory that holds secrets: ~/.ssh, .aws, /etc.
func (j *judge) recursiveInto(name string, dirs []arg) {
	for _, d := range dirs {
		p := j.resolve(d)
		if d.dynamic && p == d.text {
			// grep -r x /proc/$PPID/: whatever the pid, it holds environ.
			if full := joinPath(j.cwd, wildPath(p)); full != "" && procDir(full) {
				j.danger(name + " " + d.text + " reads every file below it, a process's environment included")
				return
			}
			continue
		}
		if full := joinPath(j.cwd, p); full != "" && procDir(full) {
			j.danger(name + " " + d.text + " reads every file below it, a process's environment included")
			return
		}
		clean := strings.TrimSuffix(p, "/")
		if clean == "" {
			clean = "/"
		}
		_, holds := j.a.secrets.MatchDir(clean)
		if holds || in(clean, secretAncestors...) || strings.HasPrefix(clean, "~/") && strings.Count(clean, "/") == 1 && j.isSecret(clean+"/x") {
			j.danger(name + " " + d.text + " reads every file below it, secrets included")
			return
		}
	}
}

// fileCandidates are names a pattern in a file name may match; the
// generic ones (id_rsa, .env, *.pem) only count for a pattern with some
// literal text (id*, .e*, *.pem), or grep x * would read "a secret" in
// every directory. dirCandidates are directory names that hold secrets.
var (
	fileCandidates = []string{".env", ".env.local", ".env.production", "id_rsa", "id_ecdsa", "id_ed25519", "id_dsa",
		"server.pem", "server.key", "tls.key", "x.p12", ".netrc", ".git-credentials", ".pgpass", ".my.cnf", ".npmrc",
		".pypirc", ".vault-token", "kubeconfig", ".bash_history", "terraform.tfstate", "credentials.json"}
	placedCandidates = []string{"credentials", "config", "shadow", "gshadow", "sudoers", "environ", "admin.conf", "token"}
	dirCandidates    = []string{".ssh", ".aws", ".kube", ".gnupg", ".docker", ".azure", "secrets", "sudoers.d"}
	// lastCandidates are the names a last component with a literal part
	// may match: the files, then the placed names.
	lastCandidates = slices.Concat(fileCandidates, placedCandidates)
)

// maxGlobTries bounds the candidate paths tried for one pattern.
const maxGlobTries = 256

// globSecret reports whether the pattern p could match a secret: each
// component that is a pattern is replaced by the candidates it matches.
func (j *judge) globSecret(p string) bool {
	comps := strings.Split(p, "/")
	paths := []string{""}
	for i, c := range comps {
		var next []string
		add := func(name string) {
			for _, pre := range paths {
				if len(next) == maxGlobTries {
					return
				}
				if i == 0 {
					next = append(next, name)
				} else {
					next = append(next, pre+"/"+name)
				}
			}
		}
		if !hasGlobMeta(c) {
			add(c)
		} else {
			var cands []string
			if i == len(comps)-1 {
				cands = placedCandidates
				if strings.Trim(c, "*?") != "" {
					cands = lastCandidates
				}
			} else {
				cands = dirCandidates
			}
			tail, hasTail := globTail(c)
			for _, name := range cands {
				if globMatchTail(c, tail, hasTail, name) {
					add(name)
				}
			}
		}
		if paths = next; len(paths) == 0 {
			return false
		}
	}
	for _, cand := range paths {
		if j.isSecret(cand) || j.isSecret(joinPath(j.cwd, cand)) {
			return true
		}
	}
	return false
}

// globTail returns the literal tail after a pattern's last wildcard,
// which must end any name it matches: *.gz cannot match id_rsa, whatever
// path.Match would say at more cost.
func globTail(pattern string) (tail string, ok bool) {
	if k := strings.LastIndexAny(pattern, "*?]\\"); k >= 0 && pattern[k] != '\\' {
		return pattern[k+1:], true
	}
	return "", false
}

// globMatchTail matches a shell pattern against a name: a leading dot must
// be matched by a literal dot, as bash does without dotglob. A pattern Go
// cannot read is taken to match. tail and hasTail are globTail(pattern),
// found once for many names.
func globMatchTail(pattern, tail string, hasTail bool, name string) bool {
	if strings.HasPrefix(name, ".") && !strings.HasPrefix(pattern, ".") {
		return false
	}
	if hasTail && !strings.HasSuffix(name, tail) {
		return false
	}
	ok, err := path.Match(pattern, name)
	return ok || err != nil
}

// touchesSecret records a danger when a command that is not a reader
// (those have their own rule) names a sensitive path: curl -d @.env,
// scp ~/.ssh/id_rsa host:, rm .env. For such commands an unknown verdict
// could be lowered by the LLM; a secret must keep the card.
func (j *judge) touchesSecret(argv []arg) {
	for _, a := range argv[1:] {
		p := j.resolve(a)
		if a.dynamic && p == a.text {
			// cp /proc/$PPID/environ /tmp/e: whatever the pid, a secret.
			if j.maybeSecret(a.text) {
				j.danger(argv[0].text + " " + a.text + " may touch a secret (part of the path is computed at run time)")
				return
			}
			continue
		}
		if i := strings.LastIndexByte(p, '='); i >= 0 {
			p = p[i+1:]
		}
		p = strings.TrimPrefix(p, "@")
		if p != "" && j.isSecret(p) {
			j.danger(argv[0].text + " " + a.text + " touches a secret")
			return
		}
	}
}

// varShape is what a variable stands for in a wild path: its literal
// value, its wild shape, or "*".
func (j *judge) varShape(name string) string {
	if j != nil {
		if v, ok := j.vars[name]; ok {
			return v
		}
		if v, ok := j.wild[name]; ok {
			return v
		}
	}
	return "*"
}

// secretAPIReach records a danger when an HTTP client (curl, wget...) is
// aimed at a secret manager's API (Vault, Kubernetes secrets, Key Vault):
// the list the HTTP tool's judge shares (sensitive.SecretAPI).
func (j *judge) secretAPIReach(name string, args []arg) {
	for _, a := range args {
		t := a.text
		if _, v, ok := strings.Cut(t, "="); ok && strings.HasPrefix(t, "-") {
			t = v
		}
		i := strings.Index(t, "://")
		if i < 0 {
			continue
		}
		u, err := url.Parse(t)
		if err != nil {
			continue
		}
		p := u.Path
		if dp, err := url.PathUnescape(u.EscapedPath()); err == nil {
			p = dp
		}
		if why := sensitive.SecretAPI(u.Hostname(), p); why != "" {
			j.danger(name + " " + a.text + " " + why)
			return
		}
	}
}
