package main

import (
	"context"
	"sort"
	"sync"

	"github.com/countersign/countersign/agent/llm"
	"github.com/countersign/countersign/approval/auditsink"
	"github.com/countersign/countersign/approval/redisstore"
	"github.com/countersign/countersign/internal/netcause"
	"github.com/countersign/countersign/tools/sqltool"
)

// connectTimeout bounds each backend's check.
const connectTimeout = netcause.Timeout

// backend is one server the configuration names, and how to reach it.
type backend struct {
	// name says which, in words: "redis redis://127.0.0.1:6379/0",
	// "SQL connection orders (read-only account)".
	name  string
	check func(context.Context) error // its error is a plain sentence
	// warn, when set, runs once check passed and returns a warning
	// sentence, or "" (connect_file.go).
	warn func(context.Context) string
}

// reach is one backend's outcome.
type reach struct {
	name string
	err  error
	warn string
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
		bs = append(bs, backend{name: a.where, check: func(ctx context.Context) error { return redisstore.Probe(ctx, client) }})
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
			ro := pick(c.ReadOnlyDSN, c.ReadOnlyDSNEnv, getenv)
			main := backend{name: "SQL connection " + n, check: sqlProbe(dsn)}
			if ro == "" && full {
				main.warn = fileWarning(dsn, "its account, which auto-run SELECTs use (no readonly_dsn),")
			}
			bs = append(bs, main)
			if ro != "" {
				b := backend{name: "SQL connection " + n + " (read-only account)", check: sqlProbe(ro)}
				if full {
					b.warn = fileWarning(ro, "the read-only account")
				}
				bs = append(bs, b)
			}
		}
	}
	if full && cfg.Audit.MySQL.DSNEnv != "" {
		if dsn := getenv(cfg.Audit.MySQL.DSNEnv); dsn != "" {
			bs = append(bs, backend{name: "audit table (audit.mysql)", check: func(ctx context.Context) error { return auditsink.ProbeMySQL(ctx, dsn) }})
		}
	}
	if full {
		bs = append(bs, a.mcpBackends(cfg.MCP)...) // mcp.go
	}
	if m, ok := a.model.(*llm.Client); ok && !full {
		bs = append(bs, backend{name: "model server " + m.Server(), check: m.Dial})
	} else if ok {
		bs = append(bs, backend{name: "model " + a.cfg.LLM.Model + " at " + m.Server(), check: m.Probe})
	}
	return bs
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
			if out[i].err == nil && b.warn != nil {
				out[i].warn = b.warn(cctx)
			}
		})
	}
	wg.Wait()
	return out
}

// sqlProbe is sqltool.Probe of dsn.
func sqlProbe(dsn string) func(context.Context) error {
	return func(ctx context.Context) error { return sqltool.Probe(ctx, dsn) }
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
