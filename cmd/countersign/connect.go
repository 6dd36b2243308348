package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"

	"github.com/countersign/countersign/agent/llm"
)

// connectTimeout bounds each backend's check.
const connectTimeout = 5 * time.Second

// backend is one server the configuration names, and how to reach it.
type backend struct {
	// name says which, in words: "redis redis://127.0.0.1:6379/0",
	// "SQL connection orders (read-only account)".
	name  string
	check func(context.Context) error // its error is a plain sentence
}

// reach is one backend's outcome.
type reach struct {
	name string
	err  error
}

// backends lists every server the configuration names: the Redis store,
// each SQL connection and its read-only account, the audit table, and the
// model. cfg is the
// configuration as loaded (DSNs not yet redacted). full (config check
// --connect) checks Redis too and asks the model server for its /models;
// at run's start, Redis has been reached already, and the model server is
// only dialled: a request would cost a call, and a wrong key or model is
// said plainly at the first message anyway.
func (a *app) backends(cfg fileConfig, getenv func(string) string, full bool) []backend {
	var bs []backend
	if full && a.redis != nil {
		client := a.redis
		bs = append(bs, backend{name: a.where, check: func(ctx context.Context) error { return redisProblem(client.Ping(ctx).Err()) }})
	}
	if on(a.cfg.Tools.SQL.Enabled, false) {
		names := make([]string, 0, len(cfg.Tools.SQL.Config.Connections))
		for n := range cfg.Tools.SQL.Config.Connections {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			c := cfg.Tools.SQL.Config.Connections[n]
			dsn := pick(c.DSN, c.DSNEnv, getenv)
			bs = append(bs, backend{name: "SQL connection " + n, check: sqlCheck(dsn)})
			if ro := pick(c.ReadOnlyDSN, c.ReadOnlyDSNEnv, getenv); ro != "" {
				bs = append(bs, backend{name: "SQL connection " + n + " (read-only account)", check: sqlCheck(ro)})
			}
		}
	}
	if full && cfg.Audit.MySQL.DSNEnv != "" {
		if dsn := getenv(cfg.Audit.MySQL.DSNEnv); dsn != "" {
			bs = append(bs, backend{name: "audit table (audit.mysql)", check: sqlCheck(dsn)})
		}
	}
	if full {
		bs = append(bs, a.mcpBackends(cfg.MCP)...) // mcp.go
	}
	if m, ok := a.model.(*llm.Client); ok && !full {
		bs = append(bs, backend{name: "model server " + m.Server(), check: func(ctx context.Context) error { return dial(ctx, m.Server()) }})
	} else if ok {
		bs = append(bs, backend{name: "model " + a.cfg.LLM.Model + " at " + m.Server(), check: func(ctx context.Context) error {
			if err := m.Check(ctx); err != nil {
				if fix := llm.Fix(err); fix != "" {
					return errors.New(fix)
				}
				return err
			}
			return nil
		}})
	}
	return bs
}

// dial opens and closes a TCP connection to the host of rawURL.
func dial(ctx context.Context, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return errors.New("the URL does not parse")
	}
	addr := u.Host
	if u.Port() == "" {
		port := "443"
		if u.Scheme == "http" {
			port = "80"
		}
		addr = net.JoinHostPort(u.Hostname(), port)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return netProblem(err, addr)
	}
	return conn.Close()
}

// pick is a DSN from the file, else from the variable it names.
func pick(dsn, env string, getenv func(string) string) string {
	if dsn == "" && env != "" {
		return getenv(env)
	}
	return dsn
}

// reachAll checks every backend at once, each within connectTimeout, and
// returns the outcomes in the order given.
func reachAll(ctx context.Context, bs []backend) []reach {
	out := make([]reach, len(bs))
	var wg sync.WaitGroup
	for i, b := range bs {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, connectTimeout)
			defer cancel()
			out[i] = reach{name: b.name, err: b.check(cctx)}
		})
	}
	wg.Wait()
	return out
}

// sqlCheck connects with dsn and pings, as the SQL tool would.
func sqlCheck(dsn string) func(context.Context) error {
	return func(ctx context.Context) (err error) {
		defer func() {
			if recover() != nil {
				err = errors.New("the DSN does not parse (expected user:password@tcp(host:3306)/dbname)")
			}
		}()
		mc, err := mysql.ParseDSN(dsn)
		if err != nil {
			return errors.New("the DSN does not parse (expected user:password@tcp(host:3306)/dbname)")
		}
		mc.Timeout = connectTimeout
		conn, err := mysql.NewConnector(mc)
		if err != nil {
			return errors.New("the driver refused the DSN's settings")
		}
		db := sql.OpenDB(conn)
		defer db.Close()
		return sqlProblem(db.PingContext(ctx), mc)
	}
}

// sqlProblem says in words why a MySQL connection failed. It never shows
// the password.
func sqlProblem(err error, mc *mysql.Config) error {
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
	return netProblem(err, at)
}

// redisProblem says in words why Redis did not answer a PING.
func redisProblem(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "WRONGPASS"), strings.Contains(msg, "invalid password"):
		return errors.New("the server refused the password")
	case strings.Contains(msg, "NOAUTH"):
		return errors.New("the server needs a password, and none is configured")
	case errors.Is(err, redis.ErrClosed):
		return errors.New("the client is closed")
	}
	return netProblem(err, "")
}

// netProblem says why a connection to addr failed, for the common causes.
func netProblem(err error, addr string) error {
	at := ""
	if addr != "" {
		at = " at " + addr
	}
	var dns *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("nothing listens%s (connection refused)", at)
	case errors.As(err, &dns):
		return fmt.Errorf("the host name %s does not resolve", dns.Name)
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return fmt.Errorf("no answer%s within %s", at, connectTimeout)
	}
	return fmt.Errorf("cannot connect%s: %w", at, err)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// downLines are the sentences for the backends that are down, one each.
func downLines(rs []reach) []string {
	var lines []string
	for _, r := range rs {
		if r.err != nil {
			lines = append(lines, r.name+" is down: "+r.err.Error())
		}
	}
	return lines
}
