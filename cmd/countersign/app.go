package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/agent/llm"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/memstore"
	"github.com/countersign/countersign/approval/redisstore"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/risk/sensitive"
	"github.com/countersign/countersign/tools"
	"github.com/countersign/countersign/tools/filetool"
	"github.com/countersign/countersign/tools/httptool"
	"github.com/countersign/countersign/tools/redact"
	"github.com/countersign/countersign/tools/shelltool"
	"github.com/countersign/countersign/tools/sqltool"
)

// app is everything `run` and `config check` build from the configuration,
// before any chat adapter starts.
type app struct {
	cfg    fileConfig // effective: defaults filled, secrets redacted
	log    *slog.Logger
	policy *risk.Policy
	tools  *tools.Registry
	names  []string // tool names, in registration order
	store  approval.Store
	where  string // "memory" or the redacted Redis address
	model  agent.Model
	redis  redis.UniversalClient // nil when the store is in memory
	closer []func() error
	mcp    mcpState // mcp.go
}

// env is what build reads from the process, so tests can give their own.
type env struct {
	getenv   func(string) string
	logOut   io.Writer // standard error
	quietLog bool      // default the log level to warn (terminal on a TTY)
	dial     bool      // connect to Redis now (run, config check) or not (tests)
}

// build assembles the policy, the tools, the model and the store. It
// validates everything and fails with an error that names the key.
func build(ctx context.Context, cfg fileConfig, e env) (a *app, err error) {
	a = &app{cfg: cfg}
	defer func() {
		if err != nil {
			a.close()
			a = nil
		}
	}()
	if err := validateConfig(cfg, e.getenv); err != nil {
		return a, err
	}
	var closeLog func() error
	if a.log, closeLog, err = newLogger(cfg.Log, e); err != nil {
		return a, err
	}
	a.closer = append(a.closer, closeLog)
	quietLibraries(a.log)
	if a.policy, err = risk.New(cfg.Risk); err != nil {
		return a, err
	}
	if a.cfg.Risk.Mode == "" {
		a.cfg.Risk.Mode = risk.Smart
	}
	if a.cfg.Risk.Taint == nil {
		taint := true
		a.cfg.Risk.Taint = &taint
	}
	if err := a.buildTools(cfg.Tools, cfg.Risk.SensitivePatterns()); err != nil {
		return a, err
	}
	if err := a.buildModel(cfg.LLM, e.getenv); err != nil {
		return a, err
	}
	if err := a.buildStore(ctx, cfg.Store, e); err != nil {
		return a, err
	}
	if err := a.checkMCP(cfg.MCP); err != nil { // mcp.go
		return a, err
	}
	if err := a.buildAudit(ctx, cfg.Audit, e); err != nil { // audit.go
		return a, err
	}
	if a.cfg.Agent, err = cfg.Agent.WithDefaults(); err != nil {
		return a, err
	}
	a.cfg.Bot = cfg.Bot.WithDefaults()
	a.showDefaults(e)
	return a, nil
}

// The store's defaults, as redisstore applies them; set here so that the
// effective configuration shows them.
const (
	defaultPrefix      = "cs"
	defaultAuditMaxLen = 100000
)

// showDefaults fills the effective configuration's remaining empty values
// with what applies, so that config check shows real defaults.
func (a *app) showDefaults(e env) {
	c := &a.cfg
	c.Terminal.Options = c.Terminal.Options.WithDefaults()
	enabled := on(c.Terminal.Enabled, false)
	c.Terminal.Enabled = &enabled
	if c.Log.Level == "" {
		c.Log.Level = "info"
		if e.quietLog {
			c.Log.Level = "warn"
		}
	}
	if c.Log.Format == "" {
		c.Log.Format = "json"
	}
	if c.LLM.BaseURL == "" && c.LLM.APIType == llm.APIOpenAI {
		c.LLM.BaseURL = llm.DefaultBaseURL
	}
}

// buildTools builds the tools that are on, and records the effective
// configuration of each, on or off.
func (a *app) buildTools(c toolsConfig, secrets []string) error {
	root := c.Root
	if root == "" {
		root = "."
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return fmt.Errorf("tools.root: %w", err)
	}
	a.cfg.Tools.Root = root
	command, files := on(c.Command.Enabled, true), on(c.Files.Enabled, true)
	sql, web := on(c.SQL.Enabled, len(c.SQL.Config.Connections) > 0), on(c.HTTP.Enabled, false)
	a.cfg.Tools.Command.Enabled = &command
	a.cfg.Tools.Files.Enabled = &files
	a.cfg.Tools.SQL.Enabled = &sql
	a.cfg.Tools.HTTP.Enabled = &web

	var list []tools.Tool
	add := func(t tools.Tool, err error) error {
		if err == nil {
			list = append(list, t)
		}
		return err
	}
	if !command {
		a.cfg.Tools.Command.Config = shownOff(c.Command.Config, shelltool.Config.WithDefaults)
	} else if err := add(a.commandTool(c.Command.Config, root)); err != nil {
		return err
	}
	if !files {
		a.cfg.Tools.Files.Config = shownOff(c.Files.Config, filetool.Config.WithDefaults)
	} else if err := add(a.filesTool(c.Files.Config, root, secrets)); err != nil {
		return err
	}
	if !sql {
		a.cfg.Tools.SQL.Config = shownOff(c.SQL.Config, sqltool.Config.WithDefaults)
	} else if err := add(a.sqlTool(c.SQL.Config)); err != nil {
		return err
	}
	if !web {
		a.cfg.Tools.HTTP.Config = shownOff(c.HTTP.Config, httptool.Config.WithDefaults)
	} else if err := add(a.httpTool(c.HTTP.Config)); err != nil {
		return err
	}
	reg, err := tools.NewRegistry(list...)
	if err != nil {
		return fmt.Errorf("tools: %w", err)
	}
	if err := a.buildRedactor(reg, c.Redact); err != nil {
		return err
	}
	// A direct command of a tool that is off says which key turns it on.
	for _, off := range []struct {
		on   bool
		tool string
		d    tools.Direct
		why  string
	}{
		{command, shelltool.Name, shelltool.DirectCommand, "Shell commands are off here (tools.execute_command.enabled is false in the configuration)."},
		{files, filetool.Name, filetool.DirectCommand, "File operations are off here (tools.file_operations.enabled is false in the configuration)."},
		{sql, sqltool.Name, sqltool.DirectCommand, "SQL is off here: no database is configured (add a connection under tools.execute_sql.connections in the configuration)."},
		{web, httptool.Name, httptool.DirectCommand, "HTTP requests are off here (set tools.http_request.enabled: true in the configuration)."},
	} {
		if !off.on {
			reg.Off(off.tool, off.d, off.why)
		}
	}
	a.tools = reg
	for _, t := range list {
		a.names = append(a.names, t.Name())
	}
	return nil
}

// commandTool builds execute_command, rooted at root unless its own root
// is set. Its process-wide fences (shelltool.FenceProcess) are set up
// first, so the bot is fenced by default.
func (a *app) commandTool(c shelltool.Config, root string) (tools.Tool, error) {
	if c.Root == "" {
		c.Root = root
	}
	if err := shelltool.FenceProcess(c.KeepDumpable); err != nil {
		return nil, fmt.Errorf("tools.execute_command: %w", err)
	}
	t, err := shelltool.New(c)
	if err != nil {
		return nil, fmt.Errorf("tools.execute_command: %w", err)
	}
	a.cfg.Tools.Command.Config = t.Config()
	return t, nil
}

// filesTool builds file_operations, rooted at root unless its own root is
// set. It gets the same secret paths as the policy, so a symbolic link
// cannot reach one under another name.
func (a *app) filesTool(c filetool.Config, root string, secrets []string) (tools.Tool, error) {
	if c.Root == "" {
		c.Root = root
	}
	m, err := sensitive.New(secrets)
	if err != nil {
		return nil, fmt.Errorf("risk.sensitive_paths: %w", err)
	}
	c.Sensitive = m
	t, err := filetool.New(c)
	if err != nil {
		return nil, fmt.Errorf("tools.file_operations: %w", err)
	}
	a.closer = append(a.closer, t.Close)
	a.cfg.Tools.Files.Config = t.Config()
	return t, nil
}

// sqlTool builds execute_sql.
func (a *app) sqlTool(c sqltool.Config) (tools.Tool, error) {
	t, err := sqltool.New(c)
	if err != nil {
		return nil, fmt.Errorf("tools.execute_sql: %w", err)
	}
	a.closer = append(a.closer, t.Close)
	a.cfg.Tools.SQL.Config = t.Config()
	return t, nil
}

// httpTool builds http_request.
func (a *app) httpTool(c httptool.Config) (tools.Tool, error) {
	t, err := httptool.New(c)
	if err != nil {
		return nil, fmt.Errorf("tools.http_request: %w", err)
	}
	a.closer = append(a.closer, t.Close)
	a.cfg.Tools.HTTP.Config = t.Config()
	return t, nil
}

// shownOff is the effective configuration of a tool that is off: its
// defaults filled in, so that config check does not show zero limits that
// would mean something else if the tool were turned on. A section that
// does not check out is shown as written; run does not read it.
func shownOff[C any](c C, withDefaults func(C) (C, error)) C {
	if d, err := withDefaults(c); err == nil {
		return d
	}
	return c
}

// buildModel builds the model client when one is configured (in the file
// or the environment), and records the effective llm section, API key
// redacted.
func (a *app) buildModel(c llm.Config, getenv func(string) string) error {
	c = c.FromEnv(getenv)
	shown, err := c.WithDefaults()
	switch {
	case c.Configured() && err != nil:
		return err
	case c.Configured():
		m, err := llm.New(c, nil)
		if err != nil {
			return err
		}
		a.model = m
	case err != nil:
		shown = c // no model: the section is shown as written
	}
	if shown.APIKey != "" {
		shown.APIKey = "(redacted)"
	}
	a.cfg.LLM = shown
	return nil
}

// buildStore opens the approval store: Redis when a URL or addresses are
// configured (reached now when e.dial), else memory. The address shown
// never holds the password.
func (a *app) buildStore(ctx context.Context, c storeConfig, e env) error {
	envName := c.RedisURLEnv
	if envName == "" {
		envName = DefaultRedisURLEnv
	}
	a.cfg.Store.RedisURLEnv = envName
	rawURL := c.RedisURL
	if rawURL == "" {
		rawURL = strings.TrimSpace(e.getenv(envName))
	}
	if c.AuditMaxLen < 0 {
		return errors.New("store.audit_max_len: must not be negative")
	}
	if c.Prefix == "" {
		c.Prefix = defaultPrefix
	}
	if c.AuditMaxLen == 0 {
		c.AuditMaxLen = defaultAuditMaxLen
	}
	a.cfg.Store.Prefix, a.cfg.Store.AuditMaxLen = c.Prefix, c.AuditMaxLen
	opts := redisstore.Options{Prefix: c.Prefix, AuditMaxLen: c.AuditMaxLen, Logger: a.log}
	var client redis.UniversalClient
	switch {
	case rawURL != "":
		o, err := redis.ParseURL(rawURL)
		if err != nil {
			// ParseURL's errors may quote the URL, password and all.
			return fmt.Errorf("store.redis_url (or $%s): not a redis:// or rediss:// URL", envName)
		}
		client = redis.NewClient(o)
		a.where = "redis " + redactURL(rawURL)
		a.cfg.Store.RedisURL = redactURL(rawURL)
	case len(c.Addrs) > 0:
		pw := ""
		if c.PasswordEnv != "" {
			pw = e.getenv(c.PasswordEnv)
		}
		client = redis.NewUniversalClient(&redis.UniversalOptions{Addrs: c.Addrs, MasterName: c.MasterName, Password: pw})
		a.where = "redis " + strings.Join(c.Addrs, ",")
	default:
		a.store = memstore.New(memstore.Options{Logger: a.log})
		a.where = "memory"
		a.closer = append(a.closer, a.store.Close)
		return nil
	}
	if e.dial {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := client.Ping(pctx).Err(); err != nil {
			_ = client.Close()
			return fmt.Errorf("store: cannot reach %s: %w", a.where, err)
		}
	}
	a.redis = client
	a.store = redisstore.New(client, opts)
	a.closer = append(a.closer, a.store.Close)
	return nil
}

// close releases what build opened, in reverse order.
func (a *app) close() {
	for i := len(a.closer) - 1; i >= 0; i-- {
		_ = a.closer[i]()
	}
	a.closer = nil
}

// redactURL drops the password from a URL for display.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// newLogger builds the structured log: JSON (or text) at the configured
// level, on standard error or appended to log.file.
func newLogger(c logConfig, e env) (*slog.Logger, func() error, error) {
	def := slog.LevelInfo
	if e.quietLog {
		def = slog.LevelWarn
	}
	level, err := logLevel(c.Level, def)
	if err != nil {
		return nil, nil, err
	}
	out, closeOut := e.logOut, func() error { return nil }
	if c.File != "" {
		f, err := os.OpenFile(c.File, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("log.file: %w", err)
		}
		out, closeOut = f, f.Close
	}
	ho := &slog.HandlerOptions{Level: level}
	if strings.ToLower(c.Format) == "text" {
		return slog.New(slog.NewTextHandler(out, ho)), closeOut, nil
	}
	return slog.New(slog.NewJSONHandler(out, ho)), closeOut, nil
}

// buildRedactor puts the secret scanner between every tool and everything
// downstream, unless tools.redact.enabled is false. It is compiled once
// here. The effective configuration shows how many values are allowed,
// not the values, which look like secrets.
func (a *app) buildRedactor(reg *tools.Registry, c redact.Config) error {
	on := c.On()
	a.cfg.Tools.Redact.Enabled = &on
	if len(c.Allow) > 0 {
		a.cfg.Tools.Redact.Allow = slices.Repeat([]string{tools.Mask}, len(c.Allow))
	}
	if !on {
		return nil
	}
	x, err := redact.New(c.Allow)
	if err != nil {
		return fmt.Errorf("tools.redact.allow: %w", err)
	}
	reg.Redact(x)
	return nil
}
