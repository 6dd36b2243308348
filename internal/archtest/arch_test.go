package archtest

import (
	"bytes"
	"encoding/json"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// rule forbids packages under from depending, directly or through any
// chain of imports, on anything with one of the prefixes in deny.
type rule struct {
	under string
	deny  []string
	why   string
}

var (
	chatSDKs = []string{"github.com/slack-go/", "github.com/bwmarrin/"}
	redisLib = "github.com/redis/"
	modelLib = "github.com/sashabaranov/"
	mysqlLib = "github.com/go-sql-driver/"
	// metricsLib is imported only by cmd/internal/ops (the metrics
	// decorators and the health server); cmd/countersign reaches it there.
	metricsLib = "github.com/prometheus/"
)

var rules = []rule{
	{"risk", append([]string{module + "/tools", module + "/agent", module + "/bot", module + "/adapters", module + "/approval",
		redisLib, modelLib, mysqlLib}, chatSDKs...),
		"risk judges calls and knows nothing of tools, chat, Redis, MySQL or the LLM"},
	{"tools", append([]string{module + "/agent", module + "/bot", module + "/adapters", module + "/approval",
		redisLib, modelLib}, chatSDKs...),
		"tools run operations and know nothing of chat, Redis or the LLM"},
	{"approval", append([]string{module + "/agent", module + "/bot", module + "/adapters", modelLib}, chatSDKs...),
		"the shared state knows nothing of the agent, the chat or the LLM"},
	{"agent", append([]string{module + "/bot", module + "/adapters"}, chatSDKs...),
		"the agent knows nothing of chat platforms"},
	{"adapters", []string{module + "/agent", module + "/bot", module + "/risk", module + "/tools", module + "/approval",
		redisLib, modelLib},
		"adapters import only the adapter contract and their own SDK"},
	{"adapters/slack", []string{"github.com/bwmarrin/"}, "one platform's adapter knows nothing of another's SDK"},
	{"adapters/discord", []string{"github.com/slack-go/"}, "one platform's adapter knows nothing of another's SDK"},
	{"bot", append([]string{module + "/cmd"}, chatSDKs...), "nothing points back up to cmd, and the bot never sees a chat SDK"},
	{"cmd", []string{"github.com/zricethezav/", "github.com/spf13/viper"},
		"the binary carries gitleaks' rules as a table (tools/redact), not gitleaks and the loaders of its command line"},
	{"cmd/countersign", []string{"google.golang.org/grpc", "github.com/grpc-ecosystem/", "google.golang.org/genproto/", "go.opentelemetry.io/proto/otlp/collector/"},
		"traces go over OTLP/HTTP with our own client (cmd/internal/telemetry), without gRPC; only otlptest, a test's receiver, may reach them"},
}

// listed is one package as go list reports it.
type listed struct {
	ImportPath string
	Imports    []string
	Deps       []string // every package it depends on, transitively
}

// listPackages asks the go command for the module's packages with their
// transitive dependencies (test files not included).
func listPackages(t *testing.T) []listed {
	t.Helper()
	// The go command that runs this test is first on PATH under go test.
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("decode go list: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 5 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	// The rules are only as good as the dependency lists: main reaches
	// the Redis client only through the store, two steps away.
	for _, p := range pkgs {
		if p.ImportPath == module+"/cmd/countersign" && !slices.ContainsFunc(p.Deps, func(d string) bool { return strings.HasPrefix(d, redisLib) }) {
			t.Fatalf("go list gave %s no transitive dependency on %s; the checks below would see nothing", p.ImportPath, redisLib)
		}
	}
	return pkgs
}

func TestDependencyDirection(t *testing.T) {
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		for _, r := range rules {
			if rel != r.under && !strings.HasPrefix(rel, r.under+"/") {
				continue
			}
			for _, dep := range p.Deps {
				for _, d := range r.deny {
					if strings.HasPrefix(dep, d) {
						t.Errorf("%s depends on %s: %s", p.ImportPath, dep, r.why)
						break
					}
				}
			}
		}
		// Metrics are measured by decorators built in cmd: the core never
		// reaches the Prometheus client, not even through another package.
		if !strings.HasPrefix(rel, "cmd/") {
			for _, dep := range p.Deps {
				if strings.HasPrefix(dep, metricsLib) {
					t.Errorf("%s depends on %s: only cmd may reach the metrics client", p.ImportPath, dep)
					break
				}
			}
		}
		// Only adapters/slack may import slack-go, only adapters/discord
		// discordgo, and only cmd/internal/ops the metrics client.
		for _, im := range p.Imports {
			if strings.HasPrefix(im, metricsLib) && rel != "cmd/internal/ops" {
				t.Errorf("%s imports %s: only cmd/internal/ops may", p.ImportPath, im)
			}
			if strings.HasPrefix(im, "github.com/slack-go/") && !strings.HasPrefix(rel, "adapters/slack") {
				t.Errorf("%s imports %s: only adapters/slack may", p.ImportPath, im)
			}
			if strings.HasPrefix(im, "github.com/bwmarrin/") && !strings.HasPrefix(rel, "adapters/discord") {
				t.Errorf("%s imports %s: only adapters/discord may", p.ImportPath, im)
			}
		}
	}
}
