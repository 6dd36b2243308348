package sqltool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/risk/sqlrisk"
	"github.com/countersign/countersign/tools"
	"github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

// offlineTool is a tool whose server is never reached.
func offlineTool(t testing.TB) *Tool {
	t.Helper()
	tool, err := New(Config{Connections: map[string]Connection{
		"main":    {DSN: "u:offline-secret@tcp(127.0.0.1:1)/db"},
		"reports": {DSN: "u:offline-secret@tcp(127.0.0.1:1)/rep", Description: "monthly reports"},
	}, Default: "main"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tool.Close() })
	return tool
}

func TestClassify(t *testing.T) {
	c, err := newClassifier()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		sql     string
		want    kind
		notRead string // a fragment of why, for non-reads
	}{
		{"SELECT 1", kindRead, ""},
		{"select * from t where a = 'x;y'", kindRead, ""},
		{"SELECT 1;", kindRead, ""},
		{"WITH x AS (SELECT 1) SELECT * FROM x", kindRead, ""},
		{"SELECT 1 UNION SELECT 2", kindRead, ""},
		{"TABLE t", kindRead, ""},
		{"SHOW PROCESSLIST", kindRead, ""},
		{"DESCRIBE t", kindRead, ""},
		{"EXPLAIN SELECT * FROM t", kindRead, ""},
		{"SELECT SLEEP(1)", kindRead, ""},
		{"SELECT \"x\"", kindRead, ""}, // a string, not a name, under the pinned sql_mode
		{"EXPLAIN ANALYZE SELECT 1", kindOther, "EXPLAIN ANALYZE runs"},
		{"EXPLAIN DELETE FROM t", kindOther, "not a read"},
		{"SELECT * FROM t INTO OUTFILE '/tmp/x'", kindOther, "INTO writes"},
		{"SELECT 1 UNION SELECT 2 INTO @a", kindUnknown, "could not be parsed"},
		{"SELECT a INTO @a FROM t", kindUnknown, "could not be parsed"},
		{"SELECT * FROM t FOR UPDATE", kindOther, "locking read"},
		{"SELECT * FROM t LOCK IN SHARE MODE", kindOther, "locking read"},
		{"SELECT * FROM (SELECT * FROM t FOR UPDATE) x", kindOther, "locking read"},
		{"SELECT LOAD_FILE('/etc/passwd')", kindOther, "LOAD_FILE"},
		{"SELECT GET_LOCK('x', 0)", kindOther, "user-level lock"},
		{"SELECT 1 FROM t WHERE IS_FREE_LOCK('x') AND get_lock('x', 0)", kindOther, "user-level lock"},
		{"SELECT RELEASE_ALL_LOCKS()", kindOther, "user-level lock"},
		{"SELECT IS_FREE_LOCK('x')", kindRead, ""},
		{"SELECT @a := 1", kindOther, "assigns a variable"},
		{"SELECT /*+ MAX_EXECUTION_TIME(100000000) */ SLEEP(1000)", kindOther, "lift the time limit"},
		{"SELECT /*+ MAX_EXECUTION_TIME(100000000) */ 1 UNION SELECT 2", kindOther, "lift the time limit"},
		{"INSERT INTO t VALUES (1)", kindInsert, "not a read"},
		{"REPLACE INTO t VALUES (1)", kindInsert, "not a read"},
		{"UPDATE t SET a = 1 WHERE b = 2", kindUpdate, "not a read"},
		{"DELETE FROM t WHERE a = 1", kindDelete, "not a read"},
		{"DELETE t FROM t JOIN u ON t.a = u.a", kindDelete, "not a read"},
		{"DROP TABLE t", kindOther, "not a read"},
		{"SET SESSION TRANSACTION READ WRITE", kindOther, "not a read"},
		{"LOCK TABLES t WRITE", kindOther, "not a read"},
		{"SELECT 1; SELECT 2", kindUnknown, "2 statements"},
		{"SELECT 1 /*! INTO OUTFILE '/tmp/x' */", kindUnknown, "executable comment"},
		{"SELECT 1 /*M! , SLEEP(1) */", kindUnknown, "executable comment"},
		{"SELECT 1 /*m!100000 , 2 */", kindUnknown, "executable comment"},
		{"SELEC 1", kindUnknown, "could not be parsed"},
		{"", kindUnknown, "0 statements"},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			st := c.classify(tt.sql)
			if st.kind != tt.want {
				t.Fatalf("kind %d (%s), want %d", st.kind, st.notRead, tt.want)
			}
			if tt.want == kindRead && st.notRead != "" {
				t.Errorf("a read with notRead %q", st.notRead)
			}
			if !strings.Contains(st.notRead, tt.notRead) {
				t.Errorf("notRead %q, want it to contain %q", st.notRead, tt.notRead)
			}
		})
	}
}

func TestExplainSelect(t *testing.T) {
	c, _ := newClassifier()
	tests := []struct{ sql, want string }{
		{"DELETE FROM t WHERE id > 5", "EXPLAIN SELECT * FROM `t` WHERE `id`>5"},
		{"DELETE FROM t", "EXPLAIN SELECT * FROM `t`"},
		{"DELETE FROM t WHERE a = 1 ORDER BY b LIMIT 3", "EXPLAIN SELECT * FROM `t` WHERE `a`=1 ORDER BY `b` LIMIT 3"},
		{"UPDATE t SET a = 1 WHERE b = 'x'", "EXPLAIN SELECT * FROM `t` WHERE `b`=_UTF8MB4'x'"},
		{"DELETE t FROM t JOIN u ON t.a = u.a WHERE u.b = 2", "EXPLAIN SELECT * FROM `t` JOIN `u` ON `t`.`a`=`u`.`a` WHERE `u`.`b`=2"},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			got, err := explainSelect(c.classify(tt.sql))
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v\nwant %q", got, err, tt.want)
			}
			if strings.Contains(strings.ToUpper(got), "ANALYZE") {
				t.Errorf("ANALYZE in %q", got)
			}
		})
	}
	if _, err := explainSelect(c.classify("INSERT INTO t VALUES (1)")); err == nil {
		t.Error("INSERT was explained")
	}
}

func TestDescribe(t *testing.T) {
	limit := 30 * time.Second
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"mariadb timeout", &mysql.MySQLError{Number: 1969, Message: "Query execution was interrupted (max_statement_time exceeded)"},
			"timeout: the server stopped the statement when it reached its time limit of 30s (error 1969)"},
		{"mysql timeout", &mysql.MySQLError{Number: 3024, Message: "Query execution was interrupted, maximum statement execution time exceeded"},
			"timeout: the server stopped the statement when it reached its time limit of 30s (error 3024)"},
		{"context deadline", fmt.Errorf("query: %w", context.DeadlineExceeded), "timeout: the statement was stopped when it reached its time limit of 30s"},
		{"mysql syntax", &mysql.MySQLError{Number: 1064, Message: "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'FORM t' at line 1"},
			"syntax error near 'FORM t' at line 1 (error 1064)"},
		{"syntax with quote inside", &mysql.MySQLError{Number: 1064, Message: "... to use near 'x = 'a'' at line 3"}, "syntax error near 'x = 'a'' at line 3 (error 1064)"},
		{"syntax without position", &mysql.MySQLError{Number: 1064, Message: "odd"}, "syntax error: odd (error 1064)"},
		{"read-only", &mysql.MySQLError{Number: 1792, Message: "Cannot execute statement in a READ ONLY transaction"}, "refused by the read-only fence"},
		{"login", &mysql.MySQLError{Number: 1045, Message: "Access denied for user 'u'@'h' (using password: YES)"}, "access denied: Access denied for user 'u'@'h' (using password: YES) (error 1045)"},
		{"db access", &mysql.MySQLError{Number: 1044, Message: "Access denied for user 'u'@'h' to database 'x'"}, "access denied: "},
		{"table access", &mysql.MySQLError{Number: 1142, Message: "DELETE command denied"}, "access denied: DELETE command denied (error 1142)"},
		{"unknown db", &mysql.MySQLError{Number: 1049, Message: "Unknown database 'x'"}, "unknown database: Unknown database 'x' (error 1049)"},
		{"unknown table", &mysql.MySQLError{Number: 1146, Message: "Table 'd.x' doesn't exist"}, "unknown table: Table 'd.x' doesn't exist (error 1146)"},
		{"other", &mysql.MySQLError{Number: 1062, Message: "Duplicate entry '1' for key 'PRIMARY'"}, "the server refused the statement: Duplicate entry '1' for key 'PRIMARY' (error 1062)"},
		{"broken connection", mysql.ErrInvalidConn, "the connection to the database server broke"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := describe(tt.err, limit); !strings.HasPrefix(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestScrubRemovesPasswords(t *testing.T) {
	s := secretScrubber([]string{"pw", "", "longer-pw"})
	if got := s.Replace("dial u:longer-pw@x and pw"); got != "dial u:xxxxx@x and xxxxx" {
		t.Errorf("got %q", got)
	}
	tool := offlineTool(t)
	if got := tool.plainError(errors.New("connect u:offline-secret@tcp"), time.Second); strings.Contains(got, "offline-secret") {
		t.Errorf("plainError = %q", got)
	}
}

func TestJSONValue(t *testing.T) {
	tests := []struct {
		name   string
		v      any
		dbType string
		want   string
		cut    bool
	}{
		{"null", nil, "VARCHAR", `null`, false},
		{"int", int64(-3), "INT", `-3`, false},
		{"uint", uint64(18446744073709551615), "UNSIGNED BIGINT", `18446744073709551615`, false},
		{"float32", float32(1.1), "FLOAT", `1.1`, false},
		{"widened float", float64(float32(1.1)), "FLOAT", `1.1`, false},
		{"double", 0.1, "DOUBLE", `0.1`, false},
		{"decimal", []byte("12.50"), "DECIMAL", `"12.50"`, false},
		{"text", []byte("héllo"), "VARCHAR", `"héllo"`, false},
		{"invalid utf-8 text", []byte{'a', 0xff}, "VARCHAR", `"0x61ff"`, false},
		{"binary", []byte("ab"), "VARBINARY", `"0x6162"`, false},
		{"blob cut", []byte("abcdefgh"), "BLOB", `"0x616263"`, true},
		{"text cut on a rune", []byte("ééééé"), "TEXT", `"éééé"`, true},
		{"time", time.Date(2024, 2, 29, 13, 14, 15, 120000000, time.UTC), "DATETIME", `"2024-02-29 13:14:15.12"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, cut := jsonValue(tt.v, tt.dbType, 8)
			got, err := json.Marshal(v)
			if err != nil || string(got) != tt.want || cut != tt.cut {
				t.Errorf("got %s cut %v (%v), want %s cut %v", got, cut, err, tt.want, tt.cut)
			}
		})
	}
}

func TestConfig(t *testing.T) {
	t.Setenv("CS_TEST_DSN", "u:env-secret@tcp(127.0.0.1:1)/db")
	t.Setenv("CS_TEST_EMPTY", "")
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"one connection is the default", Config{Connections: map[string]Connection{"a": {DSN: "u@tcp(h:1)/d"}}}, ""},
		{"dsn from env", Config{Connections: map[string]Connection{"a": {DSNEnv: "CS_TEST_DSN", ReadOnlyDSNEnv: "CS_TEST_DSN"}}}, ""},
		{"no connections", Config{}, "connections: at least one"},
		{"two without default", Config{Connections: map[string]Connection{"a": {DSN: "u@tcp(h:1)/d"}, "b": {DSN: "u@tcp(h:1)/d"}}}, "default: name one of the connections (a, b)"},
		{"unknown default", Config{Default: "c", Connections: map[string]Connection{"a": {DSN: "u@tcp(h:1)/d"}}}, `default: "c" is not a connection (have a)`},
		{"no dsn", Config{Connections: map[string]Connection{"a": {}}}, "connections.a: set dsn or dsn_env"},
		{"both dsn and env", Config{Connections: map[string]Connection{"a": {DSN: "u@tcp(h:1)/d", DSNEnv: "CS_TEST_DSN"}}}, "connections.a.dsn and connections.a.dsn_env: set only one"},
		{"empty env", Config{Connections: map[string]Connection{"a": {DSNEnv: "CS_TEST_EMPTY"}}}, "connections.a.dsn_env: environment variable CS_TEST_EMPTY is empty or not set"},
		{"bad readonly dsn", Config{Connections: map[string]Connection{"a": {DSN: "u@tcp(h:1)/d", ReadOnlyDSN: "nonsense"}}}, "connections.a.readonly_dsn: not a valid DSN"},
		{"negative limit", Config{MaxRows: -1, Connections: map[string]Connection{"a": {DSN: "u@tcp(h:1)/d"}}}, "max_rows -1 must be positive"},
		{"negative time limit", Config{StatementTimeout: -time.Second, Connections: map[string]Connection{"a": {DSN: "u@tcp(h:1)/d"}}}, "statement_timeout -1s must be positive"},
		{"idle over open", Config{MaxOpenConns: 1, MaxIdleConns: 2, Connections: map[string]Connection{"a": {DSN: "u@tcp(h:1)/d"}}}, "max_idle_conns: 2 is more than max_open_conns 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := New(tt.cfg)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				_ = tool.Close()
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New error %v, want %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error shows a secret: %v", err)
			}
		})
	}
}

func TestDriverConfigPinsTheFences(t *testing.T) {
	cfg, err := driverConfig("u:p@tcp(h:1)/d?multiStatements=true&allowAllFiles=true&interpolateParams=true&parseTime=true&sql_mode=%27ANSI_QUOTES%27&tx_read_only=0&time_zone=%27%2B00:00%27")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MultiStatements || cfg.AllowAllFiles || cfg.InterpolateParams || cfg.ParseTime {
		t.Errorf("a fence was left as the DSN said: %+v", cfg)
	}
	if got, want := cfg.Params["sql_mode"], "'"+sqlrisk.DefaultSQLMode+"'"; got != want {
		t.Errorf("sql_mode %q, want %q", got, want)
	}
	if _, ok := cfg.Params["tx_read_only"]; ok {
		t.Error("tx_read_only from the DSN was kept")
	}
	if cfg.Params["time_zone"] != "'+00:00'" {
		t.Errorf("other params lost: %v", cfg.Params)
	}
}

func TestSchemaAndDescription(t *testing.T) {
	tool := offlineTool(t)
	reg, err := tools.NewRegistry(tool)
	if err != nil {
		t.Fatal(err)
	}
	spec := reg.Specs()[0]
	for _, want := range []string{`"sql"`, `"database"`, `"enum":["main","reports"]`, `"risk_level"`, `"required":["sql"]`} {
		if !strings.Contains(string(spec.Parameters), want) {
			t.Errorf("schema %s lacks %s", spec.Parameters, want)
		}
	}
	for _, want := range []string{"main [default]", "reports (monthly reports)", "200 rows"} {
		if !strings.Contains(spec.Description, want) {
			t.Errorf("description %q lacks %q", spec.Description, want)
		}
	}
}

// FuzzArgs: any arguments give a result or an argument error without
// touching the server, never a panic; any SQL classifies without a panic,
// and whatever classifies as a read has no reason not to be one.
func FuzzArgs(f *testing.F) {
	for _, s := range []string{
		`{"sql":"SELECT 1"}`, `{"sql":"DELETE FROM t WHERE id = 1","database":"reports"}`,
		`{"sql":"SELECT 1 /*M! INTO OUTFILE 'x' */"}`, `{"sql":"SELECT 1; DROP TABLE t"}`,
		`{"sql":"EXPLAIN ANALYZE DELETE FROM t"}`, `{"sql":"WITH x AS (SELECT 1) SELECT * FROM x FOR UPDATE"}`,
		`{"sql":1}`, `{"database":"nope","sql":"x"}`, `{"SQL":"DROP TABLE t"}`,
	} {
		f.Add([]byte(s))
	}
	tool := offlineTool(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, d, err := tool.args(raw)
		if err != nil {
			var ae *tools.ArgError
			if !errors.As(err, &ae) {
				t.Fatalf("error %T %v", err, err)
			}
			if r := tools.InvalidArgs(err); r.Executed || !json.Valid([]byte(r.JSON())) {
				t.Fatalf("bad result %s", r.JSON())
			}
			return
		}
		if d == nil || strings.TrimSpace(a.SQL) == "" {
			t.Fatalf("accepted %q with database %v", a.SQL, d)
		}
		st := tool.class.classify(a.SQL)
		if st.kind == kindRead && (st.notRead != "" || hasExecComment(a.SQL)) {
			t.Fatalf("read %q with notRead %q", a.SQL, st.notRead)
		}
		if st.kind != kindRead && st.notRead == "" {
			t.Fatalf("non-read %q without a reason", a.SQL)
		}
	})
}

func TestConfigFromYAML(t *testing.T) {
	var cfg Config
	err := yaml.Unmarshal([]byte(`
default: main
max_rows: 50
statement_timeout: 5s
approved_timeout: 2m
max_open_conns: 8
connections:
  main:
    description: orders
    dsn_env: ORDERS_DSN
    readonly_dsn_env: ORDERS_RO_DSN
`), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Default: "main", MaxRows: 50, StatementTimeout: 5 * time.Second, ApprovedTimeout: 2 * time.Minute, MaxOpenConns: 8,
		Connections: map[string]Connection{"main": {Description: "orders", DSNEnv: "ORDERS_DSN", ReadOnlyDSNEnv: "ORDERS_RO_DSN"}}}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
}

func TestFlavorSessionStatements(t *testing.T) {
	tests := []struct {
		version string
		limit   time.Duration
		want    string
	}{
		{"10.11.19-MariaDB-0+deb12u1", 30 * time.Second, "SET SESSION tx_read_only = 1, max_statement_time = 30.000, sql_mode = '" + sqlrisk.DefaultSQLMode + "'"},
		{"11.4.2-MariaDB", 1500 * time.Millisecond, "SET SESSION tx_read_only = 1, max_statement_time = 1.500, sql_mode = '" + sqlrisk.DefaultSQLMode + "'"},
		{"8.0.36", 30 * time.Second, "SET SESSION transaction_read_only = 1, max_execution_time = 30000, sql_mode = '" + sqlrisk.DefaultSQLMode + "'"},
		{"8.4.0-commercial", time.Microsecond, "SET SESSION transaction_read_only = 1, max_execution_time = 1, sql_mode = '" + sqlrisk.DefaultSQLMode + "'"},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			if got := flavorFromVersion(tt.version).readOnlySession(tt.limit); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
