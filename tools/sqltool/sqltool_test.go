package sqltool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testenv"
	"github.com/countersign/countersign/tools"
	"github.com/go-sql-driver/mysql"
)

func args(sql string) json.RawMessage {
	b, _ := json.Marshal(Args{SQL: sql})
	return b
}

func run(t testing.TB, tool *Tool, sql string, auto bool) tools.Result {
	t.Helper()
	return tool.Run(context.Background(), args(sql), tools.RunOptions{AutoRun: auto})
}

func TestAutoRunReads(t *testing.T) {
	f := newFixture(t)
	tool := f.tool(t, false, nil)
	r := run(t, tool, "SELECT id, v FROM t WHERE id <= 2 ORDER BY id", true)
	f.noSecrets(t, r)
	if r.Status != tools.StatusOK || !r.Executed {
		t.Fatalf("result %s", r.JSON())
	}
	got, _ := json.Marshal(map[string]any{"columns": r.Columns, "rows": r.Rows, "row_count": r.RowCount})
	want := `{"columns":[{"name":"id","type":"INT"},{"name":"v","type":"VARCHAR"}],"row_count":2,"rows":[[1,"v1"],[2,"v2"]]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	for _, sql := range []string{"SHOW TABLES", "DESCRIBE t", "EXPLAIN SELECT * FROM t", "SELECT 1;", "WITH x AS (SELECT 1 AS a) SELECT a FROM x UNION SELECT 2"} {
		if r := run(t, tool, sql, true); r.Status != tools.StatusOK {
			t.Errorf("%s: %s", sql, r.JSON())
		}
	}
}

// The tool refuses anything but a parsed read in an auto-run call before it
// reaches the server.
func TestAutoRunRefusesNonReadsAtTheTool(t *testing.T) {
	f := newFixture(t)
	tool := f.tool(t, false, nil)
	for _, sql := range []string{
		"DELETE FROM t WHERE id = 1",
		"UPDATE t SET v = 'x' WHERE id = 1",
		"INSERT INTO t VALUES (100, 'x')",
		"DROP TABLE t",
		"CREATE TABLE t2 (a INT)",
		"SELECT * FROM t INTO OUTFILE '/tmp/cs_out'",
		"SELECT * FROM t FOR UPDATE",
		"SELECT LOAD_FILE('/etc/passwd')",
		"SELECT 1 /*M! INTO OUTFILE '/tmp/cs_out' */",
		"SET SESSION TRANSACTION READ WRITE",
		"EXPLAIN ANALYZE DELETE FROM t",
		"SELEC 1",
	} {
		t.Run(sql, func(t *testing.T) {
			r := run(t, tool, sql, true)
			if r.Status != tools.StatusDenied || r.Executed {
				t.Fatalf("result %s, want denied", r.JSON())
			}
			if !strings.Contains(r.Message, "did not run") {
				t.Errorf("message %q", r.Message)
			}
		})
	}
	if n := f.count(t, "t"); n != 20 {
		t.Errorf("t has %d rows, want 20", n)
	}
	if got := f.tables(t); got != "t" {
		t.Errorf("tables %q, want t", got)
	}
}

// With the assessor and the tool's own check both bypassed (runReadOnly is
// called directly), the server refuses every write and every DDL, and
// nothing changes.
func TestReadOnlySessionFenceHoldsOnItsOwn(t *testing.T) {
	f := newFixture(t)
	for _, acct := range []struct {
		name     string
		readOnly bool
	}{{"same account", false}, {"read-only account", true}} {
		t.Run(acct.name, func(t *testing.T) {
			tool := f.tool(t, acct.readOnly, func(c *Config) { c.MaxOpenConns = 1 })
			d := tool.dbs["main"]
			for _, sql := range []string{
				"INSERT INTO t VALUES (100, 'x')",
				"UPDATE t SET v = 'x' WHERE id = 1",
				"DELETE FROM t WHERE id = 1",
				"DELETE FROM t",
				"TRUNCATE TABLE t",
				"CREATE TABLE t2 (a INT)",
				"CREATE TEMPORARY TABLE tmp (a INT)",
				"DROP TABLE t",
				"RENAME TABLE t TO t3",
				"ALTER TABLE t ADD COLUMN w INT",
				"CREATE DATABASE " + f.db + "_x",
				// A statement that lifts the session's read-only flag must
				// not help the next call on the same connection.
				"SET SESSION TRANSACTION READ WRITE",
				"DELETE FROM t WHERE id = 2",
				"SET SESSION tx_read_only = 0",
				"INSERT INTO t VALUES (101, 'y')",
			} {
				r := tool.runReadOnly(context.Background(), d, sql)
				f.noSecrets(t, r)
				if strings.HasPrefix(sql, "SET") {
					continue // allowed by the server; the next statement shows it did not help
				}
				if r.Status != tools.StatusError {
					t.Errorf("%s: %s, want an error", sql, r.JSON())
				}
				if !acct.readOnly && strings.HasPrefix(sql, "INSERT") && !strings.Contains(r.Error, "refused by the read-only fence") {
					t.Errorf("%s: error %q does not name the read-only fence", sql, r.Error)
				}
			}
			if n := f.count(t, "t"); n != 20 {
				t.Errorf("t has %d rows, want 20", n)
			}
			if got := f.tables(t); got != "t" {
				t.Errorf("tables %q, want t", got)
			}
			var cols int
			_ = f.admin.QueryRow("SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = ? AND table_name = 't'", f.db).Scan(&cols)
			if cols != 2 {
				t.Errorf("t has %d columns, want 2", cols)
			}
			var dbs int
			_ = f.admin.QueryRow("SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?", f.db+"_x").Scan(&dbs)
			if dbs != 0 {
				t.Errorf("database %s_x was created", f.db)
			}
		})
	}
}

// The read-only transaction does not stop SELECT ... INTO OUTFILE; the
// SELECT-only account does, on its own.
func TestReadOnlyAccountFenceHoldsOnItsOwn(t *testing.T) {
	f := newFixture(t)
	tool := f.tool(t, true, nil)
	path := "/tmp/cs_test_outfile_" + randHex(t, 4)
	r := tool.runReadOnly(context.Background(), tool.dbs["main"], "SELECT * FROM t INTO OUTFILE '"+path+"'")
	if r.Status != tools.StatusError || !strings.Contains(r.Error, "access denied") {
		t.Fatalf("result %s, want access denied", r.JSON())
	}
	f.noSecrets(t, r)
}

func TestAutoRunUsesTheReadOnlyAccount(t *testing.T) {
	f := newFixture(t)
	user := func(tool *Tool, auto bool) string {
		r := run(t, tool, "SELECT CURRENT_USER()", auto)
		if r.Status != tools.StatusOK || len(r.Rows) != 1 {
			t.Fatalf("result %s", r.JSON())
		}
		s, _ := r.Rows[0][0].(string)
		return s[:strings.IndexByte(s, '@')]
	}
	tests := []struct {
		name     string
		readOnly bool
		auto     bool
		want     string
	}{
		{"auto-run with read-only account", true, true, "cs_ro_"},
		{"approved with read-only account", true, false, "cs_rw_"},
		{"auto-run without read-only account", false, true, "cs_rw_"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := user(f.tool(t, tt.readOnly, nil), tt.auto); !strings.HasPrefix(got, tt.want) {
				t.Errorf("ran as %s, want %s…", got, tt.want)
			}
		})
	}
}

func TestApprovedWritesReportRowsAffected(t *testing.T) {
	f := newFixture(t)
	tool := f.tool(t, true, nil)
	tests := []struct {
		sql       string
		affected  int64
		wantCount int
	}{
		{"INSERT INTO t VALUES (21, 'a'), (22, 'b'), (23, 'c')", 3, 23},
		{"UPDATE t SET v = 'changed' WHERE id > 20", 3, 23},
		{"DELETE FROM t WHERE id > 18", 5, 18},
		{"CREATE TABLE t2 (a INT)", 0, 18},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			r := run(t, tool, tt.sql, false)
			f.noSecrets(t, r)
			if r.Status != tools.StatusOK || r.RowsAffected == nil || *r.RowsAffected != tt.affected {
				t.Fatalf("result %s, want %d rows affected", r.JSON(), tt.affected)
			}
			if n := f.count(t, "t"); n != tt.wantCount {
				t.Errorf("t has %d rows, want %d", n, tt.wantCount)
			}
		})
	}
	if got := f.tables(t); got != "t,t2" {
		t.Errorf("tables %q", got)
	}
}

func TestApprovedErrorRollsBack(t *testing.T) {
	f := newFixture(t)
	tool := f.tool(t, false, nil)
	r := run(t, tool, "INSERT INTO t VALUES (30, 'new'), (1, 'duplicate')", false)
	if r.Status != tools.StatusError || !r.Executed || !strings.Contains(r.Error, "Duplicate entry") {
		t.Fatalf("result %s", r.JSON())
	}
	if n := f.count(t, "t"); n != 20 {
		t.Errorf("t has %d rows, want 20", n)
	}
}

func TestMultiStatementsAreOff(t *testing.T) {
	f := newFixture(t)
	tool := f.tool(t, false, func(c *Config) {
		sep := "?"
		if strings.Contains(f.rwDSN, "?") {
			sep = "&"
		}
		c.Connections["main"] = Connection{DSN: f.rwDSN + sep + "multiStatements=true"}
	})
	for _, sql := range []string{
		"DELETE FROM t WHERE id = 1; DELETE FROM t WHERE id = 2",
		"SELECT 1; DROP TABLE t",
	} {
		r := run(t, tool, sql, false)
		if r.Status != tools.StatusError || !strings.Contains(r.Error, "syntax error") {
			t.Errorf("%s: %s, want a syntax error", sql, r.JSON())
		}
	}
	if n := f.count(t, "t"); n != 20 {
		t.Errorf("t has %d rows, want 20", n)
	}
	if got := f.tables(t); got != "t" {
		t.Errorf("tables %q", got)
	}
}

func TestTimeout(t *testing.T) {
	f := newFixture(t)
	tool := f.tool(t, true, func(c *Config) { c.StatementTimeout = time.Second })
	start := time.Now()
	r := run(t, tool, "SELECT SLEEP(5)", true)
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("took %s", took)
	}
	if r.Status != tools.StatusError || !strings.HasPrefix(r.Error, "timeout:") || !strings.Contains(r.Error, "1s") {
		t.Fatalf("result %s, want a timeout", r.JSON())
	}
	// The connection is usable afterwards.
	if r := run(t, tool, "SELECT 1", true); r.Status != tools.StatusOK {
		t.Errorf("after timeout: %s", r.JSON())
	}
}

func TestApprovedTimeout(t *testing.T) {
	f := newFixture(t)
	tool := f.tool(t, false, func(c *Config) { c.ApprovedTimeout = time.Second })
	r := run(t, tool, "SELECT SLEEP(7.5)", false)
	if r.Status != tools.StatusError || !strings.HasPrefix(r.Error, "timeout:") {
		t.Fatalf("result %s, want a timeout", r.JSON())
	}
	// The statement was stopped on the server too, not only abandoned.
	var n int
	var err error
	if !testenv.Within(3*time.Second, func() bool {
		err = f.admin.QueryRow("SELECT COUNT(*) FROM information_schema.processlist WHERE info = 'SELECT SLEEP(7.5)'").Scan(&n)
		return err != nil || n == 0
	}) {
		t.Fatal("the statement still runs on the server after the timeout")
	}
	if err != nil {
		t.Fatal(err)
	}
}

func TestRowCap(t *testing.T) {
	f := newFixture(t)
	tool := f.tool(t, false, func(c *Config) { c.MaxRows = 5 })
	tests := []struct {
		name     string
		auto     bool
		wantNote string
	}{
		{"auto-run stops reading", true, "showing 5 of at least 6 rows"},
		{"approved counts the rest", false, "showing 5 of 20 rows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tool, "SELECT * FROM t ORDER BY id", tt.auto)
			if r.Status != tools.StatusOK || len(r.Rows) != 5 || !r.Truncated || r.Note != tt.wantNote || *r.RowCount != 5 {
				t.Fatalf("result %s", r.JSON())
			}
			// The pool still works after a capped read.
			if r := run(t, tool, "SELECT COUNT(*) FROM t", tt.auto); r.Status != tools.StatusOK {
				t.Fatalf("after cap: %s", r.JSON())
			}
		})
	}
	if r := run(t, tool, "SELECT * FROM t WHERE id <= 5", true); r.Truncated || r.Note != "" {
		t.Errorf("exactly the cap: %s", r.JSON())
	}
	t.Run("byte cap", func(t *testing.T) {
		tool := f.tool(t, false, func(c *Config) { c.MaxResultBytes = 100 })
		r := run(t, tool, "SELECT REPEAT('x', 40) FROM t", true)
		if r.Status != tools.StatusOK || len(r.Rows) != 3 || !r.Truncated || r.Note != "showing 3 of at least 4 rows (the result is capped at 100 bytes)" {
			t.Fatalf("result %s", r.JSON())
		}
	})
}

func TestValues(t *testing.T) {
	f := newFixture(t)
	f.exec(t, "CREATE TABLE "+f.db+".vals (n INT NULL, vb VARBINARY(4), b BLOB, bad VARCHAR(10) CHARACTER SET latin1, "+
		"dt DATETIME, d DATE, ts6 DATETIME(6), tm TIME, dec1 DECIMAL(10,3), big BIGINT UNSIGNED, neg BIGINT, "+
		"fl FLOAT, db DOUBLE, j JSON, bit1 BIT(8), txt TEXT, long1 TEXT, yr YEAR)",
		"INSERT INTO "+f.db+".vals VALUES (NULL, x'00ff', x'cafe', x'636166e9', '2024-02-29 13:14:15', '2024-02-29', "+
			"'2024-02-29 13:14:15.123456', '-01:02:03', 12345.678, 18446744073709551615, -9223372036854775808, "+
			"1.1, 2.5, '{\"a\": 1}', b'10100101', 'héllo', REPEAT('x', 100), 2024)")
	tool := f.tool(t, true, func(c *Config) { c.MaxCellBytes = 10 })
	r := run(t, tool, "SELECT * FROM vals", true)
	if r.Status != tools.StatusOK || len(r.Rows) != 1 {
		t.Fatalf("result %s", r.JSON())
	}
	got, _ := json.Marshal(r.Rows[0])
	want := `[null,"0x00ff","0xcafe","café","2024-02-29","2024-02-29","2024-02-29","-01:02:03","12345.678",18446744073709551615,-9223372036854775808,1.1,2.5,"{\"a\": 1}","0xa5","héllo","xxxxxxxxxx",2024]`
	// Cells are capped at 10 bytes, so the datetimes are cut too; check
	// them again below with the default cap.
	if string(got) != want {
		t.Errorf("row\n got  %s\n want %s", got, want)
	}
	if !r.Truncated || !strings.Contains(r.Note, "cut to 10 bytes") {
		t.Errorf("cut values not noted: truncated %v note %q", r.Truncated, r.Note)
	}
	tool = f.tool(t, true, nil)
	r = run(t, tool, "SELECT dt, d, ts6, CAST(NULL AS DATETIME) FROM vals", true)
	got, _ = json.Marshal(r.Rows)
	if want := `[["2024-02-29 13:14:15","2024-02-29","2024-02-29 13:14:15.123456",null]]`; string(got) != want {
		t.Errorf("times\n got  %s\n want %s", got, want)
	}
	var types []string
	for _, c := range r.Columns {
		types = append(types, c.Type)
	}
	if got := strings.Join(types, ","); got != "DATETIME,DATE,DATETIME,DATETIME" {
		t.Errorf("types %s", got)
	}
}

func TestServerErrorsInPlainWords(t *testing.T) {
	f := newFixture(t)
	tool := f.tool(t, true, nil)
	tests := []struct {
		name string
		sql  string
		auto bool
		want string
	}{
		{"syntax error with position", "SELECT * FROM t WHERE id = = 1", false, "syntax error near '= 1' at line 1 (error 1064)"},
		{"syntax error at the end", "SELECT * FROM t WHERE", false, "syntax error at the end of the statement (line 1) (error 1064)"},
		{"syntax error on line 2", "SELECT *\nFROM t WHER id = 1", false, "syntax error near 'id = 1' at line 2 (error 1064)"},
		{"access denied to a table", "SELECT * FROM mysql.user", true, "access denied: SELECT command denied to user 'cs_ro_"},
		{"unknown table", "SELECT * FROM nope", true, "unknown table: Table '" + f.db + ".nope' doesn't exist (error 1146)"},
		{"unknown column", "SELECT nope FROM t", true, "unknown column: Unknown column 'nope' in '"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tool, tt.sql, tt.auto)
			f.noSecrets(t, r)
			if r.Status != tools.StatusError || !strings.HasPrefix(r.Error, tt.want) {
				t.Errorf("error %q, want it to start with %q", r.Error, tt.want)
			}
		})
	}
	t.Run("unknown database", func(t *testing.T) {
		// Only an account with global privileges learns that a database
		// does not exist; others get access denied (above).
		root := f.tool(t, false, func(c *Config) { c.Connections["main"] = Connection{DSN: testenv.MySQLDSN(t)} })
		r := run(t, root, "SHOW TABLES FROM nope_db", true)
		if want := "unknown database: Unknown database 'nope_db' (error 1049)"; r.Error != want {
			t.Errorf("error %q, want %q", r.Error, want)
		}
	})
}

func TestPasswordNeverShown(t *testing.T) {
	f := newFixture(t)
	wrong := strings.Replace(f.rwDSN, f.rwPass, f.rwPass+"-wrong", 1)
	badDB := strings.Replace(f.rwDSN, "/"+f.db, "/"+f.db+"_missing", 1)
	tests := []struct {
		name string
		dsn  string
		want string
	}{
		{"wrong password", wrong, "access denied"},
		{"database it may not use", badDB, "access denied"},
		{"nothing listening", withAccount(t, "u@tcp(127.0.0.1:1)/", "u", f.rwPass, f.db), "could not connect"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := f.tool(t, false, func(c *Config) { c.Connections["main"] = Connection{DSN: tt.dsn} })
			for _, auto := range []bool{true, false} {
				r := run(t, tool, "SELECT 1", auto)
				f.noSecrets(t, r)
				if strings.Contains(r.JSON(), f.rwPass) || !strings.Contains(r.Error, tt.want) {
					t.Errorf("auto %v: %s, want an error with %q", auto, r.JSON(), tt.want)
				}
				p := tool.Preview(context.Background(), args("DELETE FROM t WHERE id = 1"))
				if strings.Contains(p.Err, f.rwPass) || p.Err == "" {
					t.Errorf("preview error %q", p.Err)
				}
			}
		})
	}
	t.Run("invalid DSN in config", func(t *testing.T) {
		for _, dsn := range []string{
			"u:" + f.rwPass + "@tcp(127.0.0.1:1)/db?strict=true",
			"u:" + f.rwPass + "@tcp(127.0.0.1:1)db",
			"u:" + f.rwPass + "@tcp(127.0.0.1:1)/db?tls=%zz" + f.rwPass,
			"u:" + f.rwPass + "@tcp(127.0.0.1:1)/db?readTimeout=" + f.rwPass,
		} {
			_, err := New(Config{Connections: map[string]Connection{"main": {DSN: dsn}}})
			if err == nil || strings.Contains(err.Error(), f.rwPass) {
				t.Errorf("New error %v", err)
			}
			if got := Redact(dsn); strings.Contains(got, f.rwPass) {
				t.Errorf("Redact = %q", got)
			}
		}
	})
	if got := Redact(f.rwDSN); strings.Contains(got, f.rwPass) || !strings.Contains(got, "xxxxx") {
		t.Errorf("Redact = %q", got)
	}
}

func TestPreviewDelete(t *testing.T) {
	f := newFixture(t)
	for _, readOnly := range []bool{false, true} {
		tool := f.tool(t, readOnly, nil)
		tests := []struct {
			name    string
			sql     string
			wantMin int64
			wantMax int64
		}{
			{"delete by primary key range", "DELETE FROM t WHERE id > 15", 1, 20},
			{"delete all", "DELETE FROM t", 15, 30},
			{"update by value", "UPDATE t SET v = 'x' WHERE v = 'v3'", 1, 30},
			{"delete with limit", "DELETE FROM t WHERE id < 5 ORDER BY id LIMIT 2", 1, 20},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				p := tool.Preview(context.Background(), args(tt.sql))
				if p.Err != "" || p.Estimate < tt.wantMin || p.Estimate > tt.wantMax || !strings.Contains(p.Summary, "EXPLAIN estimates") || len(p.Items) == 0 {
					t.Errorf("preview %+v, want an estimate in [%d, %d]", p, tt.wantMin, tt.wantMax)
				}
				if p.Total > len(p.Items) {
					// Total counts items (plan lines); a card would say
					// "and N more" of lines that do not exist.
					t.Errorf("preview Total %d but %d items", p.Total, len(p.Items))
				}
			})
		}
	}
	if n := f.count(t, "t"); n != 20 {
		t.Errorf("t has %d rows after previews, want 20", n)
	}
	tool := f.tool(t, true, nil)
	for _, tt := range []struct {
		name, sql, wantErr string
	}{
		{"select has none", "SELECT * FROM t", ""},
		{"insert has none", "INSERT INTO t VALUES (50, 'x')", ""},
		{"unknown table", "DELETE FROM nope WHERE id = 1", "unknown table"},
		{"executable comment is never explained", "DELETE /*M! QUICK */ FROM t WHERE id = 1", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := tool.Preview(context.Background(), args(tt.sql))
			if tt.wantErr == "" && (p.Err != "" || p.Summary != "") {
				t.Errorf("preview %+v, want none", p)
			}
			if tt.wantErr != "" && !strings.Contains(p.Err, tt.wantErr) {
				t.Errorf("preview %+v, want error %q", p, tt.wantErr)
			}
		})
	}
	if p := tool.Preview(context.Background(), json.RawMessage(`{"sql":1}`)); !strings.Contains(p.Err, `argument "sql"`) {
		t.Errorf("bad args preview %+v", p)
	}
}

func TestArgumentErrors(t *testing.T) {
	f := newFixture(t)
	tool := f.tool(t, false, nil)
	tests := []struct {
		name, raw, want string
	}{
		{"missing sql", `{}`, `argument "sql": is required`},
		{"blank sql", `{"sql":"  "}`, `argument "sql": is required`},
		{"sql not a string", `{"sql":["SELECT 1"]}`, `argument "sql": must be a string, not array`},
		{"unknown database", `{"sql":"SELECT 1","database":"other"}`, `argument "database": "other" is not a configured database (have main)`},
		{"unknown argument", `{"sql":"SELECT 1","db":"main"}`, `argument "db": is not an argument`},
		{"not JSON", `SELECT 1`, `arguments: must be a JSON object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tool.Run(context.Background(), json.RawMessage(tt.raw), tools.RunOptions{})
			if r.Status != tools.StatusError || r.Executed || !strings.HasPrefix(r.Error, tt.want) {
				t.Errorf("result %s, want error %q", r.JSON(), tt.want)
			}
		})
	}
	if r := tool.Run(context.Background(), json.RawMessage(`{"sql":"SELECT 1","database":"main","risk_level":"low"}`), tools.RunOptions{AutoRun: true}); r.Status != tools.StatusOK {
		t.Errorf("named database with risk_level: %s", r.JSON())
	}
}

func TestProgressIsReported(t *testing.T) {
	f := newFixture(t)
	tool := f.tool(t, false, nil)
	var calls int
	r := tool.Run(context.Background(), args("SELECT SLEEP(3.5)"), tools.RunOptions{Progress: func(p tools.Progress) {
		calls++
		if p.ElapsedMS < 2000 {
			t.Errorf("progress at %d ms", p.ElapsedMS)
		}
	}})
	if r.Status != tools.StatusOK || calls != 1 {
		t.Errorf("result %s, %d progress calls, want 1", r.JSON(), calls)
	}
}

// A user-level lock is not undone by the read-only transaction's rollback:
// taken by an auto-run call, it would stay with the pooled connection and
// stall whatever application waits on it. The tool refuses the lock
// functions, and with that check bypassed the call still leaves no lock
// behind.
func TestAutoRunLeavesNoUserLock(t *testing.T) {
	f := newFixture(t)
	tool := f.tool(t, false, func(c *Config) { c.MaxOpenConns = 1 })
	lock := "cs_lock_" + randHex(t, 4)
	isFree := func() bool {
		t.Helper()
		var free int
		if err := f.admin.QueryRow("SELECT IS_FREE_LOCK(?)", lock).Scan(&free); err != nil {
			t.Fatal(err)
		}
		return free == 1
	}
	for _, sql := range []string{
		"SELECT GET_LOCK('" + lock + "', 0)",
		"SELECT id FROM t WHERE id = 1 AND GET_LOCK('" + lock + "', 0) = 1",
		"SELECT RELEASE_LOCK('" + lock + "')",
		"SELECT RELEASE_ALL_LOCKS()",
	} {
		r := run(t, tool, sql, true)
		if r.Status != tools.StatusDenied || !strings.Contains(r.Error, "lock") {
			t.Errorf("%s: %s, want it refused as a lock", sql, r.JSON())
		}
	}
	r := tool.runReadOnly(context.Background(), tool.dbs["main"], "SELECT GET_LOCK('"+lock+"', 0)")
	if r.Status != tools.StatusOK {
		t.Fatalf("bypassed GET_LOCK: %s", r.JSON())
	}
	if !isFree() {
		t.Errorf("lock %s is still held after the auto-run call", lock)
	}
}

// Whatever a statement did to the read pool's session, the next auto-run
// call runs under the sql_mode the parser assumes.
func TestReadOnlySessionRepinsSQLMode(t *testing.T) {
	f := newFixture(t)
	tool := f.tool(t, false, func(c *Config) { c.MaxOpenConns = 1 })
	d := tool.dbs["main"]
	_ = tool.runReadOnly(context.Background(), d, "SET SESSION sql_mode = 'ANSI_QUOTES'")
	r := tool.runReadOnly(context.Background(), d, "SELECT @@SESSION.sql_mode")
	if r.Status != tools.StatusOK || len(r.Rows) != 1 {
		t.Fatalf("result %s", r.JSON())
	}
	if got, _ := r.Rows[0][0].(string); strings.Contains(got, "ANSI_QUOTES") || !strings.Contains(got, "STRICT_TRANS_TABLES") {
		t.Errorf("sql_mode %q leaked into the next call", got)
	}
}

// A DSN asking for a multi-byte client charset (gbk lets a character
// swallow the backslash after it) still talks utf8mb4, the charset the
// parser assumes, on both pools.
func TestConnectionCharsetIsPinned(t *testing.T) {
	f := newFixture(t)
	tool := f.tool(t, false, func(c *Config) {
		conn := c.Connections["main"]
		cfg, err := mysql.ParseDSN(conn.DSN)
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.Apply(mysql.Charset("gbk", "gbk_chinese_ci")); err != nil {
			t.Fatal(err)
		}
		conn.DSN = cfg.FormatDSN()
		c.Connections["main"] = conn
	})
	for _, auto := range []bool{true, false} {
		r := run(t, tool, "SELECT @@character_set_client, @@character_set_connection", auto)
		if r.Status != tools.StatusOK || len(r.Rows) != 1 {
			t.Fatalf("auto=%v: result %s", auto, r.JSON())
		}
		for i, v := range r.Rows[0] {
			if s, _ := v.(string); s != "utf8mb4" {
				t.Errorf("auto=%v: column %d = %v, want utf8mb4", auto, i, v)
			}
		}
	}
}

// Even an approved LOAD DATA LOCAL INFILE cannot read the bot's disk, and
// a DSN asking for allowAllFiles does not change that.
func TestLocalInfileIsRefused(t *testing.T) {
	f := newFixture(t)
	path := filepath.Join(t.TempDir(), "rows.tsv")
	if err := os.WriteFile(path, []byte("900\tfrom-the-bot\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tool := f.tool(t, false, func(c *Config) {
		cfg, err := mysql.ParseDSN(f.rwDSN)
		if err != nil {
			t.Fatal(err)
		}
		cfg.AllowAllFiles = true
		c.Connections["main"] = Connection{DSN: cfg.FormatDSN()}
	})
	r := run(t, tool, "LOAD DATA LOCAL INFILE '"+path+"' INTO TABLE t", false)
	if r.Status != tools.StatusError || !strings.Contains(r.Error, "not registered") {
		t.Errorf("result %s, want the driver's refusal of the local file", r.JSON())
	}
	f.noSecrets(t, r)
	if n := f.count(t, "t"); n != 20 {
		t.Errorf("t has %d rows, want 20", n)
	}
}
