package risk

import (
	"encoding/json"
	"testing"
)

// TestShellAndFileAgree (issue 11): the shell and the file tool judge
// every secret path and every file that runs later alike, since both use
// the one list in risk/sensitive.
func TestShellAndFileAgree(t *testing.T) {
	p := mustPolicy(t, Config{})
	secrets := []string{".env.bak", "config/database.yml", "wp-config.php", "etc/wireguard/wg0.conf",
		"client.ovpn", "krb5.keytab", ".aws/sso/cache/x.json", ".vault_pass", "sa-key.json",
		"prod-service_account.json", ".pg_service.conf", "acme.json", ".config/containers/auth.json",
		"rclone.conf", ".dbshell", "id_rsa~", ".#.env", ".kube/config.orig"}
	for _, path := range secrets {
		file := p.Assess(Call{Tool: ToolFile, Args: mustJSON(t, map[string]string{"operation": "read", "path": path})})
		sh := p.Assess(Call{Tool: ToolCommand, Args: mustJSON(t, map[string]string{"command": "cat " + path})})
		if file.Rule != RuleDanger || sh.Rule != RuleDanger {
			t.Errorf("%s: file read %s/%s, shell cat %s/%s; want both danger", path, file.Decision, file.Rule, sh.Decision, sh.Rule)
		}
	}
	later := []string{".psqlrc", ".gdbinit", "venv/lib/python3.12/site-packages/evil.pth", ".config/nvim/init.lua",
		".forward", ".ssh/rc"}
	for _, path := range later {
		file := p.Assess(Call{Tool: ToolFile, Args: mustJSON(t, map[string]string{"operation": "write", "path": path, "content": "x"})})
		sh := p.Assess(Call{Tool: ToolCommand, Args: mustJSON(t, map[string]string{"command": "echo x > " + path})})
		if file.Rule != RuleDanger || sh.Rule != RuleDanger {
			t.Errorf("%s: file write %s/%s, shell redirect %s/%s; want both danger", path, file.Decision, file.Rule, sh.Decision, sh.Rule)
		}
	}
	for _, path := range []string{"/etc/logrotate.d/app", "/etc/udev/rules.d/99-x.rules", "/etc/modprobe.d/x.conf",
		"/etc/sysctl.d/99-core.conf", "/etc/pam.d/sshd", "/etc/passwd", "/etc/apt/apt.conf.d/99x", "/var/spool/at/a0001"} {
		sh := p.Assess(Call{Tool: ToolCommand, Args: mustJSON(t, map[string]string{"command": "echo x > " + path})})
		if sh.Rule != RuleDanger {
			t.Errorf("echo x > %s = %s/%s, want danger", path, sh.Decision, sh.Rule)
		}
	}
}

// TestSecretAPIs: reading a secret through a manager's HTTP API is a
// secret read.
func TestSecretAPIs(t *testing.T) {
	p := mustPolicy(t, Config{})
	runCases(t, p, []policyCase{
		{name: "kubernetes secret", tool: ToolHTTP, args: `{"url":"https://k8s.internal:6443/api/v1/namespaces/prod/secrets/db"}`, want: danger},
		{name: "vault kv v2", tool: ToolHTTP, args: `{"url":"https://vault.internal:8200/v1/secret/data/prod/db"}`, want: danger},
		{name: "azure key vault", tool: ToolHTTP, args: `{"url":"https://prod.vault.azure.net/secrets/db?api-version=7.4"}`, want: danger},
		{name: "a plain API stays a read", tool: ToolHTTP, args: `{"url":"https://api.example.com/v1/orders/7"}`, want: autoWL},
		{name: "kubernetes pods stay a read", tool: ToolHTTP, args: `{"url":"https://k8s.internal:6443/api/v1/namespaces/prod/pods"}`, want: autoWL},
	})
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
