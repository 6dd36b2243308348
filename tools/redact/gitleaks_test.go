package redact

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lucasjones/reggen"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
)

// gitleaksDetector is gitleaks' own detector on its default rule set, as
// the redactor used it before the table: text with no path, no decoding,
// "gitleaks:allow" ignored.
func gitleaksDetector(t *testing.T) *detect.Detector {
	t.Helper()
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		t.Fatal(err)
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		t.Fatal(err)
	}
	cfg, err := vc.Translate()
	if err != nil {
		t.Fatal(err)
	}
	d := detect.NewDetector(cfg)
	d.IgnoreGitleaksAllow = true
	return d
}

// parityCorpus is text for both detectors: for every rule of the table,
// strings its expression generates (fixed seeds, so the corpus is the same
// on every run), alone, after an assignment and inside a log line, then
// all of them as one document; and the output samples of tools/testdata.
func parityCorpus(t *testing.T) []string {
	t.Helper()
	var out, doc []string
	for i, r := range gitleaksRules {
		g, err := reggen.NewGenerator(r.regex)
		if err != nil {
			t.Fatalf("rule %s: %v", r.id, err)
		}
		for seed := range 2 {
			g.SetSeed(int64(i*10 + seed))
			s := g.Generate(6)
			out = append(out, s, "export "+strings.ToUpper(strings.ReplaceAll(r.id, "-", "_"))+"="+s,
				fmt.Sprintf("2026-04-18T10:00:0%dZ INFO request done token=%s status=200\nnext line", seed, s))
			doc = append(doc, s)
		}
	}
	out = append(out, strings.Join(doc, "\n"), allowlisted)
	files, _ := filepath.Glob("../testdata/*/*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err == nil {
			out = append(out, string(b))
		}
	}
	return out
}

// allowlisted are lines that gitleaks' allowlists let through (global ones:
// variables, templates, paths, a run of one letter; the generic rule's
// stopwords), beside ones they do not.
const allowlisted = `api_key = "${API_KEY}"
auth_token: $TOKEN
secret_key = "{{ .Values.secret }}"
access_token = /home/deploy/.config/token.txt
client_secret = "aaaaaaaaaaaaaaaaaaaa"
password = "abcdefghijklmnopqrstuvwxyz0123"
api_key = "%API_KEY%"
auth_key = "example-key-for-the-docs-0001"
db_token = "Xk39fjQ0zPq8wLm2Ty7vB5nR"
secret_key: 9f8e7d6c5b4a39281706f5e4d3c2b1a0
github_token = "ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
github_token = "ghp_R4nd0mT0k3nV4lu3Xk39fjQ0zPq8wLm2Ty7v"
slack_webhook = "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"
`

// TestDetectorMatchesGitleaks: the table and the detector find what
// gitleaks' own detector finds, the same secret under the same rule on the
// same line, on a corpus where nearly every rule fires.
func TestDetectorMatchesGitleaks(t *testing.T) {
	theirs := gitleaksDetector(t)
	ours := newDetector(gitleaksRules, gitleaksAllow)
	fired := map[string]bool{}
	for i, text := range parityCorpus(t) {
		var want, got []string
		for _, f := range theirs.DetectString(text) {
			want = append(want, fmt.Sprintf("%s line %d: %q in %q", f.RuleID, f.StartLine, f.Secret, f.Match))
		}
		for _, f := range ours.detect(text, asciiLower(text)) {
			got = append(got, fmt.Sprintf("%s line %d: %q in %q", f.rule, f.line, f.secret, f.match))
			fired[f.rule] = true
		}
		slices.Sort(want)
		slices.Sort(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("text #%d %.200q: findings differ (-gitleaks +ours):\n%s", i, text, diff)
		}
	}
	// the corpus must exercise the rules, or the comparison proves little
	if len(fired) < len(gitleaksRules)*9/10 {
		t.Errorf("only %d of %d rules fired on the corpus", len(fired), len(gitleaksRules))
	}
}

// TestRulesCompile: every expression of the generated table compiles, so
// the lazy compile (which panics on a broken source) never fails.
func TestRulesCompile(t *testing.T) {
	check := func(what, src string) {
		if _, err := regexp.Compile(src); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	for _, a := range gitleaksAllow {
		check("global allowlist", a.regex)
	}
	for _, r := range gitleaksRules {
		check(r.id, r.regex)
		for _, a := range r.allow {
			check(r.id+" allowlist", a.regex)
		}
	}
	if len(gitleaksRules) < 200 {
		t.Errorf("the table holds %d rules; gitleaks' default set has over 200", len(gitleaksRules))
	}
}
