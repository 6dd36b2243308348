package sqltool

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/countersign/countersign/risk/sqlrisk"
	"github.com/countersign/countersign/tools"
	"github.com/go-sql-driver/mysql"
)

// Config is the execute_sql section of the configuration (e.g. tools.sql).
//
//	default: main
//	max_rows: 200
//	statement_timeout: 30s
//	connections:
//	  main:
//	    description: orders database (primary)
//	    dsn_env: ORDERS_DSN              # or dsn: user:pass@tcp(host:3306)/orders
//	    readonly_dsn_env: ORDERS_RO_DSN  # optional SELECT-only account for auto-run calls
type Config struct {
	// Connections are the databases the LLM may name, by connection name.
	Connections map[string]Connection `yaml:"connections"`
	// Default is the connection used when a call names none. It may be left
	// out when there is exactly one connection.
	Default string `yaml:"default"`

	// MaxRows caps the rows a result carries (default 200).
	MaxRows int `yaml:"max_rows"`
	// MaxCellBytes caps one value's text (default 4096 bytes).
	MaxCellBytes int `yaml:"max_cell_bytes"`
	// MaxResultBytes caps the text of all values of a result, so a wide
	// table cannot flood the LLM's context (default 131072 bytes).
	MaxResultBytes int `yaml:"max_result_bytes"`
	// StatementTimeout limits an auto-run statement, on the server
	// (max_statement_time / max_execution_time) and by context (default 30s).
	StatementTimeout time.Duration `yaml:"statement_timeout"`
	// ApprovedTimeout limits an approved statement by context (default 10m).
	ApprovedTimeout time.Duration `yaml:"approved_timeout"`
	// PreviewTimeout limits the EXPLAIN behind a preview (default 5s).
	PreviewTimeout time.Duration `yaml:"preview_timeout"`

	// Pool limits, per pool (each connection has a pool for auto-run calls
	// and one for approved calls). Defaults: 4 open, 2 idle, 30m lifetime,
	// 5m idle time.
	MaxOpenConns    int           `yaml:"max_open_conns"`
	MaxIdleConns    int           `yaml:"max_idle_conns"`
	ConnMaxLifetime time.Duration `yaml:"conn_max_lifetime"`
	ConnMaxIdleTime time.Duration `yaml:"conn_max_idle_time"`
}

// Connection is one named database. Each DSN is a go-sql-driver/mysql DSN
// (user:password@tcp(host:3306)/dbname?params), given in the config or,
// better, in an environment variable named by the *_env key.
type Connection struct {
	// Description tells the LLM what the database holds.
	Description string `yaml:"description"`
	DSN         string `yaml:"dsn"`
	DSNEnv      string `yaml:"dsn_env"`
	// ReadOnlyDSN, when set, is a SELECT-only account used for auto-run
	// calls and previews; approved calls use DSN.
	ReadOnlyDSN    string `yaml:"readonly_dsn"`
	ReadOnlyDSNEnv string `yaml:"readonly_dsn_env"`
}

// Defaults for the Config fields left zero.
const (
	DefaultMaxRows          = 200
	DefaultMaxCellBytes     = 4096
	DefaultMaxResultBytes   = 128 << 10
	DefaultStatementTimeout = 30 * time.Second
	DefaultApprovedTimeout  = 10 * time.Minute
	DefaultPreviewTimeout   = 5 * time.Second
	DefaultMaxOpenConns     = 4
	DefaultMaxIdleConns     = 2 // at most max_open_conns
	DefaultConnMaxLifetime  = 30 * time.Minute
	DefaultConnMaxIdleTime  = 5 * time.Minute
)

// WithDefaults returns c with its zero fields filled in, as New applies
// them; a negative limit is an error naming its key.
func (c Config) WithDefaults() (Config, error) {
	err := errors.Join(
		tools.Limit("max_rows", &c.MaxRows, DefaultMaxRows),
		tools.Limit("max_cell_bytes", &c.MaxCellBytes, DefaultMaxCellBytes),
		tools.Limit("max_result_bytes", &c.MaxResultBytes, DefaultMaxResultBytes),
		tools.Limit("statement_timeout", &c.StatementTimeout, DefaultStatementTimeout),
		tools.Limit("approved_timeout", &c.ApprovedTimeout, DefaultApprovedTimeout),
		tools.Limit("preview_timeout", &c.PreviewTimeout, DefaultPreviewTimeout),
		tools.Limit("max_open_conns", &c.MaxOpenConns, DefaultMaxOpenConns),
		tools.Limit("conn_max_lifetime", &c.ConnMaxLifetime, DefaultConnMaxLifetime),
		tools.Limit("conn_max_idle_time", &c.ConnMaxIdleTime, DefaultConnMaxIdleTime),
	)
	// After max_open_conns has its value.
	err = errors.Join(err, tools.Limit("max_idle_conns", &c.MaxIdleConns, min(DefaultMaxIdleConns, c.MaxOpenConns)))
	if c.Default == "" && len(c.Connections) == 1 {
		for name := range c.Connections {
			c.Default = name
		}
	}
	return c, err
}

// names returns the connection names, sorted.
func (c Config) names() []string {
	names := make([]string, 0, len(c.Connections))
	for n := range c.Connections {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// validate checks what WithDefaults cannot fill in. Errors name the key and
// never hold a DSN.
func (c Config) validate() error {
	if len(c.Connections) == 0 {
		return errors.New("connections: at least one connection is needed")
	}
	if c.Default == "" {
		return fmt.Errorf("default: name one of the connections (%s)", strings.Join(c.names(), ", "))
	}
	if _, ok := c.Connections[c.Default]; !ok {
		return fmt.Errorf("default: %q is not a connection (have %s)", c.Default, strings.Join(c.names(), ", "))
	}
	if c.MaxIdleConns > c.MaxOpenConns {
		return fmt.Errorf("max_idle_conns: %d is more than max_open_conns %d", c.MaxIdleConns, c.MaxOpenConns)
	}
	return nil
}

// resolve returns the DSN text for one of a connection's accounts, from the
// config or the environment; "" when neither is set.
func resolve(key, dsn, env string, getenv func(string) string) (string, error) {
	switch {
	case dsn != "" && env != "":
		return "", fmt.Errorf("%s and %s_env: set only one", key, key)
	case env != "":
		v := getenv(env)
		if v == "" {
			return "", fmt.Errorf("%s_env: environment variable %s is empty or not set", key, env)
		}
		return v, nil
	}
	return dsn, nil
}

// driverConfig parses a DSN and pins what the fences rely on, whatever the
// DSN says: no multi-statements, no LOCAL INFILE from the bot's disk, no
// client-side interpolation, driver values (not time.Time) for dates, the
// utf8mb4 connection charset and the sql_mode the parser assumes. Parse errors never hold the DSN.
func driverConfig(dsn string) (*mysql.Config, error) {
	cfg, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	cfg.MultiStatements = false
	cfg.AllowAllFiles = false
	cfg.InterpolateParams = false
	cfg.ParseTime = false
	cfg.ClientFoundRows = false
	// The parser reads text as UTF-8. A multi-byte client charset such as
	// gbk, sjis or big5 lets a character swallow the backslash or quote
	// after it, so the server would read another statement than the one
	// judged: the connection charset is pinned too.
	if err := cfg.Apply(mysql.Charset("utf8mb4", "utf8mb4_general_ci")); err != nil {
		return nil, errors.New("not a valid DSN (the connection charset cannot be pinned)")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	params := make(map[string]string, len(cfg.Params)+1)
	for k, v := range cfg.Params {
		if !sessionFenceParam(k) {
			params[k] = v
		}
	}
	params["sql_mode"] = "'" + sqlrisk.DefaultSQLMode + "'"
	cfg.Params = params
	return cfg, nil
}

// parseDSN is mysql.ParseDSN with an error that never echoes the DSN, and
// no panic (ParseDSN panics on strict=true).
func parseDSN(dsn string) (cfg *mysql.Config, err error) {
	defer func() {
		if recover() != nil {
			cfg, err = nil, errors.New("not a valid DSN (a parameter is not supported)")
		}
	}()
	cfg, err = mysql.ParseDSN(dsn)
	if err != nil {
		return nil, errors.New("not a valid DSN (expected user:password@tcp(host:3306)/dbname?params)")
	}
	return cfg, nil
}

// sessionFenceParam reports whether a DSN parameter would set a session
// variable the tool pins itself; such parameters are dropped.
func sessionFenceParam(k string) bool {
	switch strings.ToLower(k) {
	case "sql_mode", "tx_read_only", "transaction_read_only", "autocommit",
		"max_statement_time", "max_execution_time":
		return true
	}
	return false
}

// Redact returns the DSN with its password replaced, for logs and errors.
// Text that does not parse as a DSN is replaced entirely.
func Redact(dsn string) string {
	cfg, err := parseDSN(dsn)
	if err != nil {
		return "(unparsable DSN)"
	}
	if cfg.Passwd != "" {
		cfg.Passwd = "xxxxx"
	}
	return cfg.FormatDSN()
}
