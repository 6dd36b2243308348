package mcptool

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/countersign/countersign/risk"
)

// Config is the mcp section of the configuration file.
//
//	mcp:
//	  servers:
//	    fs:
//	      command: [npx, -y, "@modelcontextprotocol/server-filesystem", /srv/reports]
//	      trusted: true            # its readOnlyHint: true tools run without a card
//	      policy: {"write_*": block, move_file: confirm}
//	    grafana:
//	      url: https://mcp.grafana.internal/mcp
//	      headers_env: {Authorization: GRAFANA_MCP_AUTH}
type Config struct {
	Servers map[string]ServerConfig `yaml:"servers"`
}

// ServerConfig is one MCP server: a program spoken to over stdio
// (Command) or a streamable HTTP endpoint (URL), never both.
type ServerConfig struct {
	// Command is the program and its arguments.
	Command []string `yaml:"command"`
	// Env are fixed variables for the program.
	Env map[string]string `yaml:"env"`
	// EnvPass names variables of the bot's own environment passed on as
	// they are. Nothing else of the bot's environment reaches the server
	// but PATH, HOME and the locale (LANG, LANGUAGE, LC_*).
	EnvPass []string `yaml:"env_pass"`
	// Dir is the program's working directory (default: the bot's).
	Dir string `yaml:"dir"`

	// Write lists folders a stdio server may write besides its own
	// temporary folder, under the kernel's fence (program.go): a
	// filesystem server's folders.
	Write []string `yaml:"write"`
	// Unfenced runs a stdio server without the kernel's fence (it still
	// runs as the command tool's user and dies with the bot).
	Unfenced bool `yaml:"unfenced"`
	// URL is a streamable HTTP endpoint.
	URL string `yaml:"url"`
	// HeadersEnv are request headers, each read from the named variable
	// of the bot's environment: {Authorization: GRAFANA_MCP_AUTH}.
	HeadersEnv map[string]string `yaml:"headers_env"`

	// Trusted believes the server's readOnlyHint: its read-only tools run
	// without a card. Other annotations only ever raise the risk.
	Trusted bool `yaml:"trusted"`
	// Policy is the operator's setting per tool: a tool name or a glob
	// ("write_*", "*" for every tool) mapped to auto, confirm or block. An
	// exact name wins over globs, a longer glob over a shorter one.
	Policy map[string]string `yaml:"policy"`

	// Timeout bounds each call (default 60s); StartTimeout bounds the
	// start and the listing of the tools (default 30s).
	Timeout      time.Duration `yaml:"timeout"`
	StartTimeout time.Duration `yaml:"start_timeout"`
	// MaxOutputBytes caps the text of a result (default 64 KiB).
	MaxOutputBytes int `yaml:"max_output_bytes"`

	// Tools optionally lists the server's tools as its tools/list gives
	// them (name and annotations), for `countersign assess` to judge calls
	// without starting the server. The bot itself always asks the server.
	Tools []DeclaredTool `yaml:"tools"`
}

// DeclaredTool is one tool of a server's list in the configuration.
type DeclaredTool struct {
	Name        string              `yaml:"name"`
	Annotations DeclaredAnnotations `yaml:"annotations"`
}

// DeclaredAnnotations are the hints the policy reads, spelled as MCP
// spells them; an absent destructiveHint is true, as in the spec.
type DeclaredAnnotations struct {
	ReadOnlyHint    bool  `yaml:"readOnlyHint"`
	DestructiveHint *bool `yaml:"destructiveHint"`
}

// The defaults.
const (
	DefaultTimeout        = 60 * time.Second
	DefaultStartTimeout   = 30 * time.Second
	DefaultMaxOutputBytes = 64 << 10
)

// serverNameRE is what a server name may look like: it starts every
// function name of its tools.
var serverNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`)

// envNameRE is a portable variable name.
var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// headerNameRE is an HTTP header name (RFC 9110 token).
var headerNameRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// WithDefaults validates c and fills in the defaults. An error names the
// key and the fix: `mcp.servers.fs: set command (a stdio program) or url
// (streamable HTTP), not both`.
func (c Config) WithDefaults() (Config, error) {
	out := Config{Servers: map[string]ServerConfig{}}
	names := make([]string, 0, len(c.Servers))
	for n := range c.Servers {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		s, err := c.Servers[name].withDefaults("mcp.servers."+name, name)
		if err != nil {
			return Config{}, err
		}
		out.Servers[name] = s
	}
	return out, nil
}

func (s ServerConfig) withDefaults(key, name string) (ServerConfig, error) {
	if !serverNameRE.MatchString(name) {
		return s, fmt.Errorf("%s: the server name must be 1 to 32 letters, digits, _ or -, starting with a letter or digit", key)
	}
	switch {
	case len(s.Command) > 0 && s.URL != "":
		return s, fmt.Errorf("%s: set command (a program spoken to over stdio) or url (streamable HTTP), not both", key)
	case len(s.Command) == 0 && s.URL == "":
		return s, fmt.Errorf("%s: set command (a program and its arguments, spoken to over stdio) or url (a streamable HTTP endpoint)", key)
	case len(s.Command) > 0 && strings.TrimSpace(s.Command[0]) == "":
		return s, fmt.Errorf("%s.command: the program (first item) is empty", key)
	}
	if s.URL != "" {
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return s, fmt.Errorf("%s.url: %q is not an http:// or https:// URL", key, s.URL)
		}
		if u.User != nil {
			return s, fmt.Errorf("%s.url: put credentials in headers_env, not in the URL", key)
		}
		if len(s.Env) > 0 || len(s.EnvPass) > 0 || s.Dir != "" || len(s.Write) > 0 || s.Unfenced {
			return s, fmt.Errorf("%s: env, env_pass, dir, write and unfenced are for a command; an HTTP server gets headers_env", key)
		}
	} else if len(s.HeadersEnv) > 0 {
		return s, fmt.Errorf("%s.headers_env: headers are for a url; a command gets env and env_pass", key)
	}
	s.Write = slices.Clone(s.Write)
	for i, w := range s.Write {
		if !filepath.IsAbs(w) {
			return s, fmt.Errorf("%s.write: %q is not an absolute path", key, w)
		}
		real, err := filepath.EvalSymlinks(w)
		if err != nil {
			return s, fmt.Errorf("%s.write: %w", key, err)
		}
		s.Write[i] = real
	}
	for k, v := range s.Env {
		if !envNameRE.MatchString(k) {
			return s, fmt.Errorf("%s.env: %q is not a variable name", key, k)
		}
		if strings.ContainsRune(v, 0) {
			return s, fmt.Errorf("%s.env.%s: holds a NUL byte", key, k)
		}
	}
	for _, k := range s.EnvPass {
		if !envNameRE.MatchString(k) {
			return s, fmt.Errorf("%s.env_pass: %q is not a variable name", key, k)
		}
	}
	for h, v := range s.HeadersEnv {
		if !headerNameRE.MatchString(h) {
			return s, fmt.Errorf("%s.headers_env: %q is not a header name", key, h)
		}
		if !envNameRE.MatchString(v) {
			return s, fmt.Errorf("%s.headers_env.%s: %q is not a variable name", key, h, v)
		}
	}
	seen := map[string]bool{}
	for i, t := range s.Tools {
		if t.Name == "" || seen[t.Name] {
			return s, fmt.Errorf("%s.tools[%d]: each tool needs a name of its own", key, i)
		}
		seen[t.Name] = true
	}
	if _, err := risk.CompileMCPRules(key+".policy", s.Policy); err != nil {
		return s, err
	}
	err := errors.Join(
		limit(key+".timeout", &s.Timeout, DefaultTimeout),
		limit(key+".start_timeout", &s.StartTimeout, DefaultStartTimeout),
		limit(key+".max_output_bytes", &s.MaxOutputBytes, DefaultMaxOutputBytes),
	)
	return s, err
}

func limit[T int | time.Duration](key string, v *T, def T) error {
	switch {
	case *v == 0:
		*v = def
	case *v < 0:
		return fmt.Errorf("%s: %v must be positive", key, *v)
	}
	return nil
}

// Environ is the whole environment of a stdio server: PATH, HOME and the
// locale from the bot's, the variables named in env_pass, then env.
// Nothing else of the bot's environment (its API keys, tokens, DSNs)
// reaches the server.
func (s ServerConfig) Environ(lookup func(string) (string, bool), environ []string) []string {
	vals := map[string]string{}
	var order []string
	put := func(k, v string) {
		if _, ok := vals[k]; !ok {
			order = append(order, k)
		}
		vals[k] = v
	}
	base := []string{"PATH", "HOME", "LANG", "LANGUAGE"}
	for _, kv := range environ {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "LC_") && envNameRE.MatchString(k) {
			base = append(base, k)
		}
	}
	for _, k := range append(base, s.EnvPass...) {
		if v, ok := lookup(k); ok {
			put(k, v)
		}
	}
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		put(k, s.Env[k])
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+vals[k])
	}
	return out
}
