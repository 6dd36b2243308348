package auditsink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Config is the audit section of the configuration: which sinks keep the
// audit log. By default only the store's stream does, as before sinks.
//
//	audit:
//	  stream: true                 # the store's stream (Redis or memory)
//	  file: {path: /var/log/countersign/audit.jsonl, required: true}
//	  mysql: {dsn_env: AUDIT_DSN, required: true}
type Config struct {
	// Stream keeps the store's own stream (default true); it is always
	// required when on.
	Stream *bool       `yaml:"stream"`
	File   FileConfig  `yaml:"file"`
	MySQL  MySQLConfig `yaml:"mysql"`
}

// FileConfig is audit.file: on when Path is set.
type FileConfig struct {
	Path       string `yaml:"path"`
	MaxSizeMB  int    `yaml:"max_size_mb"` // rotate past this size (default 100)
	MaxBackups int    `yaml:"max_backups"` // rotated files kept (default 10)
	Required   *bool  `yaml:"required"`    // default true
}

// MySQLConfig is audit.mysql: on when DSNEnv is set.
type MySQLConfig struct {
	// DSNEnv names the environment variable holding the DSN,
	// user:password@tcp(host:3306)/database.
	DSNEnv   string `yaml:"dsn_env"`
	Table    string `yaml:"table"` // default countersign_audit
	Batch    int    `yaml:"batch"` // most rows per INSERT (default 100)
	Required *bool  `yaml:"required"`
}

// The defaults the configuration shows.
const (
	DefaultMaxSizeMB  = 100
	DefaultMaxBackups = 10
	DefaultBatch      = 100
)

// WithDefaults fills the defaults and checks the section. Its errors name
// the key.
func (c Config) WithDefaults() (Config, error) {
	t := true
	if c.Stream == nil {
		c.Stream = &t
	}
	if c.File.MaxSizeMB < 0 {
		return c, errors.New("audit.file.max_size_mb: must not be negative")
	}
	if c.File.MaxBackups < 0 {
		return c, errors.New("audit.file.max_backups: must not be negative")
	}
	if c.MySQL.Batch < 0 {
		return c, errors.New("audit.mysql.batch: must not be negative")
	}
	if c.File.MaxSizeMB == 0 {
		c.File.MaxSizeMB = DefaultMaxSizeMB
	}
	if c.File.MaxBackups == 0 {
		c.File.MaxBackups = DefaultMaxBackups
	}
	if c.File.Required == nil {
		c.File.Required = &t
	}
	if c.MySQL.Table == "" {
		c.MySQL.Table = DefaultTable
	}
	if !tableName.MatchString(c.MySQL.Table) {
		return c, fmt.Errorf("audit.mysql.table: %q is not a table name: use letters, digits and _ (up to 64)", c.MySQL.Table)
	}
	if c.MySQL.Batch == 0 {
		c.MySQL.Batch = DefaultBatch
	}
	if c.MySQL.Required == nil {
		c.MySQL.Required = &t
	}
	required := *c.Stream || (c.File.Path != "" && *c.File.Required) || (c.MySQL.DSNEnv != "" && *c.MySQL.Required)
	if !required {
		return c, errors.New("audit: no required sink, so an operation could run with its audit record written nowhere: " +
			"keep audit.stream true, or set audit.file.path or audit.mysql.dsn_env with required: true")
	}
	return c, nil
}

// Open opens the configured sinks, in order stream, file, mysql; stream is
// the store's (see Stream), used when c.Stream is on. getenv reads
// audit.mysql.dsn_env. On error nothing stays open. c must have its
// defaults (WithDefaults).
func (c Config) Open(ctx context.Context, stream Sink, getenv func(string) string) ([]Configured, error) {
	var out []Configured
	fail := func(err error) ([]Configured, error) {
		for _, s := range out {
			_ = s.Sink.Close()
		}
		return nil, err
	}
	if *c.Stream {
		out = append(out, Configured{Name: "stream", Sink: stream, Required: true})
	}
	if c.File.Path != "" {
		f, err := OpenFile(FileOptions{Path: c.File.Path, MaxSize: int64(c.File.MaxSizeMB) << 20, MaxBackups: c.File.MaxBackups})
		if err != nil {
			return fail(fmt.Errorf("audit.file.path: %w", err))
		}
		out = append(out, Configured{Name: "file", Sink: f, Required: *c.File.Required})
	}
	if c.MySQL.DSNEnv != "" {
		m, err := c.openMySQL(ctx, getenv, false)
		if err != nil {
			return fail(err)
		}
		out = append(out, Configured{Name: "mysql", Sink: m, Required: *c.MySQL.Required})
	}
	return out, nil
}

func (c Config) openMySQL(ctx context.Context, getenv func(string) string, readOnly bool) (*MySQL, error) {
	dsn := strings.TrimSpace(getenv(c.MySQL.DSNEnv))
	if dsn == "" {
		return nil, fmt.Errorf("audit.mysql.dsn_env: $%s is empty: set it to user:password@tcp(host:3306)/database", c.MySQL.DSNEnv)
	}
	m, err := OpenMySQL(ctx, MySQLOptions{DSN: dsn, Table: c.MySQL.Table, Batch: c.MySQL.Batch, ReadOnly: readOnly})
	if err != nil {
		return nil, fmt.Errorf("audit.mysql ($%s): %w", c.MySQL.DSNEnv, err)
	}
	return m, nil
}

// Sources are the sinks a reader can name: the store's stream, the file,
// the table.
const (
	SourceStream = "stream"
	SourceFile   = "file"
	SourceMySQL  = "mysql"
)

// DefaultSource is the source read when none is named: the most durable
// one configured (mysql, then file, then the stream).
func (c Config) DefaultSource() string {
	switch {
	case c.MySQL.DSNEnv != "":
		return SourceMySQL
	case c.File.Path != "":
		return SourceFile
	}
	return SourceStream
}

// OpenReader opens the file or the table for reading (the table is not
// created; the account needs only SELECT). The stream is the caller's
// (Stream). Its errors name the key to set.
func (c Config) OpenReader(ctx context.Context, source string, getenv func(string) string) (Follower, io.Closer, error) {
	switch source {
	case SourceFile:
		if c.File.Path == "" {
			return nil, nil, errors.New("no audit file is configured: set audit.file.path")
		}
		return FileLog{Path: c.File.Path}, nopCloser{}, nil
	case SourceMySQL:
		if c.MySQL.DSNEnv == "" {
			return nil, nil, errors.New("no audit table is configured: set audit.mysql.dsn_env")
		}
		m, err := c.openMySQL(ctx, getenv, true)
		if err != nil {
			return nil, nil, err
		}
		return m, m, nil
	}
	return nil, nil, fmt.Errorf("source %q: use file or mysql (or stream)", source)
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }
