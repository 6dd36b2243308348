package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"
)

// quietLibraries sends the Redis and MySQL clients' own loggers, which
// print to standard error by default ("redis: ... failed to dial after 5
// attempts" before the real error, in the middle of the terminal), to the
// bot's structured log at debug level. What matters reaches people as the
// error the caller returns.
func quietLibraries(log *slog.Logger) {
	redis.SetLogger(redisLog{log})
	_ = mysql.SetLogger(mysqlLog{log}) // fails only for a nil logger
}

type redisLog struct{ log *slog.Logger }

func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, fmt.Sprintf(format, v...), "library", "go-redis")
}

type mysqlLog struct{ log *slog.Logger }

func (l mysqlLog) Print(v ...any) {
	l.log.Debug(fmt.Sprint(v...), "library", "go-sql-driver/mysql")
}
