package main

import (
	"context"
	"database/sql"

	"github.com/go-sql-driver/mysql"

	"github.com/countersign/countersign/tools/sqltool"
)

// fileWarning returns a check that warns when the account of dsn, which
// auto-run SELECTs use, holds the FILE privilege (sqltool.FileReadWarning
// says why that matters). who names the account in the sentence.
func fileWarning(dsn, who string) func(context.Context) string {
	return func(ctx context.Context) (warning string) {
		defer func() {
			if recover() != nil {
				warning = "" // sqlCheck has said the DSN does not parse
			}
		}()
		mc, err := mysql.ParseDSN(dsn)
		if err != nil {
			return "" // sqlCheck has said the DSN does not parse
		}
		mc.Timeout = connectTimeout
		conn, err := mysql.NewConnector(mc)
		if err != nil {
			return ""
		}
		db := sql.OpenDB(conn)
		defer db.Close()
		file, err := sqltool.FilePrivilege(ctx, db)
		switch {
		case err != nil:
			return "could not check whether " + who + " holds the FILE privilege (" + err.Error() + ")"
		case file:
			return who + " " + sqltool.FileReadWarning
		}
		return ""
	}
}
