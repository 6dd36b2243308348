package sensitive

import "testing"

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
