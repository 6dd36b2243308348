package filetool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/countersign/countersign/risk/sensitive"
	"github.com/countersign/countersign/tools"
)

// A symbolic link inside the root must not reach a secret under a
// harmless name: the call was judged for the name it gave.
func TestLinksToSecretsAreRefused(t *testing.T) {
	extra, err := sensitive.New([]string{"*.vault"})
	if err != nil {
		t.Fatal(err)
	}
	tool := newTool(t, func(c *Config) { c.Sensitive = extra })
	root := tool.cfg.Root
	write(t, filepath.Join(root, ".env"), "API_TOKEN=hunter2\n")
	write(t, filepath.Join(root, "deploy", "prod.vault"), "vault-token\n")
	write(t, filepath.Join(root, "notes.txt"), "plain\n")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(".env", filepath.Join(root, "settings.txt")))
	must(os.Symlink("deploy", filepath.Join(root, "d")))
	must(os.Symlink("d/prod.vault", filepath.Join(root, "chain")))
	must(os.MkdirAll(filepath.Join(root, "sub"), 0o755))
	must(os.Symlink("../.env", filepath.Join(root, "sub", "cfg")))
	must(os.Symlink("notes.txt", filepath.Join(root, "readme")))
	must(os.Symlink("loop2", filepath.Join(root, "loop1")))
	must(os.Symlink("loop1", filepath.Join(root, "loop2")))

	tests := []struct {
		name, args string
		denied     bool
	}{
		{"link to .env", `{"operation":"read","path":"settings.txt"}`, true},
		{"link through a linked dir", `{"operation":"read","path":"d/prod.vault"}`, false}, // the name itself is sensitive: judged as such
		{"chain of links", `{"operation":"read","path":"chain"}`, true},
		{"link climbing back up", `{"operation":"read","path":"sub/cfg"}`, true},
		{"stat through a link", `{"operation":"stat","path":"settings.txt"}`, true},
		{"write through a link", `{"operation":"write","path":"settings.txt","content":"x"}`, true},
		{"link to a plain file", `{"operation":"read","path":"readme"}`, false},
		{"the secret by its own name", `{"operation":"read","path":".env"}`, false},
		{"link loop", `{"operation":"read","path":"loop1"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, tool, tt.args)
			if got := r.Status == tools.StatusDenied; got != tt.denied {
				t.Fatalf("denied = %v, want %v: %s", got, tt.denied, r.JSON())
			}
			if tt.denied {
				if r.Executed || !strings.Contains(r.Error, "symbolic link") {
					t.Errorf("refusal %s", r.JSON())
				}
				if strings.Contains(r.JSON(), "hunter2") || strings.Contains(r.JSON(), "vault-token") {
					t.Errorf("the refusal shows the secret: %s", r.JSON())
				}
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(root, ".env")); string(b) != "API_TOKEN=hunter2\n" {
		t.Errorf(".env changed through its link: %q", b)
	}
}
