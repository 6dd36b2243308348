package sqlrisk

import (
	"strings"
	"testing"
)

// TestRoundThree holds issue 16's SQL cases, each with the look-alikes that
// must keep their verdict: conditions that do not depend on the row (10),
// SQL built at run time (2), MariaDB reads confirmed until now (9), and
// statements that print password hashes (6).
func TestRoundThree(t *testing.T) {
	cases := []struct {
		name    string
		sql     string
		want    verdict
		reason  string
		runtime bool // Analysis.RunTime must be set
	}{
		// 10. A WHERE that does not depend on the row is no WHERE.
		{"exists of a constant", "DELETE FROM orders WHERE EXISTS (SELECT 1)", danger, "does not depend on the row", false},
		{"system variable against a constant", "UPDATE orders SET paid = 1 WHERE @@version > 0", danger, "does not depend on the row", false},
		{"global system variable", "DELETE FROM t WHERE @@global.read_only = 0", danger, "does not depend on the row", false},
		{"user variable", "DELETE FROM sessions WHERE @cleanup = 1", danger, "does not depend on the row", false},
		{"uncorrelated count", "DELETE FROM t WHERE (SELECT COUNT(*) FROM audit) > 0", danger, "does not depend on the row", false},
		{"uncorrelated exists with its own alias", "DELETE FROM t WHERE EXISTS (SELECT 1 FROM users u WHERE u.admin = 1)", danger, "does not depend on the row", false},
		{"exists or a real condition", "DELETE FROM t WHERE id = 4 OR EXISTS (SELECT 1)", danger, "does not depend on the row", false},
		{"not exists of a constant", "UPDATE t SET a = 1 WHERE NOT EXISTS (SELECT 1 FROM dual WHERE 1 = 0)", danger, "does not depend on the row", false},
		// … and their look-alikes that do depend on the row.
		{"correlated exists", "DELETE FROM orders WHERE EXISTS (SELECT 1 FROM refunds r WHERE r.order_id = orders.id)", confirm, "DELETE removes rows", false},
		{"correlated through the outer alias", "DELETE o FROM orders o WHERE EXISTS (SELECT 1 FROM refunds r WHERE r.order_id = o.id)", confirm, "", false},
		{"column in a subquery", "DELETE FROM t WHERE id IN (SELECT t_id FROM stale)", confirm, "", false},
		{"variable compared with a column", "DELETE FROM t WHERE id = @target", confirm, "", false},
		{"system variable with a column", "UPDATE t SET a = 1 WHERE created < @@timestamp - 86400 AND id > 5", confirm, "", false},
		{"assignment counts rows", "DELETE FROM t WHERE (@n := @n + 1) < 5", confirm, "", false},
		{"select with exists stays a read", "SELECT * FROM t WHERE EXISTS (SELECT 1)", auto, "", false},

		// 2. SQL built at run time: the LLM cannot vouch for it.
		{"execute", "EXECUTE s", confirm, "built at run time", true},
		{"execute using", "EXECUTE stmt USING @a, @b", confirm, "built at run time", true},
		{"prepare from a variable", "PREPARE s FROM @q", danger, "built at run time", true},
		{"execute immediate of a variable", "EXECUTE IMMEDIATE @q", confirm, "built at run time", true},
		{"execute immediate of concat", "EXECUTE IMMEDIATE CONCAT('DR', 'OP TABLE t')", confirm, "built at run time", true},
		{"execute immediate of a drop", "EXECUTE IMMEDIATE 'DROP TABLE orders'", danger, "EXECUTE IMMEDIATE: DROP TABLE", false},
		{"execute immediate of a quoted drop", `EXECUTE IMMEDIATE 'DELETE FROM t WHERE \'a\' = \'a\''`, danger, "does not depend on the row", false},
		{"execute immediate of a read", "EXECUTE IMMEDIATE 'SELECT 1'", confirm, "EXECUTE IMMEDIATE runs", false},
		{"prepare of a literal is read", "PREPARE s FROM 'SELECT 1'", confirm, "", false},
		{"deallocate", "DEALLOCATE PREPARE s", confirm, "", false},
		// A stored routine's body is not in the text either.
		{"call a procedure", "CALL report_daily()", confirm, "stored procedure", true},
		{"select a stored function", "SELECT app.total(42)", confirm, "stored function", true},
		{"select an unknown function", "SELECT my_udf(id) FROM t", confirm, "not a known built-in", true},
		{"select a sys function stays a read", "SELECT sys.format_bytes(1024)", auto, "", false},

		// 9. MariaDB reads that are auto-run now.
		{"show errors", "SHOW ERRORS", auto, "", false},
		{"show warnings", "SHOW WARNINGS", auto, "", false},
		{"show errors limit", "SHOW ERRORS LIMIT 10", auto, "", false},
		{"show warnings limit offset", "SHOW WARNINGS LIMIT 5, 10", auto, "", false},
		{"show warnings limit with offset word", "SHOW WARNINGS LIMIT 10 OFFSET 5", auto, "", false},
		{"show count of warnings", "SHOW COUNT(*) WARNINGS", auto, "", false},
		{"json_table", `SELECT * FROM JSON_TABLE('[{"a":1}]', '$[*]' COLUMNS (a INT PATH '$.a')) AS jt`, auto, "", false},
		{"json_table lateral", "SELECT o.id, jt.sku FROM orders o, JSON_TABLE(o.items, '$[*]' COLUMNS (sku VARCHAR(32) PATH '$.sku', qty INT PATH '$.qty' DEFAULT '0' ON EMPTY)) jt WHERE o.id = 7", auto, "", false},
		{"json_table nested path", "SELECT * FROM t, JSON_TABLE(t.doc, '$' COLUMNS (id FOR ORDINALITY, NESTED PATH '$.tags[*]' COLUMNS (tag TEXT PATH '$'))) AS j", auto, "", false},
		// … and their look-alikes.
		{"json_table reading a file", "SELECT * FROM JSON_TABLE(LOAD_FILE('/etc/passwd'), '$' COLUMNS (a TEXT PATH '$')) AS jt", danger, "LOAD_FILE", false},
		{"json_table with a stored function", "SELECT * FROM JSON_TABLE(app.f(), '$' COLUMNS (a TEXT PATH '$')) AS jt", confirm, "stored function", true},
		{"json_table locking read", `SELECT * FROM JSON_TABLE('[1]', '$[*]' COLUMNS (a INT PATH '$')) AS jt FOR UPDATE`, confirm, "", false},
		{"json_table with a subquery in columns", "SELECT * FROM JSON_TABLE('[1]', '$' COLUMNS (a INT PATH (SELECT SLEEP(9)))) AS jt", danger, "does not accept", false},
		{"json_table in a delete", "DELETE FROM t WHERE id IN (SELECT a FROM JSON_TABLE('[1]', '$[*]' COLUMNS (a INT PATH '$')) jt)", danger, "does not accept", false},
		{"show errors limit of a variable", "SHOW ERRORS LIMIT @n", danger, "does not accept", false},

		// 6. Statements that print password hashes.
		{"password()", "SELECT PASSWORD('hunter2')", danger, "password hash", false},
		{"old_password()", "SELECT OLD_PASSWORD(name) FROM t", danger, "password hash", false},
		{"authentication_string", "SELECT user, authentication_string FROM mysql.user", danger, "password hashes", false},
		{"Password column", "SELECT User, Password FROM mysql.user", danger, "password hashes", false},
		{"global_priv", "SELECT * FROM mysql.global_priv", danger, "password hashes", false},
		{"show create user", "SHOW CREATE USER app", danger, "password hash", false},
		{"user names only", "SELECT user, host, plugin FROM mysql.user", auto, "", false},
		// Issue 25: without the schema prefix.
		{"hash column without schema", "SELECT authentication_string FROM user", danger, "authentication_string", false},
		{"hash column of any table", "SELECT user, authentication_string FROM global_users", danger, "authentication_string", false},
		{"password column of a bare user", "SELECT User, Password FROM user", danger, "password column", false},
		{"an application's user table", "SELECT id, name FROM user", auto, "", false},
		{"every column of a bare user", "SELECT * FROM user WHERE id = 1", auto, "", false},
	}
	a := newAnalyzer(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := a.Analyze(tc.sql)
			if v := verdictOf(got); v != tc.want {
				t.Fatalf("Analyze(%q) = %s %+v, want %s", tc.sql, v, got, tc.want)
			}
			if tc.reason != "" && !hasReason(got, tc.reason) {
				t.Errorf("Analyze(%q) = %+v, want a reason holding %q", tc.sql, got, tc.reason)
			}
			if (len(got.RunTime) > 0) != tc.runtime {
				t.Errorf("Analyze(%q).RunTime = %q, want set: %v", tc.sql, got.RunTime, tc.runtime)
			}
			for _, r := range got.RunTime {
				if !strings.Contains(r, "built at run time") {
					t.Errorf("RunTime reason %q does not say the SQL is built at run time", r)
				}
			}
		})
	}
}

// FuzzRewrites: the rewrites of round three (JSON_TABLE, SHOW … LIMIT,
// EXECUTE IMMEDIATE, correlated subqueries) never make the analyzer panic
// (Analyze would hide a panic as a danger), and a JSON_TABLE select that
// comes out read-only stays so only while it is one statement.
func FuzzRewrites(f *testing.F) {
	for _, s := range []string{
		`SELECT * FROM JSON_TABLE('[1]', '$[*]' COLUMNS (a INT PATH '$')) AS jt`,
		"SELECT o.id FROM orders o, JSON_TABLE(o.items, '$[*]' COLUMNS (sku VARCHAR(32) PATH '$.sku', NESTED PATH '$.x' COLUMNS (y INT PATH '$'))) jt",
		"SELECT * FROM JSON_TABLE(JSON_TABLE(",
		"SELECT JSON_TABLE( COLUMNS ) ) (",
		"SHOW WARNINGS LIMIT 5, 10",
		"SHOW ERRORS LIMIT",
		"EXECUTE IMMEDIATE 'SELECT 1' USING @a",
		`EXECUTE IMMEDIATE 'it''s \'quoted\''`,
		"EXECUTE IMMEDIATE",
		"DELETE FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.a = t.b AND (SELECT @x := 1))",
	} {
		f.Add(s)
	}
	a, err := New("")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got := a.Analyze(text)
		for _, d := range got.Danger {
			if strings.Contains(d, "analyzer failed") {
				t.Fatalf("Analyze(%q) panicked", text)
			}
		}
		if got.ReadOnly && len(got.RunTime) > 0 {
			t.Fatalf("Analyze(%q) is read-only with SQL built at run time: %+v", text, got)
		}
	})
}
