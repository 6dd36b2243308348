// Package mysqlprobe reaches a MySQL or MariaDB server as a DSN names it
// and says in plain words why it could not, never showing the password.
// The SQL tool's and the audit table's probes (sqltool.Probe,
// auditsink.ProbeMySQL) both use it.
package mysqlprobe

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/countersign/countersign/internal/netcause"
)

// Ping connects with dsn and pings, within ctx and netcause.Timeout; its
// error is a plain sentence.
func Ping(ctx context.Context, dsn string) (err error) {
	defer func() {
		if recover() != nil {
			err = errors.New("the DSN does not parse (expected user:password@tcp(host:3306)/dbname)")
		}
	}()
	mc, err := mysql.ParseDSN(dsn)
	if err != nil {
		return errors.New("the DSN does not parse (expected user:password@tcp(host:3306)/dbname)")
	}
	mc.Timeout = netcause.Timeout
	conn, err := mysql.NewConnector(mc)
	if err != nil {
		return errors.New("the driver refused the DSN's settings")
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	return problem(db.PingContext(ctx), mc)
}

// problem says in words why a MySQL connection failed. It never shows
// the password.
func problem(err error, mc *mysql.Config) error {
	if err == nil {
		return nil
	}
	at := mc.Addr
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1045:
			if strings.Contains(me.Message, "using password: NO") {
				return fmt.Errorf("user %q at %s needs a password, and the DSN gives none", mc.User, at)
			}
			return fmt.Errorf("the server at %s refused the password of user %q (access denied)", at, mc.User)
		case 1044:
			return fmt.Errorf("user %q may not use database %q at %s", mc.User, mc.DBName, at)
		case 1049:
			return fmt.Errorf("database %q does not exist at %s", mc.DBName, at)
		case 1130:
			return fmt.Errorf("the server at %s does not let this host connect", at)
		}
		return fmt.Errorf("the server at %s refused the connection: %s", at, me.Message)
	}
	return netcause.Explain(err, at)
}
