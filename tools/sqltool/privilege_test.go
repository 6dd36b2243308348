package sqltool

import (
	"context"
	"database/sql"
	"testing"

	"github.com/countersign/countersign/internal/testenv"
)

// TestFilePrivilege reads the FILE privilege off a real MariaDB: not held
// by the fixture's accounts (ALL on one database is not FILE), held once
// granted directly, through a role, and by root.
func TestFilePrivilege(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	has := func(dsn string) bool {
		t.Helper()
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		ok, err := FilePrivilege(ctx, db)
		if err != nil {
			t.Fatalf("FilePrivilege: %v", err)
		}
		return ok
	}
	if has(f.roDSN) || has(f.rwDSN) {
		t.Fatal("an account without FILE is said to hold it")
	}
	if !has(testenv.MySQLDSN(t)) {
		t.Error("root's FILE (ALL PRIVILEGES ON *.*) was not seen")
	}
	ro := "cs_ro_" + f.db[len("cs_test_"):]
	role := "cs_file_" + f.db[len("cs_test_"):]
	t.Cleanup(func() { _, _ = f.admin.ExecContext(ctx, "DROP ROLE IF EXISTS "+role) })
	for _, host := range []string{"%", "localhost", "127.0.0.1"} {
		f.exec(t, "GRANT FILE ON *.* TO '"+ro+"'@'"+host+"'")
	}
	if !has(f.roDSN) {
		t.Error("a direct GRANT FILE was not seen")
	}
	for _, host := range []string{"%", "localhost", "127.0.0.1"} {
		f.exec(t, "REVOKE FILE ON *.* FROM '"+ro+"'@'"+host+"'")
	}
	if has(f.roDSN) {
		t.Fatal("FILE still seen after REVOKE")
	}
	f.exec(t, "CREATE ROLE "+role, "GRANT FILE ON *.* TO "+role)
	for _, host := range []string{"%", "localhost", "127.0.0.1"} {
		f.exec(t, "GRANT "+role+" TO '"+ro+"'@'"+host+"'")
	}
	if !has(f.roDSN) {
		t.Error("FILE through a role the account may use was not seen")
	}
}

func TestHasFile(t *testing.T) {
	for line, want := range map[string]bool{
		"GRANT FILE ON *.* TO `ro`@`%`":                                       true,
		"GRANT SELECT, FILE ON *.* TO 'ro'@'%' IDENTIFIED BY PASSWORD '*AB'":  true,
		"GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION": true,
		"GRANT USAGE ON *.* TO `ro`@`%`":                                      false,
		"GRANT ALL PRIVILEGES ON `shop`.* TO `rw`@`%`":                        false,
		"GRANT SELECT (file) ON `shop`.`t` TO `ro`@`%`":                       false,
		"GRANT PROCESS, RELOAD ON *.* TO `mon`@`%`":                           false,
	} {
		if got := hasFile([]string{line}); got != want {
			t.Errorf("hasFile(%q) = %v, want %v", line, got, want)
		}
	}
}
