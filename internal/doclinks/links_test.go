package doclinks

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// link finds a Markdown link's target: [text](target).
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// anchor is GitHub's id for a heading: lower case, punctuation dropped,
// spaces to hyphens.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the ids of a Markdown file's headings (outside code).
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	fence := false
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "```") {
			fence = !fence
		}
		if !fence && strings.HasPrefix(l, "#") {
			out[anchor(strings.TrimLeft(l, "#"))] = true
		}
	}
	return out
}

// TestDocLinks: every relative link of the README and docs/ reaches a file
// of the repository, and every anchor a heading of it.
func TestDocLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append(files, filepath.Join(root, "README.md"))
	if len(files) < 2 {
		t.Fatal("no docs/*.md beside the README")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fence := false
		for n, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "```") {
				fence = !fence
			}
			if fence {
				continue
			}
			for _, m := range link.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, frag, _ := strings.Cut(target, "#")
				dest := f
				if path != "" {
					dest = filepath.Join(filepath.Dir(f), path)
				}
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s:%d: link %q: no file %s", f, n+1, target, dest)
					continue
				}
				if frag != "" && strings.HasSuffix(dest, ".md") && !anchors(t, dest)[frag] {
					t.Errorf("%s:%d: link %q: %s has no heading #%s", f, n+1, target, dest, frag)
				}
			}
		}
	}
}

// TestReadmeIsAFrontDoor: the README stays a front door; guides and
// reference live in docs/.
func TestReadmeIsAFrontDoor(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 12<<10 {
		t.Errorf("README.md is %d bytes; keep it under 12 KiB and move the detail to docs/", len(b))
	}
	for _, want := range []string{"go run ./cmd/countersign", "make test"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("README.md does not show %q", want)
		}
	}
}
