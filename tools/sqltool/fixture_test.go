package sqltool

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testenv"
	"github.com/countersign/countersign/tools"
	"github.com/go-sql-driver/mysql"
)

// fixture is a throwaway database on the test MariaDB with two accounts: rw
// (everything on the database) and ro (SELECT only), both with passwords.
type fixture struct {
	admin  *sql.DB
	db     string
	rwDSN  string
	roDSN  string
	rwPass string
	roPass string
}

func randHex(t testing.TB, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// newFixture creates database cs_test_<random> with table t(id, v) holding
// rows 1..20, and its two accounts; everything is dropped at the end.
func newFixture(t testing.TB) *fixture {
	t.Helper()
	rootDSN := testenv.MySQLDSN(t)
	admin, err := sql.Open("mysql", rootDSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	suffix := randHex(t, 4)
	f := &fixture{
		admin:  admin,
		db:     "cs_test_" + suffix,
		rwPass: "rw-S3cret-" + randHex(t, 6),
		roPass: "ro-S3cret-" + randHex(t, 6),
	}
	rw, ro := "cs_rw_"+suffix, "cs_ro_"+suffix
	f.exec(t,
		"CREATE DATABASE "+f.db,
		"CREATE TABLE "+f.db+".t (id INT PRIMARY KEY, v VARCHAR(20))",
		"INSERT INTO "+f.db+".t SELECT seq, CONCAT('v', seq) FROM "+f.db+".seq_1_to_20",
	)
	for _, host := range []string{"%", "localhost", "127.0.0.1"} {
		f.exec(t,
			"CREATE USER '"+rw+"'@'"+host+"' IDENTIFIED BY '"+f.rwPass+"'",
			"GRANT ALL ON "+f.db+".* TO '"+rw+"'@'"+host+"'",
			"CREATE USER '"+ro+"'@'"+host+"' IDENTIFIED BY '"+f.roPass+"'",
			"GRANT SELECT ON "+f.db+".* TO '"+ro+"'@'"+host+"'",
		)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_, _ = admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+f.db)
		for _, host := range []string{"%", "localhost", "127.0.0.1"} {
			_, _ = admin.ExecContext(ctx, "DROP USER IF EXISTS '"+rw+"'@'"+host+"', '"+ro+"'@'"+host+"'")
		}
	})
	f.rwDSN = withAccount(t, rootDSN, rw, f.rwPass, f.db)
	f.roDSN = withAccount(t, rootDSN, ro, f.roPass, f.db)
	return f
}

func withAccount(t testing.TB, dsn, user, pass, db string) string {
	t.Helper()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.User, cfg.Passwd, cfg.DBName = user, pass, db
	return cfg.FormatDSN()
}

func (f *fixture) exec(t testing.TB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := f.admin.ExecContext(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func (f *fixture) count(t testing.TB, table string) int {
	t.Helper()
	var n int
	if err := f.admin.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM "+f.db+"."+table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

func (f *fixture) tables(t testing.TB) string {
	t.Helper()
	rows, err := f.admin.QueryContext(context.Background(), "SELECT table_name FROM information_schema.tables WHERE table_schema = ? ORDER BY 1", f.db)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	return strings.Join(names, ",")
}

// tool builds the tool on the fixture; readOnly says whether auto-run
// calls get the SELECT-only account. edit may change the config.
func (f *fixture) tool(t testing.TB, readOnly bool, edit func(*Config)) *Tool {
	t.Helper()
	c := Connection{DSN: f.rwDSN, Description: "test database"}
	if readOnly {
		c.ReadOnlyDSN = f.roDSN
	}
	cfg := Config{Connections: map[string]Connection{"main": c}, StatementTimeout: 10 * time.Second}
	if edit != nil {
		edit(&cfg)
	}
	tool, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = tool.Close() })
	return tool
}

// noSecrets fails when a result shows a password of the fixture.
func (f *fixture) noSecrets(t testing.TB, r tools.Result) {
	t.Helper()
	js := r.JSON()
	for _, p := range []string{f.rwPass, f.roPass} {
		if strings.Contains(js, p) {
			t.Errorf("result shows a password: %s", js)
		}
	}
}
