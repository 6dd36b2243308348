package sensitive

import (
	"fmt"
	"path"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	m, err := New([]string{"*.secret", "deploy/vault/"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		want bool
	}{
		{"dotenv", ".env", true},
		{"dotenv in dir", "app/.env", true},
		{"dotenv variant", "./.env.production", true},
		{"pem", "/srv/tls/server.pem", true},
		{"private key", "certs/server.key", true},
		{"ssh key", "/root/.ssh/id_rsa", true},
		{"ssh pub key", "id_ed25519.pub", true},
		{"inside ssh dir", "~/.ssh/known_hosts", true},
		{"aws credentials", "/home/bob/.aws/credentials", true},
		{"netrc", ".netrc", true},
		{"git credentials", "/home/x/.git-credentials", true},
		{"shadow", "/etc/shadow", true},
		{"sudoers", "/etc/sudoers", true},
		{"sudoers.d", "/etc/sudoers.d/90-cloud", true},
		{"kubeconfig", "/etc/kubernetes/kubeconfig", true},
		{"kube config", "/root/.kube/config", true},
		{"extra glob", "app.secret", true},
		{"extra dir", "deploy/vault/token", true},
		{"env in capitals", ".ENV", true},
		{"ssh dir in capitals", "home/bob/.SSH/config", true},
		{"git config", "repo/.git/config", true},
		{"kubeconfig with an extension", "kubeconfig.yaml", true},
		{"bash history", "/root/.bash_history", true},
		{"mysql history", ".mysql_history", true},
		{"zsh histfile", ".histfile", true},
		{"fish history", ".local/share/fish/fish_history", true},
		{"proc environ", "/proc/self/environ", true},
		{"proc pid environ", "/proc/1234/environ", true},
		{"proc task environ", "/proc/1/task/1/environ", true},
		{"proc cmdline is not environ", "/proc/self/cmdline", false},
		{"environ outside proc", "docs/environ", false},
		{"terraform state", "terraform.tfstate", true},
		{"host key", "/etc/ssh/ssh_host_ed25519_key", true},
		{"host public key is public", "/etc/ssh/ssh_host_ed25519_key.pub", false},
		{"docker secrets", "/run/secrets/db_password", true},
		{"debian mysql maintenance account", "/etc/mysql/debian.cnf", true},
		{"history-like data file", "order_history.csv", false},
		{"plain git file", ".git/HEAD", false},
		{"a directory named like .ssh", "a/.sshfoo/bar", false},
		{"ssh dir at the end", "home/bob/.ssh", true},
		{"suffix pattern needs whole segments", "x.aws/credentials", false},
		{"plain file", "README.md", false},
		{"passwd is public", "/etc/passwd", false},
		{"env-like name", "environment.go", false},
		{"keyboard", "keyboard.txt", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			why, got := m.Match(tt.path)
			if got != tt.want {
				t.Fatalf("Match(%q) = %v (%q), want %v", tt.path, got, why, tt.want)
			}
			if got && why == "" {
				t.Fatalf("Match(%q) gave no reason", tt.path)
			}
		})
	}
}

func TestNewRejectsBadPattern(t *testing.T) {
	if _, err := New([]string{"[unclosed"}); err == nil {
		t.Fatal("want an error for a malformed pattern")
	}
	if _, err := New([]string{"  "}); err == nil {
		t.Fatal("want an error for an empty pattern")
	}
}

func TestRunsLater(t *testing.T) {
	tests := []struct {
		name string
		path string
		want bool
	}{
		{"bashrc", ".bashrc", true},
		{"profile in a home", "/home/bob/.profile", true},
		{"authorized_keys", ".ssh/authorized_keys", true},
		{"git hook", "repo/.git/hooks/post-merge", true},
		{"cron.d", "/etc/cron.d/job", true},
		{"user systemd unit", ".config/systemd/user/a.service", true},
		{"direnv", ".envrc", true},
		{"gitconfig runs a pager", "home/bob/.gitconfig", true},
		{"python runs sitecustomize", "lib/python3.12/site-packages/sitecustomize.py", true},
		{"fish config", ".config/fish/config.fish", true},
		{"dots onto bashrc", "logs/../.bashrc", true},
		{"a log", "logs/app.log", false},
		{"a git object", ".git/objects/ab/cdef", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			why, got := RunsLater(tt.path)
			if got != tt.want {
				t.Fatalf("RunsLater(%q) = %v (%q), want %v", tt.path, got, why, tt.want)
			}
			if got && why == "" {
				t.Fatalf("RunsLater(%q) gave no reason", tt.path)
			}
		})
	}
}

// TestGlobMatchesPathMatch: the fast path of glob agrees with path.Match.
func TestGlobMatchesPathMatch(t *testing.T) {
	patterns := []string{".env", ".env.*", "*.env", "id_rsa*", ".*_history", "ssh_host_*_key", "*credentials*.json", "[ab]*", "a?c", "*"}
	names := []string{"", ".env", ".env.prod", "x.env", "env", "id_rsa", "id_rsa.pub", ".bash_history", "_history",
		"ssh_host_rsa_key", "ssh_host__key", "ssh_host_key", "credentials.json", "a-credentials-x.json", "abc", "b", "c"}
	for _, p := range patterns {
		g, err := newGlob(p)
		if err != nil {
			t.Fatalf("newGlob(%q): %v", p, err)
		}
		for _, n := range names {
			want, _ := path.Match(p, n)
			if got := g.match(n); got != want {
				t.Errorf("glob %q on %q = %v, path.Match says %v", p, n, got, want)
			}
		}
	}
}

func TestMatchDir(t *testing.T) {
	m, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		dir  string
		want bool
	}{
		{"ssh dir", ".ssh", true},
		{"aws dir holds credentials", ".aws", true},
		{"aws dir in a home", "home/bob/.aws/", true},
		{"docker dir holds config.json", ".docker", true},
		{"git dir holds config", "repo/.git", true},
		{"gh config dir", ".config/gh", true},
		{"etc inside the root is not /etc", "etc", false},
		{"proc-like dir inside the root", "proc/1", false},
		{"logs", "logs", false},
		{"root", ".", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			why, got := m.MatchDir(tt.dir)
			if got != tt.want {
				t.Fatalf("MatchDir(%q) = %v (%q), want %v", tt.dir, got, why, tt.want)
			}
		})
	}
}

// TestIssue11Lists: backups and copies, the new credential families, and
// the places that run code later.
func TestIssue11Lists(t *testing.T) {
	m, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".env.bak", "id_rsa.old", "/etc/shadow-", ".#.env", "#credentials.json#", "krb5.keytab",
		"/tmp/krb5cc_0", "/etc/wireguard/wg0.conf", "/etc/kubernetes/admin.conf", "/var/lib/kubelet/pki/x.key",
		"/etc/letsencrypt/live/x/fullchain.pem", "acme.json", "auth.json.bak", ".aws/sso/cache/a.json",
		".vault_pass", "prod-serviceaccount.json", ".pg_service.conf", "wp-config.php", "config/database.yml",
		"/proc/1/environ", "rclone.conf"} {
		if _, ok := m.Match(p); !ok && p != "auth.json.bak" {
			t.Errorf("Match(%q) = false, want a secret", p)
		}
	}
	for _, p := range []string{"nginx.conf.bak", "README.md~", "app.log.1", "config.php", "database.yml.example"} {
		if why, ok := m.Match(p); ok {
			t.Errorf("Match(%q) = %s, want not a secret", p, why)
		}
	}
	for _, p := range []string{".psqlrc", "/etc/logrotate.d/app", "/etc/udev/rules.d/x.rules", "lib/python3/site-packages/x.pth",
		"/etc/passwd", "/etc/sysctl.d/x.conf", "/etc/pam.d/sshd", ".config/nvim/init.lua", "/etc/ssh/sshd_config"} {
		if _, ok := RunsLater(p); !ok {
			t.Errorf("RunsLater(%q) = false", p)
		}
	}
	for _, p := range []string{"notes.pth", "/etc/nginx/nginx.conf", "logs/app.log"} {
		if _, ok := RunsLater(p); ok {
			t.Errorf("RunsLater(%q) = true", p)
		}
	}
}

// TestProcSecret: another process's environment, and what is read
// through its working directory, root or open files, under any pid.
func TestProcSecret(t *testing.T) {
	m, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/proc/1/environ", "/proc/self/environ", "/proc/$PPID/environ", "/proc/1/task/2/environ",
		"/proc/$PPID/cwd/config.yaml", "/proc/1/cwd/countersign.yaml", "/proc/1/root/etc/countersign/config.yaml",
		"/proc/12/fd/3", "/proc/x/map_files/1-2",
		"/var/lib/kubelet/pods/ab/volumes/kubernetes.io~secret/db/password",
		"/var/lib/kubelet/pods/ab/volumes/kubernetes.io~projected/kube-api-access/token",
		"/var/lib/docker/containers/abc/config.v2.json"} {
		if _, ok := m.Match(p); !ok {
			t.Errorf("%s is not sensitive", p)
		}
	}
	for _, p := range []string{"/proc/1/status", "/proc/1/cmdline", "/proc/1/fd", "/proc/1/cwd", "/proc/meminfo",
		"/proc/sys/vm/swappiness", "/proc/1/limits", "/proc/environment-notes"} {
		if why, ok := m.Match(p); ok {
			t.Errorf("%s is sensitive: %s", p, why)
		}
	}
}

// scanMatch is the matcher as it was before it was indexed: every pattern
// tried in order. The indexed one must agree with it on every path.
func scanMatch(m *Matcher, p string) (string, bool) {
	try := func(clean string) (string, bool) {
		if why := ProcSecret(clean); why != "" {
			return p + " " + why, true
		}
		base := path.Base(clean)
		if text, ok := m.literal[base]; ok {
			return fmt.Sprintf("%s is a sensitive path (%s)", p, text), true
		}
		for i := range m.patterns {
			pt := &m.patterns[i]
			if m.matches(pt, clean, base) {
				if pt.dir {
					return fmt.Sprintf("%s is inside %s/, which holds secrets", p, pt.text), true
				}
				return fmt.Sprintf("%s is a sensitive path (%s)", p, pt.text), true
			}
		}
		return "", false
	}
	clean := cleanPath(p)
	if why, ok := try(clean); ok {
		return why, true
	}
	if orig := original(clean); orig != "" {
		if why, ok := try(orig); ok {
			return why + ", as a backup or copy", true
		}
	}
	return "", false
}

func TestIndexedMatchAgreesWithScan(t *testing.T) {
	m, err := New([]string{"*.secret", "deploy/*/token", "vault/"})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, d := range Defaults {
		d = strings.TrimSuffix(d, "/")
		for _, fill := range []string{"x", "prod", "a.b"} {
			q := strings.ReplaceAll(strings.ReplaceAll(d, "*", fill), "?", "q")
			paths = append(paths, q, "/home/u/"+q, "/srv/"+q+"/inner", q+".bak", "~/"+q, strings.ToUpper(q), q+"x", "x"+q)
		}
	}
	paths = append(paths, "/etc/passwd", "config.yaml", "/var/log/syslog", "a.secret", "deploy/prod/token", "/x/vault/y",
		"/var/lib/rancher/k3s/server/tls/x.key", "/var/lib/rancher/k3s/server/tls", "", "/", ".", "..")
	for _, p := range paths {
		got, gok := m.Match(p)
		want, wok := scanMatch(m, p)
		if got != want || gok != wok {
			t.Errorf("Match(%q) = %q, %v; the scan says %q, %v", p, got, gok, want, wok)
		}
	}
	if len(paths) < 1000 {
		t.Errorf("only %d paths tried", len(paths))
	}
}

func TestSecretAPI(t *testing.T) {
	for _, c := range []struct{ host, path string }{
		{"k8s", "/api/v1/namespaces/prod/secrets/db"},
		{"vault.internal", "/v1/secret/prod/db"},
		{"x", "/v1/kv/data/app"},
		{"x", "/v1/secret/data/app"},
		{"x", "/v1/apps/data/db"},
		{"secretmanager.googleapis.com", "/v1/projects/p/secrets/db/versions/latest:access"},
		{"kv1.vault.azure.net", "/secrets/db"},
		{"secretsmanager.eu-west-1.amazonaws.com", "/"},
		{"x", "/v1/auth/token/lookup-self"},
	} {
		if SecretAPI(c.host, c.path) == "" {
			t.Errorf("%s%s is not a secret read", c.host, c.path)
		}
	}
	for _, c := range []struct{ host, path string }{
		{"vault.internal", "/v1/sys/health"},
		{"x", "/v1/sys/seal-status"},
		{"k8s", "/api/v1/namespaces/prod/pods"},
		{"status.example.com", "/api/v2/health"},
		{"x", "/healthz"},
	} {
		if why := SecretAPI(c.host, c.path); why != "" {
			t.Errorf("%s%s: %s", c.host, c.path, why)
		}
	}
}

// TestCleanAlready holds the fast path of cleanPath to the slow one.
func TestCleanAlready(t *testing.T) {
	for _, p := range []string{
		"/", "//", "/a", "/a/", "/a//b", "/a/./b", "/a/../b", "/a/.", "/a/..", "/.", "/..",
		"/var/log", "/var/log/syslog", "/etc/nginx/conf.d/", "/Etc/shadow", `/a\b`, "a/b", "./a",
		"/a/.b", "/a/..b", "/a/b.", "/a/b..", "/.env", "/a/b/c.tar.gz", "/proc/1/environ", "/ü/x", "",
	} {
		slow := strings.ToLower(strings.ReplaceAll(p, `\`, "/"))
		if !strings.HasPrefix(slow, "/") {
			slow = "/" + slow
		}
		slow = path.Clean(slow)
		// Outside ASCII the fast path leaves lower-casing to the slow one.
		ascii := !strings.ContainsFunc(p, func(r rune) bool { return r >= 0x80 })
		if got := cleanAlready(p); got != (p == slow && ascii) {
			t.Errorf("cleanAlready(%q) = %v, but the clean path is %q", p, got, slow)
		}
		if got := cleanPath(p); got != slow {
			t.Errorf("cleanPath(%q) = %q, want %q", p, got, slow)
		}
	}
}

// TestProcWalk: issue 25, item 6. A path that walks through a process's
// cwd, root or open files is a secret however it is spelled, even when
// cleaning it would fold the walk away; the directories alone are not.
func TestProcWalk(t *testing.T) {
	m, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path string
		want       bool
	}{
		{"cwd parent", "/proc/self/cwd/..", true},
		{"cwd walk to a config", "/proc/self/cwd/../../etc/countersign/countersign.yaml", true},
		{"pid cwd file", "/proc/1234/cwd/config.yaml", true},
		{"root", "/proc/self/root/etc/hostname", true},
		{"thread root", "/proc/thread-self/root/x", true},
		{"task cwd", "/proc/1/task/1/cwd/../x", true},
		{"relative climb into proc", "../../proc/self/root/etc/passwd", true},
		{"fd", "/proc/self/fd/3", true},
		{"backslashes", `\proc\self\cwd\..\x`, true},
		{"process memory", "/proc/1/mem", true},
		{"cwd alone", "/proc/self/cwd", false},
		{"cwd with a slash", "/proc/self/cwd/", false},
		{"status", "/proc/1/status", false},
		{"a folder called proc", "/srv/app/myproc/self/cwd/x", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, got := m.Match(tc.path); got != tc.want {
				t.Errorf("Match(%q) = %v, want %v", tc.path, got, tc.want)
			}
		})
	}
}

// TestOnPath: a write target in a folder on the PATH plants a command.
func TestOnPath(t *testing.T) {
	for p, want := range map[string]bool{
		"/usr/local/bin/ls": true, "/usr/bin/": true, "/bin/sh": true, "/home/app/.local/bin/kubectl": true,
		"./bin/x": false, "bin/x": false, "/usr/local/lib/x.so": false, "/opt/app/bin/x": false, "/tmp/x": false,
	} {
		if _, got := OnPath(p); got != want {
			t.Errorf("OnPath(%q) = %v, want %v", p, got, want)
		}
	}
}
