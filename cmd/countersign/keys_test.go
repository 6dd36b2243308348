package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/countersign/countersign/configs"
)

// keyInText finds what looks like a configuration key path in a sentence:
// a top-level section and at least one key under it ("agent.approval_ttl",
// "bot.channels.*.quiet").
var keyInText = regexp.MustCompile(`\b(risk|llm|agent|store|audit|tools|bot|terminal|log|slack|discord|pagerduty|opsgenie)((?:\.(?:[a-z][a-z0-9_]*|\*))+)`)

// hostLike matches a host name that starts like a section: "discord.com".
var hostLike = regexp.MustCompile(`\.(com|org|net|io|gg|dev|app|test|example|internal|local)(\.|$)`)

// TestMessagesNameRealKeys: every string in the code that names a
// configuration key ("set llm.api_key") names one the configuration has,
// as configs/countersign.example.yaml documents it, so no message sends an
// operator looking for a key that does not exist.
func TestMessagesNameRealKeys(t *testing.T) {
	var doc yaml.Node
	if err := yaml.Unmarshal(configs.Example, &doc); err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	collectKeys(&doc, "", have)

	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name != ".." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, m := range keyInText.FindAllStringSubmatch(s, -1) {
				key := strings.TrimSuffix(m[0], ".")
				if strings.HasSuffix(key, ".go") || strings.HasSuffix(key, ".yaml") || hostLike.MatchString(key) {
					continue // a file or host name
				}
				checked++
				if !have[wildcard(key, have)] {
					t.Errorf("%s: %q names %s, which the configuration does not have", fset.Position(lit.Pos()), oneLineOf(s), key)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d key names checked", checked)
	if checked < 20 {
		t.Errorf("only %d key names found in messages: is the pattern still right?", checked)
	}
}

// wildcard rewrites a key path whose map entries are named
// ("bot.channels.C1.quiet", "tools.execute_sql.connections.orders") into
// the form collectKeys records ("bot.channels.*.quiet"), when the named
// form is not documented as it is.
func wildcard(key string, have map[string]bool) string {
	if have[key] {
		return key
	}
	parts := strings.Split(key, ".")
	for i := 1; i < len(parts); i++ {
		try := strings.Join(append(append([]string{}, parts[:i]...), append([]string{"*"}, parts[i+1:]...)...), ".")
		if have[try] {
			return try
		}
	}
	return key
}

func oneLineOf(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return s
}
