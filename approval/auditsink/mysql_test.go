package auditsink

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/internal/testenv"
)

// testDB creates a throwaway database on the test MariaDB and returns a DSN
// that names it, and a root connection to it.
func testDB(t *testing.T) (string, *sql.DB) {
	t.Helper()
	root := testenv.MySQLDSN(t)
	cfg, err := mysql.ParseDSN(root)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "audit_" + hex.EncodeToString(b)
	admin, err := sql.Open("mysql", root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec("DROP DATABASE " + name) })
	cfg.DBName = name
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return cfg.FormatDSN(), db
}

func openMySQL(t *testing.T, o MySQLOptions) *MySQL {
	t.Helper()
	m, err := OpenMySQL(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func TestMySQLContract(t *testing.T) {
	testContract(t, func(t *testing.T) Sink {
		dsn, _ := testDB(t)
		return openMySQL(t, MySQLOptions{DSN: dsn})
	})
}

// TestMySQLCreatesTheTable: the table is created on open with a column for
// every field and the indexes the readers use; opening again keeps rows.
func TestMySQLCreatesTheTable(t *testing.T) {
	dsn, db := testDB(t)
	m := openMySQL(t, MySQLOptions{DSN: dsn, Table: "audit_events"})
	if err := m.Write(context.Background(), sample()[0]); err != nil {
		t.Fatal(err)
	}
	m.Close()
	openMySQL(t, MySQLOptions{DSN: dsn, Table: "audit_events"})
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM audit_events").Scan(&n); err != nil || n != 1 {
		t.Fatalf("rows after reopening = %d, %v; want 1", n, err)
	}
	rows, err := db.Query("SELECT DISTINCT column_name FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = 'audit_events'")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	indexed := map[string]bool{}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		indexed[c] = true
	}
	for _, c := range []string{"id", "at", "approval_id", "channel", "actor"} {
		if !indexed[c] {
			t.Errorf("column %s has no index (indexed: %v)", c, indexed)
		}
	}
}

// TestMySQLBatches: writes made at once share INSERTs, yet each Write
// returns only once its own row can be read.
func TestMySQLBatches(t *testing.T) {
	const writers = 40
	dsn, db := testDB(t)
	m := openMySQL(t, MySQLOptions{DSN: dsn, Batch: writers})
	// The first INSERT waits until every other write is queued behind it,
	// so the rest must go in one more: whatever the scheduler does, two
	// INSERTs at most.
	first := true
	m.beforeInsert = func(rows int) {
		if !first {
			return
		}
		first = false
		testenv.Within(10*time.Second, func() bool { return rows+len(m.reqs) >= writers })
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		wg.Go(func() {
			e := numbered(i)
			e.Detail = fmt.Sprint("writer ", i)
			if err := m.Write(context.Background(), e); err != nil {
				errs <- err
				return
			}
			var n int
			if err := db.QueryRow("SELECT COUNT(*) FROM "+DefaultTable+" WHERE detail = ?", e.Detail).Scan(&n); err != nil {
				errs <- err
			} else if n != 1 {
				errs <- fmt.Errorf("%s: Write returned but its row count is %d", e.Detail, n)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM " + DefaultTable).Scan(&n); err != nil || n != writers {
		t.Errorf("rows = %d, %v; want %d", n, err, writers)
	}
	if got := m.inserts.Load(); got > 2 {
		t.Errorf("%d writes took %d INSERTs, want at most 2", writers, got)
	}
}

// TestMySQLBadRowFailsAlone: when a batch's INSERT fails, each row is
// retried alone, so one bad event fails only its own Write.
func TestMySQLBadRowFailsAlone(t *testing.T) {
	dsn, db := testDB(t)
	m := openMySQL(t, MySQLOptions{DSN: dsn})
	release := make(chan struct{})
	holding := make(chan struct{}) // closed once the batcher holds the first write
	var hold sync.Once
	m.beforeInsert = func(rows int) {
		first := false
		hold.Do(func() { first = true; close(holding) })
		if first {
			<-release
		}
	}
	ctx := context.Background()
	held := make(chan error, 1)
	go func() { held <- m.Write(ctx, numbered(0)) }()
	<-holding
	bad := numbered(1)
	bad.Kind = approval.Kind(strings.Repeat("k", 100)) // longer than the column
	results := make([]chan error, 3)
	for i, e := range []approval.Event{numbered(2), bad, numbered(3)} {
		results[i] = make(chan error, 1)
		go func() { results[i] <- m.Write(ctx, e) }()
	}
	testenv.Eventually(t, 10*time.Second, func() bool { return len(m.reqs) >= 3 }, "three writes queued behind the first")
	close(release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false, true} {
		if err := <-results[i]; (err == nil) != want {
			t.Errorf("write %d: err = %v, want success %v", i, err, want)
		}
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM " + DefaultTable).Scan(&n); err != nil || n != 3 {
		t.Errorf("rows = %d, %v; want 3", n, err)
	}
}

// TestMySQLWrongPassword: opening fails, and the error does not show the
// password.
func TestMySQLWrongPassword(t *testing.T) {
	dsn, _ := testDB(t)
	cfg, _ := mysql.ParseDSN(dsn)
	cfg.Passwd = "hunter2-wrong"
	_, err := OpenMySQL(context.Background(), MySQLOptions{DSN: cfg.FormatDSN()})
	if err == nil || !strings.Contains(err.Error(), "Access denied") {
		t.Fatalf("OpenMySQL with a wrong password = %v, want access denied", err)
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("the error shows the password: %v", err)
	}
	for _, bad := range []string{"hunter2@nonsense(", "root:hunter2@tcp(127.0.0.1:1)/"} {
		if _, err := OpenMySQL(context.Background(), MySQLOptions{DSN: bad}); err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("OpenMySQL(%q) = %v, want an error without the password", bad, err)
		}
	}
}

// TestMySQLWriteFailsWhenTheTableIsGone: a Write the server refuses is an
// error (the operation must not run).
func TestMySQLWriteFailsWhenTheTableIsGone(t *testing.T) {
	dsn, db := testDB(t)
	m := openMySQL(t, MySQLOptions{DSN: dsn})
	if _, err := db.Exec("DROP TABLE " + DefaultTable); err != nil {
		t.Fatal(err)
	}
	if err := m.Write(context.Background(), numbered(1)); err == nil {
		t.Fatal("Write into a dropped table succeeded")
	}
}

func TestMySQLFollow(t *testing.T) {
	ctx := context.Background()
	dsn, _ := testDB(t)
	m := openMySQL(t, MySQLOptions{DSN: dsn})
	for i := range 3 {
		if err := m.Write(ctx, numbered(i)); err != nil {
			t.Fatal(err)
		}
	}
	r := openMySQL(t, MySQLOptions{DSN: dsn, ReadOnly: true, PollInterval: 5 * time.Millisecond})
	ch := collect(t, r, Filter{Channel: "C1", Last: 1})
	expect(t, ch, numbered(2))
	other := numbered(3)
	other.Channel = "C2"
	for _, e := range []approval.Event{other, numbered(4), numbered(5)} {
		if err := m.Write(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	expect(t, ch, numbered(4), numbered(5))
	if err := r.Write(ctx, numbered(6)); err == nil {
		t.Error("a read-only sink wrote")
	}
}
