package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/auditsink"
	"github.com/countersign/countersign/approval/redisstore"
	"github.com/countersign/countersign/internal/testenv"
)

// sayer writes lines to the bot's input.
func sayer(t *testing.T, in io.Writer) func(string) {
	w := bufio.NewWriter(in)
	return func(line string) {
		t.Helper()
		if _, err := w.WriteString(line + "\n"); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
}

// finish ends the bot's input and waits for run to return.
func finish(t *testing.T, in io.Closer, done <-chan error) {
	t.Helper()
	in.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return at the end of input")
	}
}

// approveAsBob has bob approve the card the last line asked about, and
// waits for the run to end.
func approveAsBob(t *testing.T, say func(string), out *syncBuffer) {
	t.Helper()
	id := waitFor(t, out, regexp.MustCompile(`approve ([a-z0-9]{20,})`))
	say("/as bob")
	say("approve " + id)
	waitFor(t, out, regexp.MustCompile(`done: exit code 0`))
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestRunFailsClosedOnARequiredFileSink: when the required audit file
// cannot be written (a full disk: /dev/full), `!run touch x` does not run,
// and the chat says why.
func TestRunFailsClosedOnARequiredFileSink(t *testing.T) {
	if !exists("/dev/full") {
		t.Skip("no /dev/full here")
	}
	dir := t.TempDir()
	t.Setenv(DefaultRedisURLEnv, "")
	cfg := writeConfig(t, "audit:\n  file:\n    path: /dev/full\n    required: true\n")
	in, out, done := startRun(t, dir, cfg)
	say := sayer(t, in)
	waitFor(t, out, regexp.MustCompile(`audit: stream, file`))
	say("!run touch x")
	waitFor(t, out, regexp.MustCompile("`touch x` did not run\\.\\s+audit log unavailable"))
	finish(t, in, done)
	if exists(filepath.Join(dir, "x")) {
		t.Fatal("touch x ran although its audit record could not be written")
	}
}

// TestRunGoesOnPastABestEffortSink: the same full disk behind a sink that
// is not required is logged, and the approved call runs.
func TestRunGoesOnPastABestEffortSink(t *testing.T) {
	if !exists("/dev/full") {
		t.Skip("no /dev/full here")
	}
	dir := t.TempDir()
	t.Setenv(DefaultRedisURLEnv, "")
	logPath := filepath.Join(t.TempDir(), "bot.log")
	cfg := writeConfig(t, fmt.Sprintf("log:\n  file: %s\naudit:\n  file:\n    path: /dev/full\n    required: false\n", logPath))
	in, out, done := startRun(t, dir, cfg)
	say := sayer(t, in)
	waitFor(t, out, regexp.MustCompile(`audit: stream, file \(best effort\)`))
	say("!run touch x")
	approveAsBob(t, say, out)
	finish(t, in, done)
	if !exists(filepath.Join(dir, "x")) {
		t.Fatal("touch x did not run")
	}
	log, _ := os.ReadFile(logPath)
	if !strings.Contains(string(log), "best-effort audit sink failed") || !strings.Contains(string(log), "no space left") {
		t.Errorf("the log does not say the file sink failed:\n%s", log)
	}
}

// TestRunKeepsTheAuditInAFile: with a file sink the whole story of a call
// is in the file, and audit export reads it back by approval.
func TestRunKeepsTheAuditInAFile(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(DefaultRedisURLEnv, "")
	file := filepath.Join(t.TempDir(), "audit", "audit.jsonl")
	cfg := writeConfig(t, "audit:\n  stream: false\n  file:\n    path: "+file+"\n")
	in, out, done := startRun(t, dir, cfg)
	say := sayer(t, in)
	waitFor(t, out, regexp.MustCompile(`audit: file`))
	say("!run touch x")
	id := waitFor(t, out, regexp.MustCompile(`approve ([a-z0-9]{20,})`))
	say("/as bob")
	say("approve " + id)
	waitFor(t, out, regexp.MustCompile(`done: exit code 0`))
	finish(t, in, done)

	events := export(t, 0, "audit", "export", "--config", cfg, "--approval", id)
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, string(e.Kind))
		if e.ApprovalID != id {
			t.Errorf("export --approval %s returned an event of %q", id, e.ApprovalID)
		}
	}
	if got := strings.Join(kinds, " "); got != "assessment card click execution" {
		t.Errorf("the approval's story in the file = %q, want assessment card click execution", got)
	}
}

// export runs an audit command, expects exit status code, and decodes its
// JSON lines.
func export(t *testing.T, code int, args ...string) []approval.Event {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if got := dispatch(args, strings.NewReader(""), &stdout, &stderr); got != code {
		t.Fatalf("%s: exit %d, want %d; stderr: %s", strings.Join(args, " "), got, code, stderr.String())
	}
	var out []approval.Event
	dec := json.NewDecoder(&stdout)
	for dec.More() {
		var e approval.Event
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("%s printed something other than JSON lines: %v", strings.Join(args, " "), err)
		}
		out = append(out, e)
	}
	return out
}

// TestAuditTailAndExport: the filters of tail and export, against a file.
func TestAuditTailAndExport(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "audit.jsonl")
	cfg := writeConfig(t, "audit:\n  file:\n    path: "+file+"\n")
	f, err := auditsink.OpenFile(auditsink.FileOptions{Path: file})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	for i, e := range []approval.Event{
		{At: now.Add(-70 * time.Hour), Kind: approval.KindAssessment, Actor: "U1", Channel: "C1", ApprovalID: "a1"},
		{At: now.Add(-69 * time.Hour), Kind: approval.KindCard, Actor: "U1", Channel: "C1", ApprovalID: "a1"},
		{At: now.Add(-2 * time.Hour), Kind: approval.KindAssessment, Actor: "U2", Channel: "C2"},
		{At: now.Add(-time.Hour), Kind: approval.KindClick, Actor: "U3", Channel: "C1", ApprovalID: "a1"},
		{At: now.Add(-time.Minute), Kind: approval.KindExpiry, Actor: "system", Channel: "C2", ApprovalID: "a2"},
	} {
		e.Detail = fmt.Sprint(i)
		if err := f.Write(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	tests := []struct {
		args []string
		want string // the events' Detail, in order
	}{
		{[]string{"tail"}, "0 1 2 3 4"},
		{[]string{"tail", "-n", "2"}, "3 4"},
		{[]string{"export"}, "0 1 2 3 4"},
		{[]string{"export", "--since", "24h"}, "2 3 4"},
		{[]string{"export", "--since", "3d"}, "0 1 2 3 4"},
		{[]string{"export", "--since", now.Add(-90 * time.Minute).Format(time.RFC3339)}, "3 4"},
		{[]string{"export", "--channel", "C1"}, "0 1 3"},
		{[]string{"export", "--user", "U1"}, "0 1"},
		{[]string{"export", "--approval", "a1", "--since", "24h"}, "3"},
		{[]string{"export", "--channel", "C9"}, ""},
		{[]string{"export", "--source", "file", "--approval", "a2"}, "4"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			events := export(t, 0, append([]string{"audit"}, append(tt.args, "--config", cfg)...)...)
			var got []string
			for _, e := range events {
				got = append(got, e.Detail)
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("got events %q, want %q", strings.Join(got, " "), tt.want)
			}
		})
	}
}

// TestAuditCommandErrors: what is wrong, and how to fix it.
func TestAuditCommandErrors(t *testing.T) {
	t.Setenv(DefaultRedisURLEnv, "")
	none := writeConfig(t, "")
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"audit"}, 2, "Usage: countersign audit"},
		{[]string{"audit", "tial"}, 2, `unknown command "tial": use tail or export`},
		{[]string{"audit", "export", "--since", "yesterday"}, 2, "give a duration back from now (90m, 24h, 7d)"},
		{[]string{"audit", "tail", "-n", "0"}, 2, "give a positive number"},
		{[]string{"audit", "tail", "--config", none}, 1, "set COUNTERSIGN_REDIS_URL"},
		{[]string{"audit", "tail", "--follow", "--config", none}, 1, "--follow reads the file or the table"},
		{[]string{"audit", "export", "--source", "file", "--config", none}, 1, "set audit.file.path"},
		{[]string{"audit", "export", "--source", "mysql", "--config", none}, 1, "set audit.mysql.dsn_env"},
		{[]string{"audit", "export", "--source", "s3", "--config", none}, 1, `--source "s3": use mysql, file or stream`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := dispatch(tt.args, strings.NewReader(""), &stdout, &stderr); got != tt.code {
				t.Errorf("exit %d, want %d", got, tt.code)
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr %q does not say %q", stderr.String(), tt.want)
			}
		})
	}
}

// TestAuditConfigErrorsNameTheKey: a bad audit section stops config check
// with the key.
func TestAuditConfigErrorsNameTheKey(t *testing.T) {
	t.Setenv(DefaultRedisURLEnv, "")
	t.Setenv("AUDIT_TEST_DSN", "")
	tests := []struct{ yaml, want string }{
		{"audit:\n  stream: false\n", "audit: no required sink"},
		{"audit:\n  stream: false\n  file: {path: /tmp/x.jsonl, required: false}\n", "audit: no required sink"},
		{"audit:\n  mysql: {dsn_env: AUDIT_TEST_DSN, table: 'a-b'}\n", "audit.mysql.table"},
		{"audit:\n  mysql: {dsn_env: AUDIT_TEST_DSN}\n", "audit.mysql.dsn_env: $AUDIT_TEST_DSN is empty"},
		{"audit:\n  file: {path: /tmp/x.jsonl, max_size_mb: -1}\n", "audit.file.max_size_mb"},
		{"audit:\n  fiel: {path: x}\n", "audit.fiel: unknown key; did you mean file?"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			path := writeConfig(t, tt.yaml)
			var stdout, stderr bytes.Buffer
			if code := dispatch([]string{"config", "check", "--config", path}, strings.NewReader(""), &stdout, &stderr); code != 1 {
				t.Fatalf("exit %d, want 1; stderr: %s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr %q does not say %q", stderr.String(), tt.want)
			}
		})
	}
}

// auditDB creates a throwaway database and sets $AUDIT_DSN to a DSN naming
// it; it returns a root connection to it.
func auditDB(t *testing.T) (string, *sql.DB) {
	t.Helper()
	root := testenv.MySQLDSN(t)
	admin, err := sql.Open("mysql", root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	name := fmt.Sprintf("cmd_audit_%d", time.Now().UnixNano())
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec("DROP DATABASE " + name) })
	c, err := mysql.ParseDSN(root)
	if err != nil {
		t.Fatal(err)
	}
	c.DBName = name
	db, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	t.Setenv("AUDIT_DSN", c.FormatDSN())
	return c.FormatDSN(), db
}

// TestRunKeepsTheAuditInMySQL: with a required table, a call's story is in
// the table before it runs, audit export reads it; once the table is gone,
// `!run touch b` does not run.
func TestRunKeepsTheAuditInMySQL(t *testing.T) {
	_, db := auditDB(t)
	dir := t.TempDir()
	t.Setenv(DefaultRedisURLEnv, "")
	cfg := writeConfig(t, "audit:\n  mysql:\n    dsn_env: AUDIT_DSN\n")
	in, out, done := startRun(t, dir, cfg)
	say := sayer(t, in)
	waitFor(t, out, regexp.MustCompile(`audit: stream, mysql`))
	say("!run touch a")
	id := waitFor(t, out, regexp.MustCompile(`approve ([a-z0-9]{20,})`))
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM countersign_audit WHERE approval_id = ? AND kind = 'card'", id).Scan(&n); err != nil || n != 1 {
		t.Fatalf("card rows in the table when the card shows = %d, %v; want 1", n, err)
	}
	say("/as bob")
	say("approve " + id)
	waitFor(t, out, regexp.MustCompile(`done: exit code 0`))

	if _, err := db.Exec("DROP TABLE countersign_audit"); err != nil {
		t.Fatal(err)
	}
	say("!run touch b")
	waitFor(t, out, regexp.MustCompile("`touch b` did not run\\.\\s+audit log unavailable"))
	finish(t, in, done)
	if !exists(filepath.Join(dir, "a")) {
		t.Error("touch a did not run")
	}
	if exists(filepath.Join(dir, "b")) {
		t.Error("touch b ran although its audit record could not be written")
	}
}

// TestAuditExportFromMySQL: audit export and tail read the table.
func TestAuditExportFromMySQL(t *testing.T) {
	dsn, _ := auditDB(t)
	m, err := auditsink.OpenMySQL(context.Background(), auditsink.MySQLOptions{DSN: dsn})
	if err != nil {
		t.Fatal(err)
	}
	for i, ch := range []string{"C1", "C2", "C1"} {
		if err := m.Write(context.Background(), approval.Event{At: time.Now(), Kind: approval.KindAssessment, Channel: ch, Detail: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	m.Close()
	cfg := writeConfig(t, "audit:\n  mysql:\n    dsn_env: AUDIT_DSN\n")
	for args, want := range map[string]string{
		"export --channel C1": "0 2",
		"tail -n 1":           "2",
		"export --since 1h":   "0 1 2",
	} {
		events := export(t, 0, append(append([]string{"audit"}, strings.Fields(args)...), "--config", cfg)...)
		var got []string
		for _, e := range events {
			got = append(got, e.Detail)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("audit %s = %q, want %q", args, strings.Join(got, " "), want)
		}
	}
}

// TestRunRefusesAWrongAuditPassword: a required table that cannot be
// reached stops run at start, naming the key, without the password.
func TestRunRefusesAWrongAuditPassword(t *testing.T) {
	dsn, _ := auditDB(t)
	c, _ := mysql.ParseDSN(dsn)
	c.Passwd = "hunter2-wrong"
	t.Setenv("AUDIT_DSN", c.FormatDSN())
	t.Setenv(DefaultRedisURLEnv, "")
	dir := t.TempDir()
	cfg := writeConfig(t, "audit:\n  mysql:\n    dsn_env: AUDIT_DSN\n")
	_, _, done := startRun(t, dir, cfg)
	err := <-done
	if err == nil || !strings.Contains(err.Error(), "audit.mysql ($AUDIT_DSN)") || !strings.Contains(err.Error(), "Access denied") {
		t.Fatalf("run = %v, want an error naming audit.mysql and saying access was denied", err)
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("the error shows the password: %v", err)
	}
}

// TestAuditTailFollowsTheFile: tail --follow prints the last events, then
// each new one, until interrupted.
func TestAuditTailFollowsTheFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg := writeConfig(t, "audit:\n  file:\n    path: "+file+"\n")
	f, err := auditsink.OpenFile(auditsink.FileOptions{Path: file})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	write := func(detail string) {
		t.Helper()
		if err := f.Write(context.Background(), approval.Event{At: time.Now(), Kind: approval.KindCard, Detail: detail}); err != nil {
			t.Fatal(err)
		}
	}
	write("old")
	write("last")
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- readAudit(ctx, cfg, "", auditsink.Filter{Last: 1}, true, os.Getenv, out)
	}()
	waitFor(t, out, regexp.MustCompile(`"detail":"last"`))
	write("new")
	waitFor(t, out, regexp.MustCompile(`"detail":"new"`))
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("tail --follow: %v", err)
	}
	if strings.Contains(out.String(), `"old"`) {
		t.Errorf("tail -n 1 --follow printed an older event:\n%s", out)
	}
}

// TestAuditExportFromTheStream: with Redis, export reads the store's own
// stream, under the configured prefix.
func TestAuditExportFromTheStream(t *testing.T) {
	url := testenv.RedisURL(t)
	t.Setenv(DefaultRedisURLEnv, url)
	o, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	prefix := fmt.Sprintf("audittest%d", time.Now().UnixNano())
	s := redisstore.New(redis.NewClient(o), redisstore.Options{Prefix: prefix, Logger: slog.New(slog.DiscardHandler)})
	defer s.Close()
	for _, id := range []string{"a1", "a2", "a1"} {
		if err := s.Audit(context.Background(), approval.Event{Kind: approval.KindCard, ApprovalID: id}); err != nil {
			t.Fatal(err)
		}
	}
	cfg := writeConfig(t, "store:\n  prefix: "+prefix+"\n")
	events := export(t, 0, "audit", "export", "--approval", "a1", "--config", cfg)
	if len(events) != 2 || events[0].ApprovalID != "a1" || events[1].ApprovalID != "a1" {
		t.Errorf("export --approval a1 from the stream = %+v, want the two events of a1", events)
	}
	if got := export(t, 0, "audit", "tail", "-n", "1", "--source", "stream", "--config", cfg); len(got) != 1 || got[0].ApprovalID != "a1" {
		t.Errorf("tail -n 1 from the stream = %+v, want the last event", got)
	}
}
