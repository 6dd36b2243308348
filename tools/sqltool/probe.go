package sqltool

import (
	"context"

	"github.com/countersign/countersign/internal/mysqlprobe"
)

// Probe reaches the server a connection's DSN names, as the tool would
// connect, and says in a plain sentence why it cannot (the password is
// refused, the database does not exist, nothing listens), never showing
// the password. `config check --connect` and run's start call it for each
// connection and its read-only account.
func Probe(ctx context.Context, dsn string) error { return mysqlprobe.Ping(ctx, dsn) }
