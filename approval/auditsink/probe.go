package auditsink

import (
	"context"

	"github.com/countersign/countersign/internal/mysqlprobe"
)

// ProbeMySQL reaches the server of the audit table (audit.mysql) that dsn
// names, and says in a plain sentence why it cannot, never showing the
// password. It creates nothing: OpenMySQL creates the table.
func ProbeMySQL(ctx context.Context, dsn string) error { return mysqlprobe.Ping(ctx, dsn) }
