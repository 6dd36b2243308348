// Package sqltool is the execute_sql tool: one SQL statement on a named
// MariaDB or MySQL connection, fenced on its own whatever the assessment
// said (SPEC §8). Multi-statements are off and sql_mode is pinned to the mode
// the risk parser assumes. An auto-run call runs only a parsed read, on a
// read-only session inside a read-only transaction, with a server-side
// statement time limit, on a pool of its own (optionally a SELECT-only
// account). An approved call runs in a normal transaction and reports rows
// affected. Passwords never reach logs, errors or results.
package sqltool

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/countersign/countersign/tools"
	"github.com/go-sql-driver/mysql"
)

// Name is the tool's function name.
const Name = "execute_sql"

// Args are execute_sql's arguments (SPEC §1).
type Args struct {
	// SQL is one statement.
	SQL string `json:"sql"`
	// Database is a configured connection name; "" means the default.
	Database string `json:"database,omitempty"`
}

// Tool is execute_sql. It is safe for concurrent use; Close releases its
// connection pools.
type Tool struct {
	cfg         Config
	dbs         map[string]*database
	class       *classifier
	scrubber    *strings.Replacer
	description string
	schema      json.RawMessage
}

var (
	_ tools.Tool      = (*Tool)(nil)
	_ tools.Previewer = (*Tool)(nil)
)

// database is one named connection: a pool for approved calls and one for
// auto-run calls and previews. A connection of the read pool is never used
// for a write, so a read-only session can never leak into an approved call.
type database struct {
	name  string
	write *pool
	read  *pool
}

// pool is one *sql.DB and what was learned about its server.
type pool struct {
	db *sql.DB
	mu sync.Mutex
	fl flavor
}

// New checks cfg, reads DSNs from the environment where configured, and
// opens the pools. It does not connect: a server that is down makes calls
// fail, not start-up. Errors name the config key and never hold a DSN.
func New(cfg Config) (*Tool, error) {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	class, err := newClassifier()
	if err != nil {
		return nil, err
	}
	t := &Tool{cfg: cfg, dbs: map[string]*database{}, class: class}
	var passwords []string
	var opened []*sql.DB
	fail := func(err error) (*Tool, error) {
		for _, db := range opened {
			_ = db.Close()
		}
		return nil, err
	}
	for _, name := range cfg.names() {
		c := cfg.Connections[name]
		key := "connections." + name
		dsn, err := resolve(key+".dsn", c.DSN, c.DSNEnv, os.Getenv)
		if err != nil {
			return fail(err)
		}
		if dsn == "" {
			return fail(fmt.Errorf("%s: set dsn or dsn_env", key))
		}
		roDSN, err := resolve(key+".readonly_dsn", c.ReadOnlyDSN, c.ReadOnlyDSNEnv, os.Getenv)
		if err != nil {
			return fail(err)
		}
		if roDSN == "" {
			roDSN = dsn
		}
		d := &database{name: name}
		for _, acct := range []struct {
			dsn, key string
			dst      **pool
		}{{dsn, key + ".dsn", &d.write}, {roDSN, key + ".readonly_dsn", &d.read}} {
			dc, err := driverConfig(acct.dsn)
			if err != nil {
				return fail(fmt.Errorf("%s: %w", acct.key, err))
			}
			passwords = append(passwords, dc.Passwd)
			dc.Logger = driverLogger{}
			conn, err := mysql.NewConnector(dc)
			if err != nil {
				return fail(fmt.Errorf("%s: %s", acct.key, "the driver refused the DSN's settings"))
			}
			db := sql.OpenDB(conn)
			opened = append(opened, db)
			db.SetMaxOpenConns(cfg.MaxOpenConns)
			db.SetMaxIdleConns(cfg.MaxIdleConns)
			db.SetConnMaxLifetime(cfg.ConnMaxLifetime)
			db.SetConnMaxIdleTime(cfg.ConnMaxIdleTime)
			*acct.dst = &pool{db: db}
		}
		t.dbs[name] = d
	}
	t.scrubber = secretScrubber(passwords)
	t.description = describeTool(cfg)
	t.schema = schema(cfg)
	return t, nil
}

// Close closes every pool.
func (t *Tool) Close() error {
	var errs []error
	for _, d := range t.dbs {
		errs = append(errs, d.write.db.Close(), d.read.db.Close())
	}
	return errors.Join(errs...)
}

func describeTool(cfg Config) string {
	var sb strings.Builder
	sb.WriteString("Run one SQL statement on a MariaDB/MySQL database. Reads (SELECT, SHOW, DESCRIBE, EXPLAIN) run at once on a read-only session; anything that changes data or schema waits for a person's approval. ")
	fmt.Fprintf(&sb, "Results are capped at %d rows; NULL is null, binary values are 0x hex, times are 'YYYY-MM-DD hh:mm:ss'. Databases:", cfg.MaxRows)
	for _, n := range cfg.names() {
		sb.WriteString(" " + n)
		if d := cfg.Connections[n].Description; d != "" {
			sb.WriteString(" (" + d + ")")
		}
		if n == cfg.Default {
			sb.WriteString(" [default]")
		}
		sb.WriteString(";")
	}
	return strings.TrimSuffix(sb.String(), ";") + "."
}

func schema(cfg Config) json.RawMessage {
	s := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"sql": map[string]any{"type": "string", "description": "Exactly one SQL statement."},
			"database": map[string]any{"type": "string", "enum": cfg.names(),
				"description": "Which configured database to use; leave it out for " + cfg.Default + "."},
		},
		"required":             []string{"sql"},
		"additionalProperties": false,
	}
	b, _ := json.Marshal(s) // strings, slices and maps only: cannot fail
	return b
}

// Run implements tools.Tool.
func (t *Tool) Run(ctx context.Context, raw json.RawMessage, opts tools.RunOptions) tools.Result {
	start := time.Now()
	r := t.run(ctx, raw, opts)
	r.DurationMS = time.Since(start).Milliseconds()
	return r
}

func (t *Tool) run(ctx context.Context, raw json.RawMessage, opts tools.RunOptions) tools.Result {
	a, d, err := t.args(raw)
	if err != nil {
		return tools.InvalidArgs(err)
	}
	st := t.class.classify(a.SQL)
	stop := progress(opts.Progress)
	defer stop()
	if opts.AutoRun {
		if st.kind != kindRead {
			return tools.Denied(fmt.Errorf("this call ran without a person's approval, so it may only read, and %s; nothing was sent to the database", st.notRead))
		}
		return t.runReadOnly(ctx, d, a.SQL)
	}
	return t.runApproved(ctx, d, a.SQL, st)
}

// args decodes and checks the arguments and finds the database.
func (t *Tool) args(raw json.RawMessage) (Args, *database, error) {
	var a Args
	if err := tools.DecodeArgs(raw, &a); err != nil {
		return a, nil, err
	}
	if strings.TrimSpace(a.SQL) == "" {
		return a, nil, tools.MissingArg("sql")
	}
	name := a.Database
	if name == "" {
		name = t.cfg.Default
	}
	d, ok := t.dbs[name]
	if !ok {
		return a, nil, &tools.ArgError{Arg: "database", Problem: fmt.Sprintf("%q is not a configured database (have %s)", name, strings.Join(t.cfg.names(), ", "))}
	}
	return a, d, nil
}

// runReadOnly runs a parsed read on the read pool: read-only session,
// read-only transaction, server-side time limit, context deadline.
func (t *Tool) runReadOnly(ctx context.Context, d *database, text string) tools.Result {
	limit := t.cfg.StatementTimeout
	// The server's limit normally fires first and says so; the context is
	// the backstop for a server that ignores it.
	ctx, cancel := context.WithTimeout(ctx, limit+time.Second)
	defer cancel()
	tx, done, err := t.readOnlyTx(ctx, d, limit)
	if err != nil {
		return tools.NotStarted(err)
	}
	defer done()
	rows, err := tx.QueryContext(ctx, text)
	if err != nil {
		return tools.Failed(errors.New(t.plainError(err, limit)))
	}
	tbl, err := readTable(rows, t.limits())
	if tbl.more {
		// Stop the server sending the rest: the connection is dropped
		// instead of drained.
		cancel()
	}
	_ = rows.Close()
	if err == nil && !tbl.more {
		err = rows.Err()
	}
	if err != nil {
		return tools.Failed(errors.New(t.plainError(err, limit)))
	}
	r := t.tableResult(tbl)
	if tbl.more {
		r.Note = tools.JoinNotes(fmt.Sprintf("showing %s of at least %s rows%s", tools.FormatCount(int64(len(tbl.rows))), tools.FormatCount(int64(len(tbl.rows)+1)), t.fullNote(tbl)), r.Note)
	}
	return r
}

// readOnlyTx opens a read-only transaction on a read-pool connection whose
// session is read-only with the statement time limit set. The session
// settings are made on every call, so nothing a previous statement did to
// the session can lift them. done rolls back, releases user-level locks and
// returns the connection.
func (t *Tool) readOnlyTx(ctx context.Context, d *database, limit time.Duration) (*sql.Tx, func(), error) {
	c, err := d.read.db.Conn(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("could not connect to database %q: %s", d.name, t.plainError(err, limit))
	}
	fl, err := d.read.flavor(ctx, c)
	if err == nil {
		_, err = c.ExecContext(ctx, fl.readOnlySession(limit))
	}
	if err != nil {
		_ = c.Close()
		return nil, nil, fmt.Errorf("could not make the session on database %q read-only: %s", d.name, t.plainError(err, limit))
	}
	tx, err := c.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		_ = c.Close()
		return nil, nil, fmt.Errorf("could not start a read-only transaction on database %q: %s", d.name, t.plainError(err, limit))
	}
	done := func() {
		_ = tx.Rollback()
		// A user-level lock outlives the rollback; one taken by a function
		// the parser let through must not stay with the pooled connection.
		// A connection where that fails is dropped instead.
		rctx, cancel := context.WithTimeout(context.Background(), killTimeout)
		defer cancel()
		if _, err := c.ExecContext(rctx, "DO RELEASE_ALL_LOCKS()"); err != nil {
			_ = c.Raw(func(any) error { return driver.ErrBadConn })
		}
		_ = c.Close()
	}
	return tx, done, nil
}

// runApproved runs a statement a person approved, on the write pool, in a
// normal transaction: committed on success, rolled back on any error. A
// statement that may change the session (SET, USE, LOCK TABLES, anything
// unparsed) gets its connection closed afterwards instead of pooled.
func (t *Tool) runApproved(ctx context.Context, d *database, text string, st statement) tools.Result {
	limit := t.cfg.ApprovedTimeout
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	c, err := d.write.db.Conn(ctx)
	if err != nil {
		return tools.NotStarted(fmt.Errorf("could not connect to database %q: %s", d.name, t.plainError(err, limit)))
	}
	keep := st.keepsSession()
	defer func() {
		if !keep {
			_ = c.Raw(func(any) error { return driver.ErrBadConn })
		}
		_ = c.Close()
	}()
	var threadID int64
	if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&threadID); err != nil {
		keep = false
		return tools.NotStarted(fmt.Errorf("could not talk to database %q: %s", d.name, t.plainError(err, limit)))
	}
	// When the time limit (or the caller) stops the call, the driver drops
	// the connection, but the server would go on running the statement and
	// holding its locks until it noticed: stop it there too, and return
	// only once the server has been told (within killTimeout), so that a
	// timeout reported means a statement stopped, not one still running.
	killed := make(chan struct{})
	stopKill := context.AfterFunc(ctx, func() {
		defer close(killed)
		killQuery(d.write, threadID)
	})
	defer func() {
		if !stopKill() {
			<-killed
		}
	}()
	tx, err := c.BeginTx(ctx, nil)
	if err != nil {
		keep = false
		return tools.NotStarted(fmt.Errorf("could not start a transaction on database %q: %s", d.name, t.plainError(err, limit)))
	}
	fail := func(err error) tools.Result {
		keep = false
		_ = tx.Rollback()
		r := tools.Failed(errors.New(t.plainError(err, limit)))
		r.Note = "the transaction was rolled back"
		return r
	}
	rows, err := tx.QueryContext(ctx, text)
	if err != nil {
		return fail(err)
	}
	tbl, err := readTable(rows, t.limits())
	total := int64(len(tbl.rows))
	if err == nil && tbl.more {
		// Approved: read the rest (closing early could roll back a write
		// that returns rows), counting it for the note.
		for total++; rows.Next(); total++ {
		}
	}
	_ = rows.Close()
	if err == nil {
		err = rows.Err()
	}
	if err != nil {
		return fail(err)
	}
	var affected *int64
	if len(tbl.columns) == 0 {
		var n int64
		if err := tx.QueryRowContext(ctx, "SELECT ROW_COUNT()").Scan(&n); err != nil {
			return fail(err)
		}
		affected = &n
	}
	if err := tx.Commit(); err != nil {
		keep = false
		r := tools.Failed(fmt.Errorf("the statement ran but its transaction could not be committed, so it was rolled back: %s", t.plainError(err, limit)))
		return r
	}
	if affected != nil {
		return tools.Result{Status: tools.StatusOK, Executed: true, RowsAffected: affected}
	}
	r := t.tableResult(tbl)
	if tbl.more {
		r.Note = tools.JoinNotes(fmt.Sprintf("showing %s of %s rows%s", tools.FormatCount(int64(len(tbl.rows))), tools.FormatCount(total), t.fullNote(tbl)), r.Note)
	}
	return r
}

// killQuery stops the statement running on a server thread. Thread ids are
// never reused while the server runs, so it can hit no other statement.
func killQuery(p *pool, threadID int64) {
	ctx, cancel := context.WithTimeout(context.Background(), killTimeout)
	defer cancel()
	if _, err := p.db.ExecContext(ctx, fmt.Sprintf("KILL QUERY %d", threadID)); err != nil {
		slog.Warn("sqltool: could not stop a statement after its time limit", "thread", threadID, "err", err)
	}
}

// killTimeout bounds the KILL QUERY sent after a timeout.
const killTimeout = 5 * time.Second

// limits are the configured caps of a result.
func (t *Tool) limits() limits {
	return limits{rows: t.cfg.MaxRows, cell: t.cfg.MaxCellBytes, bytes: t.cfg.MaxResultBytes}
}

// fullNote explains a result cut by its size rather than its row count.
func (t *Tool) fullNote(tbl table) string {
	if !tbl.full {
		return ""
	}
	return fmt.Sprintf(" (the result is capped at %s bytes)", tools.FormatCount(int64(t.cfg.MaxResultBytes)))
}

// tableResult is the ok result for rows read.
func (t *Tool) tableResult(tbl table) tools.Result {
	n := len(tbl.rows)
	r := tools.Result{Status: tools.StatusOK, Executed: true, Columns: tbl.columns, Rows: tbl.rows, RowCount: &n, Truncated: tbl.more || tbl.cut}
	if tbl.cut {
		r.Note = fmt.Sprintf("long values were cut to %s bytes", tools.FormatCount(int64(t.cfg.MaxCellBytes)))
	}
	return r
}

// scrub removes every known password from text.
func (t *Tool) scrub(text string) string { return t.scrubber.Replace(text) }

// progress calls report every few seconds until the returned stop is called.
func progress(report func(tools.Progress)) (stop func()) {
	if report == nil {
		return func() {}
	}
	start := time.Now()
	tick := time.NewTicker(progressEvery)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
				report(tools.Progress{ElapsedMS: time.Since(start).Milliseconds()})
			}
		}
	}()
	return func() { tick.Stop(); close(quit); wg.Wait() }
}

// progressEvery is how often a long statement reports that it is running.
const progressEvery = 3 * time.Second

// driverLogger sends the driver's own messages to slog. The driver logs
// connection trouble (never DSNs) there.
type driverLogger struct{}

func (driverLogger) Print(v ...any) {
	slog.Warn("mysql driver", "msg", fmt.Sprint(v...))
}

// Config returns the configuration the tool runs with, defaults filled in
// and every DSN given in the file redacted (DSNs from the environment are
// named by their variable and not read here).
func (t *Tool) Config() Config {
	c := t.cfg
	conns := make(map[string]Connection, len(c.Connections))
	for name, conn := range c.Connections {
		if conn.DSN != "" {
			conn.DSN = Redact(conn.DSN)
		}
		if conn.ReadOnlyDSN != "" {
			conn.ReadOnlyDSN = Redact(conn.ReadOnlyDSN)
		}
		conns[name] = conn
	}
	c.Connections = conns
	return c
}
