package main

import (
	"bytes"
	"database/sql"
	"strings"
	"testing"

	"github.com/countersign/countersign/internal/testenv"
)

// TestConfigCheckWarnsOfFile: config check --connect warns when the
// account auto-run SELECTs use holds FILE (issue 16, mechanism 10): the
// read-only account, or the main account when there is none. A warning is
// not a failure.
func TestConfigCheckWarnsOfFile(t *testing.T) {
	good, user, _ := account(t)
	t.Setenv("CHECK_RO_DSN", good)
	t.Setenv("CHECK_RW_DSN", good)
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv(DefaultRedisURLEnv, "")
	t.Chdir(t.TempDir())
	check := func(conf string) (string, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := dispatch([]string{"config", "check", "--connect", "--config", writeConfig(t, conf)}, strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("exit %d: %s\n%s", code, stderr.String(), stdout.String())
		}
		return stdout.String(), stderr.String()
	}
	withRO := "tools:\n  execute_sql:\n    connections:\n      orders:\n        dsn_env: CHECK_RW_DSN\n        readonly_dsn_env: CHECK_RO_DSN\n"
	withoutRO := "tools:\n  execute_sql:\n    connections:\n      orders:\n        dsn_env: CHECK_RW_DSN\n"

	if out, _ := check(withRO); strings.Contains(out, "warn") {
		t.Fatalf("a warning for an account without FILE:\n%s", out)
	}
	admin, err := sql.Open("mysql", testenv.MySQLDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for _, host := range []string{"%", "localhost", "127.0.0.1"} {
		if _, err := admin.Exec("GRANT FILE ON *.* TO '" + user + "'@'" + host + "'"); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut := check(withRO)
	if !strings.Contains(out, "warn  SQL connection orders (read-only account): the read-only account holds the FILE privilege") ||
		!strings.Contains(out, "LOAD_FILE") || !strings.Contains(errOut, "warning") {
		t.Errorf("no FILE warning for the read-only account:\n%s\n%s", out, errOut)
	}
	if out, _ := check(withoutRO); !strings.Contains(out, "warn  SQL connection orders: its account, which auto-run SELECTs use (no readonly_dsn), holds the FILE privilege") {
		t.Errorf("no FILE warning for the main account used by auto-run calls:\n%s", out)
	}
}
