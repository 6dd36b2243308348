package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/countersign/countersign/adapters/discord"
	"github.com/countersign/countersign/adapters/slack"
	"github.com/countersign/countersign/adapters/terminal"
	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/agent/llm"
	"github.com/countersign/countersign/approval/auditsink"
	"github.com/countersign/countersign/approval/oncall"
	"github.com/countersign/countersign/bot"
	"github.com/countersign/countersign/bot/console"
	"github.com/countersign/countersign/cmd/internal/ops"
	"github.com/countersign/countersign/cmd/internal/telemetry"
	"github.com/countersign/countersign/cmd/internal/yamlkeys"
	"github.com/countersign/countersign/gateway"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools/filetool"
	"github.com/countersign/countersign/tools/httptool"
	"github.com/countersign/countersign/tools/mcptool"
	"github.com/countersign/countersign/tools/redact"
	"github.com/countersign/countersign/tools/shelltool"
	"github.com/countersign/countersign/tools/sqltool"
)

// EnvConfig names the config file when --config is not given.
const EnvConfig = "COUNTERSIGN_CONFIG"

// fileConfig is the configuration file. Each top-level section belongs to
// the package that uses it; main only assembles them. A key no section knows
// is an error that names it. configs/countersign.example.yaml documents
// every key.
type fileConfig struct {
	Risk     risk.Config      `yaml:"risk"`
	LLM      llm.Config       `yaml:"llm"`
	Agent    agent.Config     `yaml:"agent"`
	Store    storeConfig      `yaml:"store"`
	Audit    auditsink.Config `yaml:"audit"`
	Tools    toolsConfig      `yaml:"tools"`
	Bot      bot.Config       `yaml:"bot"`
	Terminal terminalConfig   `yaml:"terminal"`
	Slack    slack.Config     `yaml:"slack"`
	Discord  discord.Config   `yaml:"discord"`
	Log      logConfig        `yaml:"log"`
	Ops      ops.Config       `yaml:"ops"`
	MCP      mcptool.Config   `yaml:"mcp"`
	Console  console.Config   `yaml:"console"`
	Gateway  gateway.Config   `yaml:"gateway"`
	// Telemetry is the traces' section (cmd/internal/telemetry).
	Telemetry telemetry.Config `yaml:"telemetry"`
	// PagerDuty and Opsgenie answer who is on call, for on-call
	// approvers (oncall:pagerduty:<schedule>; approval/oncall).
	PagerDuty oncall.Config `yaml:"pagerduty"`
	Opsgenie  oncall.Config `yaml:"opsgenie"`
}

// terminalConfig is the terminal's section: whether it starts, and its
// own options.
type terminalConfig struct {
	// Enabled starts the terminal beside a chat platform; without a
	// platform it always starts.
	Enabled          *bool `yaml:"enabled"`
	terminal.Options `yaml:",inline"`
}

// toolsConfig holds one section per tool. execute_command and
// file_operations are on by default, rooted at tools.root; execute_sql is on
// once a connection is configured; http_request only when enabled.
type toolsConfig struct {
	// Root is where the command and file tools work when their own root is
	// not set (default: the current directory).
	Root    string                       `yaml:"root"`
	Command commandSection               `yaml:"execute_command"`
	Files   toolSection[filetool.Config] `yaml:"file_operations"`
	SQL     toolSection[sqltool.Config]  `yaml:"execute_sql"`
	HTTP    toolSection[httptool.Config] `yaml:"http_request"`
	// Redact hides secrets in every tool's output (tools/redact).
	Redact redact.Config `yaml:"redact"`
}

// commandSection is execute_command's section: a tool section, and
// whether running commands as root is accepted without a warning.
type commandSection struct {
	toolSection[shelltool.Config] `yaml:",inline"`
	// AllowRoot, when the bot runs as root with no run_as, says that this
	// is meant: the warning at start is not shown.
	AllowRoot bool `yaml:"allow_root"`
}

// toolSection is one tool's section: its own configuration, and whether
// the tool is on (see on for the defaults).
type toolSection[C any] struct {
	Enabled *bool `yaml:"enabled"`
	Config  C     `yaml:",inline"`
}

// on reports whether an optional tool is on: its enabled key when given,
// else def.
func on(enabled *bool, def bool) bool {
	if enabled != nil {
		return *enabled
	}
	return def
}

// storeConfig chooses the approval store: Redis when a URL or addresses are
// configured (in the file or in COUNTERSIGN_REDIS_URL), else in memory.
type storeConfig struct {
	// RedisURL is redis://[user:password@]host:port/db (rediss:// for TLS).
	// Prefer RedisURLEnv for a URL holding a password.
	RedisURL string `yaml:"redis_url"`
	// RedisURLEnv names the environment variable read when RedisURL is
	// empty (default COUNTERSIGN_REDIS_URL).
	RedisURLEnv string `yaml:"redis_url_env"`
	// Addrs are the addresses of a Redis Cluster, or of Sentinels when
	// MasterName is set; used instead of a URL.
	Addrs      []string `yaml:"addrs"`
	MasterName string   `yaml:"master_name"`
	// PasswordEnv names the environment variable holding the password for
	// Addrs.
	PasswordEnv string `yaml:"password_env"`
	// Prefix starts every key (default "cs").
	Prefix string `yaml:"prefix"`
	// AuditMaxLen caps the audit stream (default 100000).
	AuditMaxLen int64 `yaml:"audit_max_len"`
}

// DefaultRedisURLEnv is the variable read for the Redis URL by default.
const DefaultRedisURLEnv = "COUNTERSIGN_REDIS_URL"

// logConfig is where the bot's structured log (and audit lines) go.
type logConfig struct {
	// Level is debug, info, warn or error. Default info; with the terminal
	// adapter on a terminal, warn, so the audit lines do not drown the
	// conversation (they are still kept in the store's audit log).
	Level string `yaml:"level"`
	// Format is json (default) or text.
	Format string `yaml:"format"`
	// File receives the log instead of standard error, appended.
	File string `yaml:"file"`
}

// logLevel parses log.level; "" is def.
func logLevel(s string, def slog.Level) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "":
		return def, nil
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return def, fmt.Errorf("log.level: %q is not one of debug, info, warn, error", s)
}

// configPath is --config, else $COUNTERSIGN_CONFIG, else none.
func configPath(flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	return os.Getenv(EnvConfig)
}

// loadConfig reads the YAML file at path. An empty path or an empty file is
// the default configuration.
func loadConfig(path string) (fileConfig, error) {
	var cfg fileConfig
	if path == "" {
		return cfg, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return cfg, fmt.Errorf("read config: %w", err)
	}
	if err := decodeConfig(data, &cfg); err != nil {
		if _, ok := errors.AsType[*keyProblems](err); ok {
			return cfg, err // each names its key; config check names the file
		}
		return cfg, fmt.Errorf("read config %s: %w", path, err)
	}
	cfg.Risk.OwnFiles, cfg.Risk.ToolsRoot = ownFiles(path, cfg) // issue 25: the bot's files are sensitive
	return cfg, nil
}

// ownFiles lists the bot's own files as absolute paths: the config file
// (which holds the MCP server definitions), the log file and the audit
// file; and the tools root they may lie in. A path that cannot be made
// absolute is kept as written.
func ownFiles(config string, cfg fileConfig) (files []string, root string) {
	root = cfg.Tools.Root
	if abs, err := filepath.Abs(cmp.Or(root, ".")); err == nil {
		root = abs
	}
	var out []string
	for _, f := range []string{config, cfg.Log.File, cfg.Audit.File.Path} {
		if f == "" {
			continue
		}
		if abs, err := filepath.Abs(f); err == nil {
			f = abs
		}
		out = append(out, f)
	}
	return out, root
}

// decodeConfig decodes YAML strictly: an unknown key or a value of the
// wrong kind is an error naming its key path, with the fix (yamlkeys.Check).
func decodeConfig(data []byte, cfg *fileConfig) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return syntaxError(data, err)
	}
	if err := yamlkeys.Check(&doc, reflect.TypeOf(cfg).Elem()); err != nil {
		// The values are still read where they can be, so that config
		// check reports their problems beside the keys'.
		if yaml.Unmarshal(data, cfg) == nil {
			return &keyProblems{err}
		}
		*cfg = fileConfig{}
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// validateSections checks the sections that have a Validate of their own,
// so that `config check` reports them before anything is built: every
// problem, joined. The bot's durations and counts are checked with their
// bounds (validate.go), the rest of its section by bot.Config.Validate.
func validateSections(cfg fileConfig) error {
	var errs []error
	if err := botRules(cfg.Bot).Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := cfg.Terminal.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("terminal: %w", err))
	}
	// Checked whether or not its token is set, so that config check finds
	// a bad section before the day the token is.
	if err := cfg.Discord.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := cfg.Slack.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := cfg.Gateway.Validate(); err != nil {
		return err
	}
	if l := cfg.Ops.Listen; l != "" {
		if _, _, err := net.SplitHostPort(l); err != nil {
			errs = append(errs, fmt.Errorf("ops.listen: %q is not host:port (e.g. 127.0.0.1:9464): %w", l, err))
		}
	}
	if _, err := cfg.Console.WithDefaults(); err != nil {
		return err
	}
	if _, err := logLevel(cfg.Log.Level, slog.LevelInfo); err != nil {
		errs = append(errs, err)
	}
	switch strings.ToLower(cfg.Log.Format) {
	case "", "json", "text":
	default:
		errs = append(errs, fmt.Errorf("log.format: %q is not one of json, text", cfg.Log.Format))
	}
	if cfg.Store.RedisURL != "" && len(cfg.Store.Addrs) > 0 {
		errs = append(errs, errors.New("store: set redis_url or addrs, not both"))
	}
	if cfg.Store.MasterName != "" && len(cfg.Store.Addrs) == 0 {
		errs = append(errs, errors.New("store.master_name: needs the Sentinel addresses in store.addrs"))
	}
	if cfg.Store.AuditMaxLen < 0 {
		errs = append(errs, errors.New("store.audit_max_len: must not be negative"))
	}
	return errors.Join(errs...)
}

// botRules is the bot's section without the durations and counts that
// boundErrors checks, so that bot.Config.Validate, which stops at its
// first problem, reports those of the approvers, channels and rules.
func botRules(c bot.Config) bot.Config {
	c.SweepInterval, c.DedupeWindow, c.ShutdownGrace, c.InboxLease = 0, 0, 0, 0
	c.DedupeSize, c.CardOutput, c.QueueSize, c.MaxTurns = 0, 0, 0, 0
	return c
}

// keyProblems is decodeConfig's error for keys it does not know or values
// of the wrong kind, once the rest of the file has been read: config check
// goes on to judge the values.
type keyProblems struct{ err error }

func (k *keyProblems) Error() string { return k.err.Error() }
func (k *keyProblems) Unwrap() error { return k.err }

// problems lists the problems an error joins (errors.Join), each once, in
// order.
func problems(err error) []string {
	var out []string
	var walk func(error)
	walk = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		if k, ok := err.(*keyProblems); ok {
			walk(k.err)
			return
		}
		if !slices.Contains(out, err.Error()) {
			out = append(out, err.Error())
		}
	}
	walk(err)
	return out
}

// yamlLine finds the line in yaml.v3's syntax errors ("yaml: line 3: …").
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError says where a file is not YAML, in plain words: the line's
// number and text, what the parser expected, and the usual fix.
func syntaxError(data []byte, err error) error {
	m := yamlLine.FindStringSubmatch(err.Error())
	if m == nil {
		return fmt.Errorf("the file is not valid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	n, _ := strconv.Atoi(m[1])
	what := m[2]
	lines := strings.Split(string(data), "\n")
	// The parser names where the construct it gave up on began (a
	// mapping's first key, say); the first line whose prefix of the file
	// does not parse is the line to fix.
	for l := 1; l <= len(lines) && l < 5000; l++ {
		var v any
		if yaml.Unmarshal([]byte(strings.Join(lines[:l], "\n")), &v) != nil {
			n = l
			break
		}
	}
	text := ""
	if n >= 1 && n <= len(lines) {
		text = strings.TrimRight(lines[n-1], "\r")
	}
	hint := "check its indentation (spaces, two per level) and quote a value that holds \": \" or \" #\""
	switch {
	case strings.Contains(text, "\t") || strings.Contains(what, "cannot start any token") && strings.Contains(string(data), "\t"):
		hint = "YAML does not take tabs for indentation: indent with spaces"
	case strings.Contains(what, "mapping values are not allowed"):
		hint = "a value holds \": \" or the line is indented under a value: quote the value, or fix the indentation"
	case strings.Contains(what, "did not find expected key"):
		hint = "the line is indented differently from the keys beside it: line it up with them"
	case strings.Contains(what, "did not find expected ',' or ']'") || strings.Contains(what, "did not find expected ',' or '}'"):
		hint = "a [list] or {map} on this line is not closed, or an item in it needs quotes"
	case strings.Contains(what, "found unexpected end of stream") || strings.Contains(what, "found unexpected end"):
		hint = "a quote opened here is not closed"
	}
	return fmt.Errorf("line %d is not valid YAML (%s): %q; %s", n, what, text, hint)
}
