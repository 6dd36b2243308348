package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/configs"
	"github.com/countersign/countersign/internal/testenv"
)

// syncBuffer is an io.Writer the test can read while the bot writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor polls out until re matches, and returns the first submatch.
func waitFor(t *testing.T, out *syncBuffer, re *regexp.Regexp) string {
	t.Helper()
	var m []string
	if !testenv.Within(10*time.Second, func() bool { m = re.FindStringSubmatch(out.String()); return m != nil }) {
		t.Fatalf("timed out waiting for %s; output so far:\n%s", re, out.String())
	}
	if len(m) > 1 {
		return m[1]
	}
	return m[0]
}

// startRun runs the bot as `countersign run` does, in dir, on a pipe.
func startRun(t *testing.T, dir, config string, env ...string) (in io.WriteCloser, out *syncBuffer, done <-chan error) {
	t.Helper()
	t.Chdir(dir)
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	for i := 0; i+1 < len(env); i += 2 {
		t.Setenv(env[i], env[i+1])
	}
	pr, pw := io.Pipe()
	out = &syncBuffer{}
	ch := make(chan error, 1)
	go func() { ch <- run(context.Background(), config, pr, out, io.Discard) }()
	return pw, out, ch
}

// TestRunOutOfTheBox is issue 5's "done when": no configuration and no
// model, in a folder holding tmp_a, tmp_b and keep.txt.
func TestRunOutOfTheBox(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"tmp_a", "tmp_b", "keep.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(DefaultRedisURLEnv, "")
	in, out, done := startRun(t, dir, "")
	w := bufio.NewWriter(in)
	say := func(line string) {
		t.Helper()
		if _, err := w.WriteString(line + "\n"); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}

	waitFor(t, out, regexp.MustCompile(`approvals: memory`))
	waitFor(t, out, regexp.MustCompile(`(?i)no model`))
	say("!run ls")
	waitFor(t, out, regexp.MustCompile(`keep\.txt\s+tmp_a\s+tmp_b`))
	if strings.Contains(out.String(), "approve ") {
		t.Fatalf("!run ls asked for approval:\n%s", out)
	}

	say("!run rm -rf ./tmp_*")
	id := waitFor(t, out, regexp.MustCompile(`approve ([a-z0-9]{20,})`))
	card := out.String()
	for _, want := range []string{"tmp_a", "tmp_b", "rm -rf ./tmp_*"} {
		if !strings.Contains(card[strings.Index(card, "rm -rf"):], want) {
			t.Errorf("card does not name %q:\n%s", want, card)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "tmp_a")); err != nil {
		t.Fatalf("tmp_a is gone before anyone approved: %v", err)
	}

	say("approve " + id) // the requester's own approval is refused
	waitFor(t, out, regexp.MustCompile(`You cannot approve`))
	if _, err := os.Stat(filepath.Join(dir, "tmp_a")); err != nil {
		t.Fatalf("the requester's own approval ran the call: %v", err)
	}
	say("/as bob")
	say("approve " + id)
	waitFor(t, out, regexp.MustCompile(`done: exit code 0`))
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return at the end of input")
	}
	for f, want := range map[string]bool{"tmp_a": false, "tmp_b": false, "keep.txt": true} {
		_, err := os.Stat(filepath.Join(dir, f))
		if got := err == nil; got != want {
			t.Errorf("%s exists = %v, want %v", f, got, want)
		}
	}
}

// TestRunUsesRedis: with a Redis URL in the environment the approvals live
// in Redis, and the banner says so without the password.
func TestRunUsesRedis(t *testing.T) {
	url := testenv.RedisURL(t)
	t.Setenv(DefaultRedisURLEnv, url)
	in, out, done := startRun(t, t.TempDir(), "")
	waitFor(t, out, regexp.MustCompile(`approvals: redis `))
	in.Close()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
}

func TestRunRefusesUnreachableRedis(t *testing.T) {
	t.Setenv(DefaultRedisURLEnv, "redis://:hunter2@127.0.0.1:1/0")
	_, _, done := startRun(t, t.TempDir(), "")
	err := <-done
	if err == nil || !strings.Contains(err.Error(), "cannot reach redis") {
		t.Fatalf("run = %v, want a clear error about Redis", err)
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("the error shows the password: %v", err)
	}
}

// TestExampleConfig: configs/countersign.example.yaml parses strictly,
// builds, and mentions every key the configuration has.
func TestExampleConfig(t *testing.T) {
	t.Setenv("ORDERS_DSN", "app:s3cret@tcp(127.0.0.1:3306)/orders")
	t.Setenv("ORDERS_RO_DSN", "ro:s3cret@tcp(127.0.0.1:3306)/orders")
	var cfg fileConfig
	if err := decodeConfig(configs.Example, &cfg); err != nil {
		t.Fatalf("the example does not parse: %v", err)
	}
	a, err := build(context.Background(), cfg, env{getenv: os.Getenv, logOut: io.Discard})
	if err != nil {
		t.Fatalf("the example does not build: %v", err)
	}
	a.close()

	var doc yaml.Node
	if err := yaml.Unmarshal(configs.Example, &doc); err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	collectKeys(&doc, "", have)
	var missing []string
	for _, k := range structKeys(reflect.TypeOf(fileConfig{}), "") {
		if !have[k] {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		t.Errorf("configs/countersign.example.yaml does not document: %s", strings.Join(missing, ", "))
	}
}

// collectKeys records every key path in a YAML document; the entries of a
// map are recorded under "*".
func collectKeys(n *yaml.Node, prefix string, have map[string]bool) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			collectKeys(c, prefix, have)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := prefix + n.Content[i].Value
			have[k] = true
			collectKeys(n.Content[i+1], k+".", have)
			collectKeys(n.Content[i+1], prefix+"*.", have)
		}
	}
}

// structKeys lists the yaml key paths of t; map values are under "*".
func structKeys(t reflect.Type, prefix string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var keys []string
	switch t.Kind() {
	case reflect.Struct:
		if t == reflect.TypeOf(time.Duration(0)) {
			return nil
		}
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("yaml")
			name, opts, _ := strings.Cut(tag, ",")
			if opts == "inline" {
				keys = append(keys, structKeys(f.Type, prefix)...)
				continue
			}
			if name == "" || name == "-" || !f.IsExported() {
				continue
			}
			keys = append(keys, prefix+name)
			keys = append(keys, structKeys(f.Type, prefix+name+".")...)
		}
	case reflect.Map:
		keys = append(keys, structKeys(t.Elem(), prefix+"*.")...)
	}
	return keys
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"unknown top-level key", "rsik: {}\n", "rsik: unknown key; did you mean risk?"},
		{"unknown nested key", "risk:\n  mdoe: strict\n", "risk.mdoe: unknown key; did you mean mode?"},
		{"bad mode", "risk:\n  mode: stric\n", `mode "stric"`},
		{"bad log level", "log:\n  level: loud\n", "log.level"},
		{"bad colour", "terminal:\n  color: purple\n", "terminal"},
		{"bad approver policy", "bot:\n  channels:\n    ops:\n      approvers: ['']\n", "bot.channels.ops.approvers[0]"},
		{"sql without dsn", "tools:\n  execute_sql:\n    connections:\n      main: {}\n", "connections.main"},
		{"llm base url without model", "llm:\n  base_url: http://localhost:11434/v1\n", "llm.model"},
		{"redis url and addrs", "store:\n  redis_url: redis://x:6379\n  addrs: [a:1]\n", "store"},
		{"negative shell limit", "tools:\n  execute_command:\n    timeout: -1s\n", "tools.execute_command: timeout -1s must be positive"},
		{"negative file limit", "tools:\n  file_operations:\n    max_read_bytes: -1\n", "tools.file_operations: max_read_bytes -1 must be positive"},
		{"negative http limit", "tools:\n  http_request:\n    enabled: true\n    max_body_text: -1\n", "tools.http_request: max_body_text -1 must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(path, []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Chdir(t.TempDir())
			var stdout, stderr bytes.Buffer
			code := dispatch([]string{"config", "check", "--config", path}, strings.NewReader(""), &stdout, &stderr)
			if code != 1 {
				t.Fatalf("exit %d, want 1; stderr: %s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Fatalf("error %q does not name %q", stderr.String(), tt.want)
			}
		})
	}
}

// A tool or model that is off shows its defaults, not zero limits that
// would mean "the default" if it were turned on.
func TestConfigCheckShowsDefaultsOfWhatIsOff(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv(DefaultRedisURLEnv, "")
	t.Chdir(t.TempDir())
	var stdout, stderr bytes.Buffer
	if code := dispatch([]string{"config", "check"}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var got fileConfig
	if err := yaml.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("config check output is not the config: %v\n%s", err, stdout.String())
	}
	if got.Tools.SQL.Config.MaxRows != 200 || got.Tools.HTTP.Config.MaxRedirects != 5 || got.LLM.Model == "" {
		t.Errorf("off sections show zeros:\n%s", stdout.String())
	}
}

func TestConfigCheckRedactsSecrets(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-topsecret")
	t.Setenv(DefaultRedisURLEnv, "")
	path := filepath.Join(t.TempDir(), "c.yaml")
	conf := "tools:\n  execute_sql:\n    connections:\n      main:\n        dsn: 'app:pa55word@tcp(127.0.0.1:3306)/db'\n"
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	var stdout, stderr bytes.Buffer
	if code := dispatch([]string{"config", "check", "--config", path}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	got := stdout.String()
	for _, secret := range []string{"sk-topsecret", "pa55word"} {
		if strings.Contains(got, secret) {
			t.Errorf("config check prints %q:\n%s", secret, got)
		}
	}
	for _, want := range []string{"max_rows: 200", "approval_ttl: 15m0s", "mode: smart", "execute_sql", "model: gpt-"} {
		if !strings.Contains(got, want) {
			t.Errorf("effective config lacks %q:\n%s", want, got)
		}
	}
}

// TestRunWithModel: with OPENAI_BASE_URL and OPENAI_MODEL in the
// environment, run talks to the model: "clean up the temp files" becomes a
// card listing the files, a second person approves it, it runs once, and
// the model's answer is shown.
func TestRunWithModel(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"tmp_a", "tmp_b", "keep.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := agenttest.NewServer(t,
		agenttest.Calls(agenttest.Call("call-1", "execute_command", `{"command":"rm -rf ./tmp_*","risk_level":"high"}`)),
		agenttest.Text("Removed tmp_a and tmp_b; keep.txt is untouched."),
	)
	t.Setenv(DefaultRedisURLEnv, "")
	in, out, done := startRun(t, dir, "", "OPENAI_BASE_URL", srv.BaseURL(), "OPENAI_MODEL", "test-model")
	say := func(line string) {
		t.Helper()
		if _, err := io.WriteString(in, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, out, regexp.MustCompile(`approvals: memory`))
	if strings.Contains(out.String(), "No model") {
		t.Fatalf("the banner says no model although OPENAI_BASE_URL is set:\n%s", out)
	}
	say("clean up the temp files")
	id := waitFor(t, out, regexp.MustCompile(`approve ([a-z0-9]{20,})`))
	if !regexp.MustCompile(`tmp_a[\s\S]*tmp_b`).MatchString(out.String()) {
		t.Errorf("the card does not list the matching files:\n%s", out)
	}
	say("/as bob")
	say("approve " + id)
	waitFor(t, out, regexp.MustCompile(`keep\.txt is untouched`))
	in.Close()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	for f, want := range map[string]bool{"tmp_a": false, "tmp_b": false, "keep.txt": true} {
		_, err := os.Stat(filepath.Join(dir, f))
		if got := err == nil; got != want {
			t.Errorf("%s exists = %v, want %v", f, got, want)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Model != "test-model" {
		t.Fatalf("model requests = %d (model %q), want 2 to test-model", len(reqs), reqs[0].Model)
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != "tool" || !strings.Contains(last.Content, `"executed":true`) {
		t.Errorf("the model's follow-up ends with %+v, want the tool result of the run", last)
	}
}
