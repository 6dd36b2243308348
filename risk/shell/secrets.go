package shell

import (
	"path"
	"strings"
)

// Secrets a shell reader can reach beyond the configured sensitive paths:
// process environments, shell and client histories (passwords typed on
// command lines), mounted Kubernetes and Docker secrets, cluster admin
// kubeconfigs, Terraform state and SSH host keys. And patterns: cat .e*
// reads .env as surely as cat .env does.

// historyFiles are the basenames of command histories.
var historyFiles = map[string]bool{
	".bash_history": true, ".zsh_history": true, ".sh_history": true, ".history": true,
	".psql_history": true, ".mysql_history": true, ".python_history": true, ".rediscli_history": true,
	".sqlite_history": true, ".node_repl_history": true, ".lesshst": true, ".mongosh_repl_history": true,
	".dbshell": true, "fish_history": true,
}

// shellSecret reports whether p is a secret the configured matcher may not
// know: see the file comment.
func shellSecret(p string) bool {
	base := path.Base(p)
	switch {
	case historyFiles[base]:
		return true
	case base == "terraform.tfstate" || base == "terraform.tfstate.backup" || strings.HasSuffix(base, ".tfstate"):
		return true
	case strings.HasPrefix(base, "ssh_host_") && strings.HasSuffix(base, "_key"):
		return true
	case base == "rclone.conf" || base == "opasswd":
		return true
	}
	clean := path.Clean("/" + p)
	for _, dir := range []string{"/run/secrets/", "/var/run/secrets/", "/etc/kubernetes/", "/.config/gh/"} {
		if i := strings.Index(clean, dir); i >= 0 && (i == 0 || dir[1] == '.') {
			if dir == "/etc/kubernetes/" && !strings.HasSuffix(base, ".conf") {
				continue // manifests and the pki directory's certificates are not secrets (keys are *.key)
			}
			return true
		}
	}
	if rest, ok := strings.CutPrefix(p, "/proc/"); ok {
		_, file, _ := strings.Cut(rest, "/")
		return file == "environ"
	}
	return false
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
					cands = append(append([]string{}, fileCandidates...), placedCandidates...)
				}
			} else {
				cands = dirCandidates
			}
			for _, name := range cands {
				if globMatch(c, name) {
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

// globMatch matches a shell pattern against a name: a leading dot must be
// matched by a literal dot, as bash does without dotglob. A pattern Go
// cannot read is taken to match.
func globMatch(pattern, name string) bool {
	if strings.HasPrefix(name, ".") && !strings.HasPrefix(pattern, ".") {
		return false
	}
	ok, err := path.Match(pattern, name)
	return ok || err != nil
}
