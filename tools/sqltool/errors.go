package sqltool

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Server error numbers the tool puts in plain words.
const (
	errDBAccessDenied     = 1044 // ER_DBACCESS_DENIED_ERROR
	errAccessDenied       = 1045 // ER_ACCESS_DENIED_ERROR
	errBadDB              = 1049 // ER_BAD_DB_ERROR
	errBadField           = 1054 // ER_BAD_FIELD_ERROR
	errParse              = 1064 // ER_PARSE_ERROR
	errTableAccessDenied  = 1142 // ER_TABLEACCESS_DENIED_ERROR
	errColumnAccessDenied = 1143 // ER_COLUMNACCESS_DENIED_ERROR
	errNoSuchTable        = 1146 // ER_NO_SUCH_TABLE
	errSpecificAccess     = 1227 // ER_SPECIFIC_ACCESS_DENIED_ERROR
	errQueryInterrupted   = 1317 // ER_QUERY_INTERRUPTED
	errProcAccessDenied   = 1370 // ER_PROCACCESS_DENIED_ERROR
	errReadOnlyTx         = 1792 // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
	errStatementTimeout   = 1969 // MariaDB ER_STATEMENT_TIMEOUT
	errQueryTimeout       = 3024 // MySQL ER_QUERY_TIMEOUT
)

// nearRE finds the position in a syntax error: "... near 'FORM t' at line 1".
var nearRE = regexp.MustCompile(`(?s)near '(.*)' at line (\d+)\s*$`)

// plainError turns a driver or server error into a sentence that is safe to
// show: it never holds the DSN or a password.
func (t *Tool) plainError(err error, limit time.Duration) string {
	return t.scrub(describe(err, limit))
}

func describe(err error, limit time.Duration) string {
	var me *mysql.MySQLError
	switch {
	case errors.As(err, &me):
		return describeServer(me, limit)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("timeout: the statement was stopped when it reached its time limit of %s", limit)
	case errors.Is(err, context.Canceled):
		return "the statement was cancelled before it finished"
	case errors.Is(err, mysql.ErrInvalidConn), errors.Is(err, driver.ErrBadConn):
		return "the connection to the database server broke"
	}
	return err.Error()
}

func describeServer(me *mysql.MySQLError, limit time.Duration) string {
	msg := strings.TrimSpace(me.Message)
	switch me.Number {
	case errStatementTimeout, errQueryTimeout:
		return fmt.Sprintf("timeout: the server stopped the statement when it reached its time limit of %s (error %d)", limit, me.Number)
	case errQueryInterrupted:
		return fmt.Sprintf("the statement was interrupted on the server, e.g. by a time limit of %s (error %d)", limit, me.Number)
	case errBadDB:
		return fmt.Sprintf("unknown database: %s (error %d)", msg, me.Number)
	case errParse:
		if m := nearRE.FindStringSubmatch(msg); m != nil {
			near := m[1]
			if r := []rune(near); len(r) > 80 {
				near = string(r[:80]) + "…"
			}
			if near == "" {
				return fmt.Sprintf("syntax error at the end of the statement (line %s) (error %d)", m[2], me.Number)
			}
			return fmt.Sprintf("syntax error near '%s' at line %s (error %d)", near, m[2], me.Number)
		}
		return fmt.Sprintf("syntax error: %s (error %d)", msg, me.Number)
	case errDBAccessDenied, errAccessDenied, errTableAccessDenied, errColumnAccessDenied, errSpecificAccess, errProcAccessDenied:
		return fmt.Sprintf("access denied: %s (error %d)", msg, me.Number)
	case errReadOnlyTx:
		return fmt.Sprintf("refused by the read-only fence: this call ran without a person's approval, so the server refused a statement that writes (error %d)", me.Number)
	case errNoSuchTable:
		return fmt.Sprintf("unknown table: %s (error %d)", msg, me.Number)
	case errBadField:
		return fmt.Sprintf("unknown column: %s (error %d)", msg, me.Number)
	}
	return fmt.Sprintf("the server refused the statement: %s (error %d)", msg, me.Number)
}

// secretScrubber replaces every password the tool knows with xxxxx.
func secretScrubber(passwords []string) *strings.Replacer {
	// Longest first, so a password that contains another is replaced whole.
	sort.Slice(passwords, func(i, j int) bool { return len(passwords[i]) > len(passwords[j]) })
	var pairs []string
	for _, p := range passwords {
		if p != "" {
			pairs = append(pairs, p, "xxxxx")
		}
	}
	return strings.NewReplacer(pairs...)
}
