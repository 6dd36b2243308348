package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/countersign/countersign/internal/testenv"
)

// account creates a MariaDB user with a password on the test server and
// returns its DSN; the user is dropped at the end.
func account(t *testing.T) (dsn, user, pass string) {
	t.Helper()
	root := testenv.MySQLDSN(t)
	admin, err := sql.Open("mysql", root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	user, pass = "cs_check_"+hex.EncodeToString(b), "Right-"+hex.EncodeToString(b)
	for _, host := range []string{"%", "localhost", "127.0.0.1"} {
		if _, err := admin.Exec("CREATE USER '" + user + "'@'" + host + "' IDENTIFIED BY '" + pass + "'"); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, host := range []string{"%", "localhost", "127.0.0.1"} {
			_, _ = admin.Exec("DROP USER IF EXISTS '" + user + "'@'" + host + "'")
		}
	})
	mc, err := mysql.ParseDSN(root)
	if err != nil {
		t.Fatal(err)
	}
	mc.User, mc.Passwd = user, pass
	return mc.FormatDSN(), user, pass
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestConfigCheckConnect: --connect reaches every backend and names each;
// a refused password and a Redis that is down are said plainly, and no
// password is shown.
func TestConfigCheckConnect(t *testing.T) {
	good, user, pass := account(t)
	wrong := strings.Replace(good, ":"+pass+"@", ":Wrong-password@", 1)
	t.Setenv("CHECK_RW_DSN", wrong)
	t.Setenv("CHECK_RO_DSN", good)
	t.Setenv("CHECK_AUDIT_DSN", wrong)
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv(DefaultRedisURLEnv, "")
	t.Chdir(t.TempDir())
	conf := writeConfig(t, `
store:
  redis_url: redis://:hunter2@127.0.0.1:1/0
tools:
  execute_sql:
    connections:
      orders:
        dsn_env: CHECK_RW_DSN
        readonly_dsn_env: CHECK_RO_DSN
audit:
  mysql:
    dsn_env: CHECK_AUDIT_DSN
`)
	var stdout, stderr bytes.Buffer
	code := dispatch([]string{"config", "check", "--connect", "--config", conf}, strings.NewReader(""), &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit %d, want 1 with backends down; stderr: %s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`down  redis redis://:xxxxx@127\.0\.0\.1:1/0: nothing listens.*connection refused`),
		regexp.MustCompile(`down  SQL connection orders: the server at 127\.0\.0\.1:\d+ refused the password of user "` + user + `"`),
		regexp.MustCompile(`ok    SQL connection orders \(read-only account\)`),
		regexp.MustCompile(`down  audit table \(audit\.mysql\): the server at 127\.0\.0\.1:\d+ refused the password of user "` + user + `"`),
	} {
		if !want.MatchString(out) {
			t.Errorf("output does not match %s:\n%s", want, out)
		}
	}
	for _, secret := range []string{"hunter2", pass, "Wrong-password"} {
		if strings.Contains(out+stderr.String(), secret) {
			t.Errorf("the output shows the secret %q", secret)
		}
	}

	// Everything up: exit 0.
	t.Setenv("CHECK_RW_DSN", good)
	t.Setenv(DefaultRedisURLEnv, testenv.RedisURL(t))
	conf = writeConfig(t, "tools:\n  execute_sql:\n    connections:\n      orders:\n        dsn_env: CHECK_RW_DSN\n")
	stdout.Reset()
	stderr.Reset()
	if code := dispatch([]string{"config", "check", "--connect", "--config", conf}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d with everything up: %s\n%s", code, stderr.String(), stdout.String())
	}
	if !strings.Contains(stdout.String(), "ok    redis ") || !strings.Contains(stdout.String(), "ok    SQL connection orders\n") {
		t.Errorf("not every backend is reported:\n%s", stdout.String())
	}
}

// TestConfigCheckConnectModel: the model's /models is asked; a model it
// does not list and a refused key are said with the fix.
func TestConfigCheckConnectModel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/v1/models" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		if r.Header.Get("Authorization") != "Bearer sk-good" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":{"message":"bad key","type":"invalid_request_error"}}`)
			return
		}
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"llama3.1","object":"model"},{"id":"qwen2.5","object":"model"}]}`)
	}))
	defer srv.Close()
	t.Setenv(DefaultRedisURLEnv, "")
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Chdir(t.TempDir())
	tests := []struct {
		key, model, want string
		code             int
	}{
		{"sk-good", "llama3.1", "ok    model llama3.1 at " + srv.URL + "/v1", 0},
		{"sk-good", "llama3", `does not list model "llama3"; set llm.model (or OPENAI_MODEL) to one it serves: llama3.1, qwen2.5`, 1},
		{"sk-bad", "llama3.1", "401 Unauthorized: the API key is wrong or missing; set llm.api_key or OPENAI_API_KEY", 1},
	}
	for _, tt := range tests {
		t.Setenv("OPENAI_API_KEY", tt.key)
		t.Setenv("OPENAI_MODEL", tt.model)
		var stdout, stderr bytes.Buffer
		code := dispatch([]string{"config", "check", "--connect"}, strings.NewReader(""), &stdout, &stderr)
		if code != tt.code || !strings.Contains(stdout.String(), tt.want) {
			t.Errorf("key %s, model %s: exit %d (want %d), output lacks %q:\n%s", tt.key, tt.model, code, tt.code, tt.want, stdout.String())
		}
	}
}

// TestRunSaysWhichBackendsAreDown: run starts with a SQL connection whose
// password is refused, says so once at start, and the terminal works.
func TestRunSaysWhichBackendsAreDown(t *testing.T) {
	good, _, pass := account(t)
	t.Setenv("CHECK_RW_DSN", strings.Replace(good, ":"+pass+"@", ":Wrong-password@", 1))
	t.Setenv(DefaultRedisURLEnv, "")
	conf := writeConfig(t, "tools:\n  execute_sql:\n    connections:\n      orders:\n        dsn_env: CHECK_RW_DSN\n")
	out := &syncBuffer{}
	t.Chdir(t.TempDir())
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	if err := run(context.Background(), conf, strings.NewReader("!run echo still-here\n"), out, io.Discard); err != nil {
		t.Fatalf("run: %v", err)
	}
	got := out.String()
	if !regexp.MustCompile(`warning: SQL connection orders is down: the server at \S+ refused the password of user`).MatchString(got) {
		t.Errorf("the start does not say the connection is down:\n%s", got)
	}
	if !strings.Contains(got, "\n    still-here") {
		t.Errorf("the terminal did not answer after the warning:\n%s", got)
	}
}
