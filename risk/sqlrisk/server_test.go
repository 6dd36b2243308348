package sqlrisk

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/countersign/countersign/internal/testenv"
)

// openPinned opens the test MariaDB the way the SQL tool does: the sql_mode
// pinned to DefaultSQLMode, multi-statements off.
func openPinned(t *testing.T) *sql.DB {
	t.Helper()
	cfg, err := mysql.ParseDSN(testenv.MySQLDSN(t))
	if err != nil {
		t.Fatalf("parse test DSN: %v", err)
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["sql_mode"] = "'" + DefaultSQLMode + "'"
	cfg.MultiStatements = false
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatalf("open test MariaDB: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestServerTakesDefaultSQLMode: the real server accepts the pinned sql_mode
// and keeps every mode of it.
func TestServerTakesDefaultSQLMode(t *testing.T) {
	db := openPinned(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got string
	if err := db.QueryRowContext(ctx, "SELECT @@SESSION.sql_mode").Scan(&got); err != nil {
		t.Fatalf("read sql_mode: %v", err)
	}
	have := strings.Split(got, ",")
	for _, m := range strings.Split(DefaultSQLMode, ",") {
		if !slices.Contains(have, m) {
			t.Errorf("server sql_mode %q lacks %s", got, m)
		}
	}
}

// TestServerReadsTextLikeTheParser checks, on the real server under the
// pinned sql_mode, the readings the analyzer's verdicts stand on: where a
// comment or a literal ends, and what an executable comment does.
func TestServerReadsTextLikeTheParser(t *testing.T) {
	db := openPinned(t)
	cases := []struct {
		name string
		sql  string
		want string // the single value the server returns
		// verdict the analyzer gives the same text
		verdict verdict
	}{
		{"double dash without a space is minus", "SELECT 1--1", "2", auto},
		{"double dash and space starts a comment", "SELECT 1 -- + 5\n+ 1", "2", auto},
		{"hash starts a comment", "SELECT 1 # + 5\n+ 1", "2", auto},
		{"double quotes are a string", `SELECT "a;b"`, "a;b", auto},
		{"backslash escapes a quote", `SELECT 'a\';b'`, "a';b", auto},
		{"doubled quote", `SELECT 'a'';b'`, "a';b", auto},
		{"block comment ends at the first close", "SELECT 1 /* x */ + 1", "2", auto},
		{"executable comment runs", "SELECT 2 /*! + 40 */", "42", danger},
		{"versioned executable comment runs", "SELECT 2 /*!50000 + 40 */", "42", danger},
		{"mariadb executable comment runs", "SELECT 2 /*M!100000 + 40 */", "42", danger},
		{"tidb comment is a comment here", "SELECT 2 /*T![clustered_index] + 40 */", "2", danger},
		{"trailing semicolon", "SELECT 7;", "7", auto},
		{"hash comment runs past a carriage return", "SELECT 1 #x\r+ 1", "1", auto},
		{"double dash and carriage return starts a comment", "SELECT 1 --\r+ 1", "1", auto},
		{"double dash and tab starts a comment", "SELECT 1 --\t+ 5\n+ 1", "2", auto},
		{"block comment opener is not its closer", "SELECT 1 /*/ + 5 */ + 1", "2", auto},
		{"adjacent strings concatenate", `SELECT 'a' "b" 'c'`, "abc", auto},
		{"escaped double quote", `SELECT "a\"b"`, `a"b`, auto},
		{"doubled double quote", `SELECT "a""b"`, `a"b`, auto},
		{"hex literal", "SELECT X'41'", "A", auto},
		{"charset introducer", "SELECT _latin1'a' COLLATE latin1_bin", "a", auto},
		{"backquotes doubled", "SELECT 1 AS `a``b`", "1", auto},
		{"backslash before a non-special letter", `SELECT 'a\qb'`, "aqb", auto},
		{"date literal", "SELECT DATE '2026-11-22'", "2026-11-22", auto},
	}
	a := newAnalyzer(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var got string
			if err := db.QueryRowContext(ctx, tc.sql).Scan(&got); err != nil {
				t.Fatalf("server: %q: %v", tc.sql, err)
			}
			if got != tc.want {
				t.Errorf("server: %q = %q, want %q", tc.sql, got, tc.want)
			}
			if v := verdictOf(a.Analyze(tc.sql)); v != tc.verdict {
				t.Errorf("Analyze(%q) = %s, want %s", tc.sql, v, tc.verdict)
			}
		})
	}
}

// TestServerRunsAutoCasesReadOnly: every read-only case of TestAnalyze's
// kind that needs no table is accepted by the server inside a read-only
// transaction, so the parser does not call read-only what the server sees
// as a write.
func TestServerRunsAutoCasesReadOnly(t *testing.T) {
	db := openPinned(t)
	a := newAnalyzer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	setup := []string{
		"CREATE DATABASE IF NOT EXISTS sqlrisk_test",
		"CREATE TABLE IF NOT EXISTS sqlrisk_test.t (id INT PRIMARY KEY, a INT, j JSON)",
		"CREATE TABLE IF NOT EXISTS sqlrisk_test.u (id INT PRIMARY KEY, x INT)",
	}
	for _, s := range setup {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatalf("setup %q: %v", s, err)
		}
	}
	t.Cleanup(func() { db.ExecContext(context.Background(), "DROP DATABASE IF EXISTS sqlrisk_test") })
	for _, q := range []string{
		"SELECT * FROM sqlrisk_test.t",
		"SELECT t.id, COUNT(*) n FROM sqlrisk_test.t t LEFT JOIN sqlrisk_test.u u ON u.id = t.id GROUP BY t.id HAVING n > 0 ORDER BY n DESC LIMIT 5",
		"WITH x AS (SELECT id FROM sqlrisk_test.t) SELECT * FROM x",
		"SELECT id FROM sqlrisk_test.t UNION SELECT id FROM sqlrisk_test.u",
		"SELECT JSON_EXTRACT(j, '$.a'), NOW(), CONCAT('a', 'b') FROM sqlrisk_test.t",
		"SHOW TABLES FROM sqlrisk_test",
		"SHOW CREATE TABLE sqlrisk_test.t",
		"SHOW ENGINE INNODB STATUS",
		"SHOW BINARY LOGS",
		"DESCRIBE sqlrisk_test.t",
		"EXPLAIN SELECT * FROM sqlrisk_test.t WHERE id = 1",
		"SELECT @n := COUNT(*) FROM sqlrisk_test.t",
		"SELECT 1;",
		"EXPLAIN EXTENDED SELECT * FROM sqlrisk_test.t WHERE id = 1",
		"EXPLAIN PARTITIONS SELECT * FROM sqlrisk_test.t WHERE id = 1",
		"ANALYZE SELECT * FROM sqlrisk_test.t WHERE id = 1",
		"ANALYZE FORMAT=JSON SELECT * FROM sqlrisk_test.t",
		"SELECT * FROM sqlrisk_test.t WHERE CAST(id AS CHAR) SOUNDS LIKE 'x'",
		"SELECT DATE '2026-11-01', TIMESTAMP '2026-11-01 00:00:00', TIME '10:00:00'",
		"SELECT user, host FROM mysql.user",
	} {
		if r := a.Analyze(q); !r.ReadOnly {
			t.Errorf("Analyze(%q) = %+v, want read-only", q, r)
			continue
		}
		tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			t.Fatalf("begin read-only: %v", err)
		}
		rows, err := tx.QueryContext(ctx, q)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		tx.Rollback()
		me, isMySQL := errors.AsType[*mysql.MySQLError](err)
		switch {
		case err == nil:
		case isMySQL && me.Number == 1381: // binary logging is off on the test server
		default:
			t.Errorf("server refused read-only %q: %v", q, err)
		}
	}
}

// TestServerGetLockOutlivesReadOnly: GET_LOCK succeeds inside a read-only
// transaction and its lock outlives it on the same connection, so only the
// analyzer keeps it from being auto-run (it is a danger).
func TestServerGetLockOutlivesReadOnly(t *testing.T) {
	db := openPinned(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatalf("connection: %v", err)
	}
	defer conn.Close()
	const q = "SELECT GET_LOCK('sqlrisk_test_lock', 0)"
	if v := verdictOf(newAnalyzer(t).Analyze(q)); v != danger {
		t.Fatalf("Analyze(%q) = %s, want danger", q, v)
	}
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatalf("begin read-only: %v", err)
	}
	var got sql.NullInt64
	if err := tx.QueryRowContext(ctx, q).Scan(&got); err != nil {
		t.Fatalf("GET_LOCK in a read-only transaction: %v", err)
	}
	tx.Rollback()
	if !got.Valid || got.Int64 != 1 {
		t.Fatalf("GET_LOCK = %v, want 1", got)
	}
	var holder sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT IS_USED_LOCK('sqlrisk_test_lock')").Scan(&holder); err != nil {
		t.Fatalf("IS_USED_LOCK: %v", err)
	}
	if !holder.Valid {
		t.Fatalf("the lock was released with the read-only transaction; GET_LOCK could be confirmed only")
	}
	conn.ExecContext(ctx, "DO RELEASE_LOCK('sqlrisk_test_lock')")
}
