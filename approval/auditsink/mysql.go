package auditsink

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/countersign/countersign/approval"
)

// MySQLOptions configure a MySQL sink.
type MySQLOptions struct {
	// DSN is a go-sql-driver DSN that names the database:
	// user:password@tcp(host:3306)/db.
	DSN string
	// Table is the table's name (default countersign_audit): letters,
	// digits and underscores.
	Table string
	// Batch is the most rows one INSERT carries (default 100).
	Batch int
	// ReadOnly opens the table for Read and Follow only: it is not created,
	// and Write fails. For `countersign audit`, whose account may lack
	// CREATE and INSERT.
	ReadOnly bool
	// Timeout bounds each INSERT (default 10s).
	Timeout time.Duration
	// PollInterval is how often Follow looks for new rows (default 500ms).
	PollInterval time.Duration
}

// DefaultTable is the audit table's name when none is configured.
const DefaultTable = "countersign_audit"

var tableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// MySQL is a sink that keeps events in a MySQL or MariaDB table, created
// on open when missing. Concurrent Writes are grouped: one goroutine takes
// every event waiting (up to Batch) and stores them with one multi-row
// INSERT, so that under load the round trips are far fewer than the
// events; yet each Write returns only once its row is committed.
type MySQL struct {
	db           *sql.DB
	table        string
	batch        int
	timeout      time.Duration
	pollInterval time.Duration
	readOnly     bool

	// closing: Write holds it for reading while it queues; Close takes it
	// for writing, so no Write queues after the batcher's last drain.
	closing sync.RWMutex
	closed  bool
	reqs    chan writeReq
	quit    chan struct{}
	stopped chan struct{}

	inserts      atomic.Int64   // INSERT statements sent; tests read it
	beforeInsert func(rows int) // a test hook, called before each INSERT
	closeOnce    sync.Once
	closeErr     error
}

type writeReq struct {
	e    approval.Event
	done chan error // buffered: the batcher never waits for the writer
}

// Interface guards.
var (
	_ Sink     = (*MySQL)(nil)
	_ Follower = (*MySQL)(nil)
)

// OpenMySQL connects, creates the table unless o.ReadOnly, and starts the
// batcher. Its errors never hold the DSN's password.
func OpenMySQL(ctx context.Context, o MySQLOptions) (*MySQL, error) {
	if o.Table == "" {
		o.Table = DefaultTable
	}
	if !tableName.MatchString(o.Table) {
		return nil, fmt.Errorf("table %q: use letters, digits and _ (up to 64)", o.Table)
	}
	if o.Batch <= 0 {
		o.Batch = 100
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 500 * time.Millisecond
	}
	cfg, err := mysql.ParseDSN(o.DSN)
	if err != nil {
		// ParseDSN's errors may quote the DSN, password and all.
		return nil, errors.New("not a go-sql-driver DSN: use user:password@tcp(host:3306)/database")
	}
	if cfg.DBName == "" {
		return nil, errors.New("the DSN names no database: end it with /database")
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	cfg.MultiStatements = false
	cfg.AllowAllFiles = false
	cfg.Logger = &mysql.NopLogger{}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	// Strict: a value too long for its column fails the Write rather
	// than being cut short in the record.
	params := map[string]string{}
	for k, v := range cfg.Params {
		params[k] = v
	}
	params["sql_mode"] = "'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION'"
	cfg.Params = params
	if err := cfg.Apply(mysql.Charset("utf8mb4", "utf8mb4_general_ci")); err != nil {
		return nil, errors.New("the driver refused the DSN's settings")
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, errors.New("the driver refused the DSN's settings")
	}
	m := &MySQL{
		db: sql.OpenDB(conn), table: o.Table, batch: o.Batch, timeout: o.Timeout,
		pollInterval: o.PollInterval, readOnly: o.ReadOnly,
		reqs: make(chan writeReq, o.Batch), quit: make(chan struct{}), stopped: make(chan struct{}),
	}
	if o.ReadOnly {
		close(m.stopped)
		if err := m.db.PingContext(ctx); err != nil {
			_ = m.db.Close()
			return nil, fmt.Errorf("connect: %w", err)
		}
		return m, nil
	}
	if _, err := m.db.ExecContext(ctx, m.createTable()); err != nil {
		_ = m.db.Close()
		return nil, fmt.Errorf("create table %s: %w", m.table, err)
	}
	go m.loop()
	return m, nil
}

// columns are the table's columns after id, in the order INSERT gives them.
var columns = []string{"at", "kind", "actor", "approval_id", "tool", "operation", "rule", "decision", "outcome", "channel", "detail", "duration_ms"}

func (m *MySQL) createTable() string {
	return "CREATE TABLE IF NOT EXISTS `" + m.table + "` (" +
		"id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY," +
		"at DATETIME(6) NOT NULL," +
		"kind VARCHAR(32) NOT NULL," +
		"actor VARCHAR(255) NOT NULL DEFAULT ''," +
		"approval_id VARCHAR(64) NOT NULL DEFAULT ''," +
		"tool VARCHAR(64) NOT NULL DEFAULT ''," +
		"operation MEDIUMTEXT NOT NULL," +
		"rule VARCHAR(255) NOT NULL DEFAULT ''," +
		"decision VARCHAR(32) NOT NULL DEFAULT ''," +
		"outcome VARCHAR(32) NOT NULL DEFAULT ''," +
		"channel VARCHAR(255) NOT NULL DEFAULT ''," +
		"detail MEDIUMTEXT NOT NULL," +
		"duration_ms BIGINT NOT NULL DEFAULT 0," +
		"KEY at_idx (at), KEY approval_idx (approval_id), KEY channel_idx (channel, at), KEY actor_idx (actor, at)" +
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
}

// Write queues e for the batcher and waits until its row is committed. When
// ctx ends first, Write returns its error; the row may still be written.
func (m *MySQL) Write(ctx context.Context, e approval.Event) error {
	if m.readOnly {
		return errors.New("audit table opened read-only")
	}
	r := writeReq{e: e, done: make(chan error, 1)}
	m.closing.RLock()
	if m.closed {
		m.closing.RUnlock()
		return ErrClosed
	}
	select {
	case m.reqs <- r:
	case <-ctx.Done():
		m.closing.RUnlock()
		return ctx.Err()
	}
	m.closing.RUnlock()
	select {
	case err := <-r.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// loop is the batcher: it takes the first waiting event, every other one
// already waiting (up to batch), and inserts them at once. Events that
// arrive during an INSERT make the next batch.
func (m *MySQL) loop() {
	defer close(m.stopped)
	for {
		var first writeReq
		select {
		case first = <-m.reqs:
		case <-m.quit:
			// Close has stopped new Writes: store what is queued.
			for {
				batch := m.take(nil)
				if len(batch) == 0 {
					return
				}
				m.flush(batch)
			}
		}
		m.flush(m.take([]writeReq{first}))
	}
}

// take adds what is waiting to batch, up to m.batch, without waiting.
func (m *MySQL) take(batch []writeReq) []writeReq {
	for len(batch) < m.batch {
		select {
		case r := <-m.reqs:
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}

// flush inserts batch and answers each writer. When a multi-row INSERT
// fails, each row is tried alone, so that one bad row fails only its own
// Write.
func (m *MySQL) flush(batch []writeReq) {
	err := m.insert(batch)
	if err != nil && len(batch) > 1 {
		for _, r := range batch {
			r.done <- m.insert([]writeReq{r})
		}
		return
	}
	for _, r := range batch {
		r.done <- err
	}
}

func (m *MySQL) insert(batch []writeReq) error {
	if m.beforeInsert != nil {
		m.beforeInsert(len(batch))
	}
	m.inserts.Add(1)
	var q strings.Builder
	q.WriteString("INSERT INTO `" + m.table + "` (" + strings.Join(columns, ",") + ") VALUES ")
	row := "(" + strings.TrimSuffix(strings.Repeat("?,", len(columns)), ",") + ")"
	args := make([]any, 0, len(batch)*len(columns))
	for i, r := range batch {
		if i > 0 {
			q.WriteByte(',')
		}
		q.WriteString(row)
		e := r.e
		args = append(args, e.At.UTC().Truncate(time.Microsecond), string(e.Kind), e.Actor, e.ApprovalID, e.Tool,
			e.Operation, e.Rule, string(e.Decision), string(e.Outcome), e.Channel, e.Detail, e.DurationMS)
	}
	ctx, cancel := context.WithTimeout(context.Background(), m.timeout)
	defer cancel()
	if _, err := m.db.ExecContext(ctx, q.String(), args...); err != nil {
		return fmt.Errorf("insert into %s: %w", m.table, err)
	}
	return nil
}

// Read returns the matching rows, oldest first.
func (m *MySQL) Read(ctx context.Context, f Filter) ([]approval.Event, error) {
	events, _, err := m.read(ctx, f, 0)
	return events, err
}

// read returns the matching rows with an id above after, oldest first,
// and the highest id it read (after when none).
func (m *MySQL) read(ctx context.Context, f Filter, after int64) ([]approval.Event, int64, error) {
	where := []string{"id > ?"}
	args := []any{after}
	if !f.Since.IsZero() {
		where, args = append(where, "at >= ?"), append(args, f.Since.UTC())
	}
	for _, c := range []struct{ col, v string }{{"channel", f.Channel}, {"actor", f.Actor}, {"approval_id", f.ApprovalID}} {
		if c.v != "" {
			where, args = append(where, c.col+" = ?"), append(args, c.v)
		}
	}
	q := "SELECT id," + strings.Join(columns, ",") + " FROM `" + m.table + "` WHERE " + strings.Join(where, " AND ")
	if f.Last > 0 {
		q += fmt.Sprintf(" ORDER BY id DESC LIMIT %d", f.Last)
	} else {
		q += " ORDER BY id"
	}
	rows, err := m.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, after, fmt.Errorf("read %s: %w", m.table, err)
	}
	defer rows.Close()
	var out []approval.Event
	last := after
	for rows.Next() {
		var (
			id                      int64
			e                       approval.Event
			kind, decision, outcome string
		)
		if err := rows.Scan(&id, &e.At, &kind, &e.Actor, &e.ApprovalID, &e.Tool, &e.Operation, &e.Rule,
			&decision, &outcome, &e.Channel, &e.Detail, &e.DurationMS); err != nil {
			return nil, after, fmt.Errorf("read %s: %w", m.table, err)
		}
		e.Kind, e.Decision, e.Outcome = approval.Kind(kind), approval.AuditDecision(decision), approval.Outcome(outcome)
		out = append(out, e)
		last = max(last, id)
	}
	if err := rows.Err(); err != nil {
		return nil, after, fmt.Errorf("read %s: %w", m.table, err)
	}
	if f.Last > 0 {
		slices.Reverse(out)
	}
	return out, last, nil
}

// Follow calls fn with the last f.Last matching rows (all when 0), then
// with each matching row committed later, until ctx ends.
func (m *MySQL) Follow(ctx context.Context, f Filter, fn func(approval.Event) error) error {
	// The polls start after the newest row shown: every matching row
	// below it is in the backlog or left out by f.Last. (A row whose
	// INSERT commits after a later id was shown is not seen; the batcher
	// of one process commits in id order.)
	backlog, after, err := m.read(ctx, f, 0)
	if err != nil {
		return err
	}
	for _, e := range backlog {
		if err := fn(e); err != nil {
			return err
		}
	}
	f.Last = 0
	t := time.NewTicker(m.pollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		events, last, err := m.read(ctx, f, after)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		after = last
		for _, e := range events {
			if err := fn(e); err != nil {
				return err
			}
		}
	}
}

// Close stores what is queued, stops the batcher and closes the pool.
func (m *MySQL) Close() error {
	m.closeOnce.Do(func() {
		m.closing.Lock()
		m.closed = true
		m.closing.Unlock()
		if !m.readOnly {
			close(m.quit)
		}
		<-m.stopped
		m.closeErr = m.db.Close()
	})
	return m.closeErr
}
