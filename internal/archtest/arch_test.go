package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/countersign/countersign"

// pkg is one package directory of the module with the imports of its
// non-test files.
type pkg struct {
	path    string // import path
	doc     bool   // some file carries a package doc comment
	imports map[string]bool
}

func loadPackages(t *testing.T) []pkg {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found at %s: %v", root, err)
	}
	byDir := map[string]*pkg{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		dir := filepath.Dir(p)
		rel, _ := filepath.Rel(root, dir)
		ip := module
		if rel != "." {
			ip += "/" + filepath.ToSlash(rel)
		}
		pk := byDir[dir]
		if pk == nil {
			pk = &pkg{path: ip, imports: map[string]bool{}}
			byDir[dir] = pk
		}
		if f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != "" {
			pk.doc = true
		}
		for _, im := range f.Imports {
			v, _ := strconv.Unquote(im.Path.Value)
			pk.imports[v] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []pkg
	for _, p := range byDir {
		out = append(out, *p)
	}
	if len(out) < 5 {
		t.Fatalf("found only %d packages under %s; the walk is broken", len(out), root)
	}
	return out
}

func TestEveryPackageHasADocComment(t *testing.T) {
	for _, p := range loadPackages(t) {
		if !p.doc {
			t.Errorf("package %s has no doc comment saying what it owns", p.path)
		}
	}
}

// rule forbids packages under from importing anything with one of the
// prefixes in deny.
type rule struct {
	under string
	deny  []string
	why   string
}

var rules = []rule{
	{"risk", []string{module + "/tools", module + "/agent", module + "/bot", module + "/adapters",
		"github.com/redis/", "github.com/sashabaranov/", "github.com/slack-go/", "github.com/bwmarrin/", "github.com/go-sql-driver/"},
		"risk judges calls and knows nothing of tools, chat, Redis, MySQL or the LLM"},
	{"tools", []string{module + "/agent", module + "/bot", module + "/adapters",
		"github.com/redis/", "github.com/sashabaranov/", "github.com/slack-go/", "github.com/bwmarrin/"},
		"tools run operations and know nothing of chat, Redis or the LLM"},
	{"agent", []string{module + "/bot", module + "/adapters", "github.com/slack-go/", "github.com/bwmarrin/"},
		"the agent knows nothing of chat platforms"},
	{"adapters", []string{module + "/agent", module + "/bot", module + "/risk", module + "/tools",
		"github.com/redis/", "github.com/sashabaranov/"},
		"adapters import only the adapter contract and their own SDK"},
	{"bot", []string{module + "/cmd"}, "nothing points back up to cmd"},
}

func TestDependencyDirection(t *testing.T) {
	for _, p := range loadPackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.path, module), "/")
		for _, r := range rules {
			if rel != r.under && !strings.HasPrefix(rel, r.under+"/") {
				continue
			}
			for im := range p.imports {
				for _, d := range r.deny {
					if strings.HasPrefix(im, d) {
						t.Errorf("%s imports %s: %s", p.path, im, r.why)
					}
				}
			}
		}
		// Only adapters/slack may import slack-go, only adapters/discord discordgo.
		for im := range p.imports {
			if strings.HasPrefix(im, "github.com/slack-go/") && !strings.HasPrefix(rel, "adapters/slack") {
				t.Errorf("%s imports %s: only adapters/slack may", p.path, im)
			}
			if strings.HasPrefix(im, "github.com/bwmarrin/") && !strings.HasPrefix(rel, "adapters/discord") {
				t.Errorf("%s imports %s: only adapters/discord may", p.path, im)
			}
		}
	}
}
