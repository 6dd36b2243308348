package sqltool

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"regexp"
	"strings"
)

// FileReadWarning is why an auto-run account must not hold FILE, for the
// operator: a SELECT the policy whitelists may call a stored function, and
// the function runs with the caller's FILE privilege, so LOAD_FILE() reads
// server files even inside a read-only transaction.
const FileReadWarning = "holds the FILE privilege: a stored function called from an auto-run SELECT can read " +
	"files on the database server (LOAD_FILE) even in a read-only transaction; give auto-run calls a " +
	"SELECT-only account (readonly_dsn) without FILE"

// globalGrant matches a grant line on *.* and captures its privileges.
var globalGrant = regexp.MustCompile(`(?i)^GRANT\s+(.+?)\s+ON\s+\*\.\*\s+TO\s`)

// FilePrivilege reports whether the account db connects as holds the FILE
// privilege: directly, through ALL PRIVILEGES on *.*, or through a role it
// may set (information_schema.APPLICABLE_ROLES, where the server has it).
// A role's grants are read by setting the role on a connection of its
// own, which is then discarded, so no session of db keeps it.
func FilePrivilege(ctx context.Context, db *sql.DB) (bool, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return false, fmt.Errorf("connect: %w", err)
	}
	defer func() {
		// The session's role may have changed: never reuse it.
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		_ = conn.Close()
	}()
	lines, err := grants(ctx, conn, "SHOW GRANTS")
	if err != nil {
		return false, fmt.Errorf("read the account's grants: %w", err)
	}
	if hasFile(lines) {
		return true, nil
	}
	roles, err := applicableRoles(ctx, conn)
	if err != nil {
		return false, nil // no roles table (older servers): the direct grants are all there is
	}
	for _, r := range roles {
		if _, err := conn.ExecContext(ctx, "SET ROLE "+quoteIdent(r)); err != nil {
			return false, fmt.Errorf("set role %s to read its grants: %w", r, err)
		}
		lines, err := grants(ctx, conn, "SHOW GRANTS FOR CURRENT_ROLE")
		if err != nil {
			return false, fmt.Errorf("read the grants of role %s: %w", r, err)
		}
		if hasFile(lines) {
			return true, nil
		}
	}
	return false, nil
}

// hasFile reports whether grant lines give FILE on *.*.
func hasFile(lines []string) bool {
	for _, l := range lines {
		m := globalGrant.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		for _, p := range strings.Split(m[1], ",") {
			switch strings.ToUpper(strings.TrimSpace(p)) {
			case "FILE", "ALL", "ALL PRIVILEGES":
				return true
			}
		}
	}
	return false
}

// grants runs a SHOW GRANTS statement and returns its lines.
func grants(ctx context.Context, db *sql.Conn, query string) ([]string, error) {
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// applicableRoles returns the roles the account may use.
func applicableRoles(ctx context.Context, db *sql.Conn) ([]string, error) {
	rows, err := db.QueryContext(ctx, "SELECT DISTINCT ROLE_NAME FROM information_schema.APPLICABLE_ROLES")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// quoteIdent quotes a name with backquotes.
func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
