package sqltool

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/countersign/countersign/risk/sqlrisk"
)

// flavor is which server a pool talks to; they name the read-only and time
// limit variables differently.
type flavor int

const (
	flavorUnknown flavor = iota
	flavorMariaDB
	flavorMySQL
)

// flavor learns the server's flavor once per pool, on c.
func (p *pool) flavor(ctx context.Context, c *sql.Conn) (flavor, error) {
	p.mu.Lock()
	fl := p.fl
	p.mu.Unlock()
	if fl != flavorUnknown {
		return fl, nil
	}
	var version string
	if err := c.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return flavorUnknown, fmt.Errorf("ask the server version: %w", err)
	}
	fl = flavorFromVersion(version)
	p.mu.Lock()
	p.fl = fl
	p.mu.Unlock()
	return fl, nil
}

func flavorFromVersion(version string) flavor {
	if strings.Contains(strings.ToLower(version), "mariadb") {
		return flavorMariaDB
	}
	return flavorMySQL
}

// readOnlySession is the one statement that makes a session read-only,
// sets its statement time limit and pins sql_mode again (the DSN pins it
// only when the connection opens): max_statement_time in seconds on MariaDB
// (every statement), max_execution_time in milliseconds on MySQL (SELECT,
// which is all an auto-run call may run).
func (f flavor) readOnlySession(limit time.Duration) string {
	mode := ", sql_mode = '" + sqlrisk.DefaultSQLMode + "'"
	if f == flavorMariaDB {
		return "SET SESSION tx_read_only = 1, max_statement_time = " + strconv.FormatFloat(max(limit.Seconds(), 0.001), 'f', 3, 64) + mode
	}
	return "SET SESSION transaction_read_only = 1, max_execution_time = " + strconv.FormatInt(max(limit.Milliseconds(), 1), 10) + mode
}
