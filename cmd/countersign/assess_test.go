package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type answer struct {
	Decision string   `json:"decision"`
	Risk     string   `json:"risk"`
	Rule     string   `json:"rule"`
	Reasons  []string `json:"reasons"`
	LLMLevel string   `json:"llm_level"`
	Error    string   `json:"error"`
}

// runAssess runs `countersign assess args...` with stdin and returns the
// decoded answers, the exit status and standard error.
func runAssess(t *testing.T, stdin string, args ...string) ([]answer, int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := dispatch(append([]string{"assess"}, args...), strings.NewReader(stdin), &out, &errOut)
	var answers []answer
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if line == "" {
			continue
		}
		var a answer
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatalf("output line %q is not JSON: %v", line, err)
		}
		answers = append(answers, a)
	}
	return answers, code, errOut.String()
}

func TestAssessCommand(t *testing.T) {
	config := filepath.Join(t.TempDir(), "countersign.yaml")
	if err := os.WriteFile(config, []byte("risk:\n  tools:\n    execute_command:\n      preauthorized: [\"systemctl restart nginx\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const (
		absurd = `{"tool":"execute_command","args":{"command":"ls; rm -rf /"}}`
		ls     = `{"tool":"execute_command","args":{"command":"ls -la"}}`
	)
	cases := []struct {
		name  string
		args  []string
		stdin string
		want  []answer // Decision, Rule, and Error != "" as "!"
		code  int
	}{
		{name: "the issue's example is blocked", stdin: absurd + "\n",
			want: []answer{{Decision: "block", Rule: "absurd"}}},
		{name: "ls runs", stdin: ls + "\n", want: []answer{{Decision: "auto", Rule: "whitelist"}}},
		{name: "no final newline", stdin: ls, want: []answer{{Decision: "auto", Rule: "whitelist"}}},
		{name: "CRLF", stdin: ls + "\r\n", want: []answer{{Decision: "auto", Rule: "whitelist"}}},
		{name: "malformed line is answered and fails the run",
			stdin: ls + "\n{not json\n" + absurd + "\n",
			want:  []answer{{Decision: "auto"}, {Decision: "confirm", Rule: "default", Error: "!"}, {Decision: "block"}},
			code:  1},
		{name: "missing tool", stdin: `{"args":{}}` + "\n", want: []answer{{Decision: "confirm", Error: "!"}}, code: 1},
		{name: "bad mode on a line", stdin: `{"tool":"execute_command","args":{"command":"ls"},"mode":"lax"}` + "\n",
			want: []answer{{Decision: "confirm", Error: "!"}}, code: 1},
		{name: "malformed args are a verdict, not an unreadable line",
			stdin: `{"tool":"execute_command","args":{"command":7}}` + "\n",
			want:  []answer{{Decision: "confirm", Rule: "default"}}},
		{name: "blank lines are skipped", stdin: "\n" + ls + "\n   \n" + absurd + "\n\n",
			want: []answer{{Decision: "auto"}, {Decision: "block"}}},
		{name: "mode strict", args: []string{"--mode", "strict"}, stdin: ls + "\n" + absurd + "\n",
			want: []answer{{Decision: "confirm", Rule: "mode"}, {Decision: "block", Rule: "absurd"}}},
		{name: "a line's mode beats the flag", args: []string{"--mode", "strict"},
			stdin: `{"tool":"execute_command","args":{"command":"ls"},"mode":"smart"}` + "\n",
			want:  []answer{{Decision: "auto", Rule: "whitelist"}}},
		{name: "channel field is read", stdin: `{"tool":"execute_command","args":{"command":"ls"},"channel":"C1"}` + "\n",
			want: []answer{{Decision: "auto"}}},
		{name: "config pre-authorises", args: []string{"--config", config},
			stdin: `{"tool":"execute_command","args":{"command":"systemctl restart nginx"}}` + "\n",
			want:  []answer{{Decision: "auto", Rule: "preauthorized"}}},
		{name: "corpus lines are accepted as they are",
			stdin: `{"tool": "execute_command", "args": {"command": "ls"}, "expect": "auto", "accept": ["auto"], "meta": {"argv": ["ls"]}}` + "\n",
			want:  []answer{{Decision: "auto"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, code, stderr := runAssess(t, tc.stdin, tc.args...)
			if code != tc.code {
				t.Errorf("exit status %d, want %d (stderr %q)", code, tc.code, stderr)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%d answers, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				g := got[i]
				if g.Decision != w.Decision || (w.Rule != "" && g.Rule != w.Rule) || (w.Error != "") != (g.Error != "") {
					t.Errorf("answer %d = %+v, want %+v", i, g, w)
				}
				if len(g.Reasons) == 0 || g.Risk == "" {
					t.Errorf("answer %d is incomplete: %+v", i, g)
				}
			}
		})
	}
}

// TestAssessOrder checks that parallel judging keeps the input order over
// many batches, and that line numbers in errors are the input's.
func TestAssessOrder(t *testing.T) {
	var in strings.Builder
	const n = 5000
	for i := range n {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&in, `{"tool":"execute_command","args":{"command":"ls dir%d"}}`+"\n", i)
		case 1:
			fmt.Fprintf(&in, `{"tool":"execute_command","args":{"command":"rm -rf /%s"}}`+"\n", "")
		default:
			fmt.Fprintf(&in, "broken %d\n", i)
		}
	}
	got, code, _ := runAssess(t, in.String())
	if code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	if len(got) != n {
		t.Fatalf("%d answers, want %d", len(got), n)
	}
	for i, a := range got {
		want := []string{"auto", "block", "confirm"}[i%3]
		if a.Decision != want {
			t.Fatalf("answer %d = %s, want %s", i, a.Decision, want)
		}
		if i%3 == 2 && !strings.HasPrefix(a.Error, fmt.Sprintf("line %d:", i+1)) {
			t.Fatalf("answer %d error %q does not name line %d", i, a.Error, i+1)
		}
	}
}

func TestAssessFlagsAndConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{name: "help", args: []string{"--help"}, code: 0, stdout: "Output (standard output)"},
		{name: "bad mode flag", args: []string{"--mode", "lax"}, code: 2, stderr: `--mode "lax" is not one of strict, guarded, smart`},
		{name: "unknown flag", args: []string{"--nope"}, code: 2, stderr: "flag provided but not defined"},
		{name: "stray argument", args: []string{"calls.jsonl"}, code: 2, stderr: "unexpected argument"},
		{name: "missing config", args: []string{"--config", filepath.Join(dir, "none.yaml")}, code: 2, stderr: "read config"},
		{name: "unknown key", args: []string{"--config", write("unknown.yaml", "risk:\n  mood: smart\n")}, code: 2,
			stderr: "risk.mood: unknown key; the keys here are channels, mode, sensitive_paths, taint, tools"},
		{name: "unknown section", args: []string{"--config", write("section.yaml", "sentry:\n  dsn: x\n")}, code: 2,
			stderr: "sentry: unknown key"},
		{name: "bad mode in config", args: []string{"--config", write("mode.yaml", "risk:\n  tools:\n    execute_sql:\n      mode: stric\n")},
			code: 2, stderr: `risk.tools.execute_sql: mode "stric" is not one of strict, guarded, smart`},
		{name: "empty config", args: []string{"--config", write("empty.yaml", "")}, code: 0},
		{name: "every key", args: []string{"--config", write("full.yaml", fullConfig)}, code: 0},
		{name: "unknown key in a channel", args: []string{"--config", write("chan.yaml", "risk:\n  channels:\n    C1:\n      preauthorized: [ls]\n")},
			code: 2, stderr: "risk.channels.C1.preauthorized: unknown key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := dispatch(append([]string{"assess"}, tc.args...), strings.NewReader(""), &out, &errOut)
			if code != tc.code {
				t.Errorf("exit status %d, want %d (stderr %q)", code, tc.code, errOut.String())
			}
			if !strings.Contains(out.String(), tc.stdout) {
				t.Errorf("stdout %q lacks %q", out.String(), tc.stdout)
			}
			if !strings.Contains(errOut.String(), tc.stderr) {
				t.Errorf("stderr %q lacks %q", errOut.String(), tc.stderr)
			}
		})
	}
}

func TestDispatch(t *testing.T) {
	cases := []struct {
		args []string
		code int
		out  string
	}{
		{nil, 0, "approvals: memory"},
		{[]string{"run"}, 0, "approvals: memory"},
		{[]string{"run", "--help"}, 0, "!run <command>"},
		{[]string{"--config", "/nonexistent/c.yaml"}, 1, "read config"},
		{[]string{"config", "example"}, 0, "require_second_person"},
		{[]string{"config"}, 2, "config check"},
		{[]string{"help"}, 0, "assess"},
		{[]string{"version"}, 0, "countersign"},
		{[]string{"frobnicate"}, 2, "unknown command"},
	}
	t.Chdir(t.TempDir())
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("COUNTERSIGN_REDIS_URL", "")
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out bytes.Buffer
			code := dispatch(tc.args, strings.NewReader(""), &out, &out)
			if code != tc.code || !strings.Contains(out.String(), tc.out) {
				t.Errorf("dispatch(%q) = %d, %q; want %d and %q", tc.args, code, out.String(), tc.code, tc.out)
			}
		})
	}
}

// Help is printed once, on standard output, and a bad flag or a stray
// argument says what is wrong, with the help, on standard error.
func TestSubcommandFlags(t *testing.T) {
	cases := []struct {
		name           string
		args           []string
		code           int
		stdout, stderr string
	}{
		{name: "run help", args: []string{"run", "--help"}, stdout: runHelp},
		{name: "assess help", args: []string{"assess", "-h"}, stdout: assessHelp},
		{name: "config check help", args: []string{"config", "check", "--help"}, stdout: configHelp},
		{name: "run bad flag", args: []string{"run", "--nope"}, code: 2,
			stderr: "countersign run: flag provided but not defined: -nope\n\n" + runHelp},
		{name: "config check stray argument", args: []string{"config", "check", "prod.yaml"}, code: 2,
			stderr: "countersign config check: unexpected argument \"prod.yaml\"\n\n" + configHelp},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := dispatch(tc.args, strings.NewReader(""), &out, &errOut)
			if code != tc.code || out.String() != tc.stdout || errOut.String() != tc.stderr {
				t.Errorf("dispatch(%q) = %d\nstdout %q\nstderr %q\nwant %d\nstdout %q\nstderr %q",
					tc.args, code, out.String(), errOut.String(), tc.code, tc.stdout, tc.stderr)
			}
		})
	}
}

// fullConfig uses every key of the risk section (see risk.Config).
const fullConfig = `risk:
  mode: smart
  sensitive_paths: ["*.secret", "deploy/keys/"]
  tools:
    execute_command:
      mode: guarded
      preauthorized:
        - "systemctl restart nginx"
        - 're:kubectl rollout restart deployment/[a-z0-9-]+ -n staging'
    execute_sql:
      preauthorized: ["re:OPTIMIZE TABLE [a-z_]+"]
  channels:
    C0123PROD:
      mode: strict
      tools:
        execute_sql: {mode: guarded}
`
