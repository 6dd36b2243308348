package risk

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Config is the policy's section of the configuration file (top-level key
// "risk"). The zero value is the SPEC's default policy: mode smart, nothing
// pre-authorised, and the default sensitive paths. The SQL parser always
// assumes sqlrisk.DefaultSQLMode, the sql_mode the SQL tool pins in its DSN,
// so that the parser and the server read every statement alike.
//
//	risk:
//	  mode: smart                  # strict | guarded | smart
//	  sensitive_paths: ["*.secret", "deploy/keys/"]
//	  tools:
//	    execute_command:
//	      mode: guarded
//	      preauthorized:
//	        - "systemctl restart nginx"          # exact text
//	        - 're:kubectl rollout restart deployment/[a-z0-9-]+ -n staging'
//	    execute_sql:
//	      preauthorized: ["re:OPTIMIZE TABLE [a-z_]+"]
//	  channels:
//	    C0123PROD:
//	      mode: strict
//	      tools:
//	        execute_sql: {mode: guarded}
type Config struct {
	// Mode is the global mode; empty means smart.
	Mode Mode `yaml:"mode"`
	// Tools holds per-tool settings, keyed by tool name.
	Tools map[string]ToolConfig `yaml:"tools"`
	// Channels holds per-channel overrides, keyed by channel id.
	Channels map[string]ChannelConfig `yaml:"channels"`
	// SensitivePaths are extra patterns for risk/sensitive, added to its
	// defaults: "*.secret" matches a base name, "deploy/vault/" anything
	// inside such a directory, "app/*/token" the last segments of a path.
	// Case is ignored.
	SensitivePaths []string `yaml:"sensitive_paths"`
	// Taint, true by default, makes the assistant's low risk_level count
	// as absent for the rest of a turn once the turn has read an HTTP
	// response from a public host (Call.Outside): text from outside (a
	// web page, an issue comment) may carry instructions the model
	// follows, so what it rates low after reading it is judged without
	// its word. Off, the model's low is trusted in smart mode as before.
	Taint *bool `yaml:"taint"`
	// OwnFiles are the bot's own files: its configuration file, audit
	// file, log file and MCP server definitions, as absolute paths. They
	// are set by the program at start, never from the file: every tool
	// treats them as sensitive paths wherever a tool can reach them, so a
	// model cannot read or rewrite its own policy on its own low
	// risk_level (issue 25).
	OwnFiles []string `yaml:"-"`
	// ToolsRoot is the directory the command and file tools work in, set
	// with OwnFiles: an own file inside it is sensitive by its path
	// relative to the root too, as the file tool names it.
	ToolsRoot string `yaml:"-"`
}

// SensitivePatterns are the extra sensitive-path patterns of the policy:
// SensitivePaths and the bot's own files. The file tool is given the same
// list, so that a symbolic link cannot reach one of them under another
// name.
func (c Config) SensitivePatterns() []string {
	return append(c.SensitivePaths[:len(c.SensitivePaths):len(c.SensitivePaths)], ownPatterns(c.OwnFiles, c.ToolsRoot)...)
}

// ownPatterns turns the bot's own files into sensitive-path patterns: the
// absolute path (matched as the last segments of any path, so ../x and
// /proc/self/root/x spellings reach it too), and, for a file inside the
// tools root, its path relative to the root.
func ownPatterns(files []string, root string) []string {
	var out []string
	esc := strings.NewReplacer("*", `\*`, "?", `\?`, "[", `\[`, `\`, `\\`)
	for _, f := range files {
		if strings.TrimSpace(f) == "" {
			continue
		}
		clean := path.Clean(filepath.ToSlash(f))
		out = append(out, esc.Replace(clean))
		if root == "" {
			continue
		}
		r := path.Clean(filepath.ToSlash(root))
		if rel, ok := strings.CutPrefix(clean, strings.TrimSuffix(r, "/")+"/"); ok && rel != "" {
			out = append(out, esc.Replace(rel))
		}
	}
	return out
}

// ToolConfig is the global setting for one tool.
type ToolConfig struct {
	// Mode overrides the global mode for this tool; empty inherits it.
	Mode Mode `yaml:"mode"`
	// Preauthorized lists operations that run without a card (rule 2, which
	// never overrides rule 1: absurd calls are blocked first).
	//
	// The operation text an entry is compared with:
	//   - execute_command: the command line;
	//   - execute_sql: the SQL text;
	//   - http_request: the method in upper case, a space, and the URL
	//     ("GET https://status.example.com/health");
	//   - file_operations: the operation, a space, and the cleaned path
	//     ("delete tmp/cache", never "delete tmp/../.env");
	//   - any other tool: its arguments as compact JSON without risk_level,
	//     keys in the order the call gave them.
	//
	// Leading and trailing ASCII white space is ignored on both sides. An
	// exact entry must equal the whole text. An entry "re:EXPR" is a regular
	// expression (Go syntax) that must match the whole text (it is anchored
	// for you), and it carries extra conditions so that a pattern written
	// for one operation cannot carry another along:
	//   - execute_command: the command line must parse as one simple
	//     command whose words are all literal: no ; & && || | or newline, no
	//     redirection, no variable, command or process substitution, no glob,
	//     brace or ~ expansion, no assignment, no $'...', and no ".." path
	//     segment. So "re:ls( .*)?" accepts "ls -la /var/log" but never
	//     "ls; rm -rf data", "ls $(rm x)" or "cat logs/../.env".
	//   - execute_sql: one statement: no ";" except at the end, and no "/*"
	//     (which is also how executable comments start).
	//   - http_request: no user information in the URL ("https://a@b/").
	Preauthorized []string `yaml:"preauthorized"`
}

// ChannelConfig overrides modes in one channel.
type ChannelConfig struct {
	// Mode overrides the global and per-tool modes in this channel; empty
	// inherits them.
	Mode Mode `yaml:"mode"`
	// Tools overrides the mode of single tools in this channel.
	Tools map[string]ChannelToolConfig `yaml:"tools"`
}

// ChannelToolConfig is the mode of one tool in one channel.
type ChannelToolConfig struct {
	// Mode overrides the tool's mode in this channel; empty inherits it.
	Mode Mode `yaml:"mode"`
}

// validMode reports whether m is one of the three modes.
func validMode(m Mode) bool {
	return m == Strict || m == Guarded || m == Smart
}

// checkMode validates an optional mode at key.
func checkMode(key string, m Mode) error {
	if m == "" || validMode(m) {
		return nil
	}
	return fmt.Errorf("%s: mode %q is not one of strict, guarded, smart", key, string(m))
}

// toolNameRE is what a tool name in config may look like: the names an LLM
// function may have.
var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,128}$`)

// checkToolName validates a tool name used as a key.
func checkToolName(key, name string) error {
	if !toolNameRE.MatchString(name) {
		return fmt.Errorf("%s: %q is not a tool name (letters, digits, _ . : - only)", key, name)
	}
	return nil
}

// sortedKeys returns the keys of m in order, so that validation reports the
// same first error every time.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// preauthPrefix marks a pre-authorisation entry that is a regular expression.
const preauthPrefix = "re:"

// compilePreauth turns the entries of one tool into matchers.
func compilePreauth(key, tool string, entries []string) (*preauth, error) {
	pa := &preauth{tool: tool, exact: map[string]bool{}}
	for i, e := range entries {
		ekey := fmt.Sprintf("%s[%d]", key, i)
		if strings.TrimSpace(e) == "" {
			return nil, fmt.Errorf("%s: empty entry", ekey)
		}
		if strings.ContainsRune(e, 0) {
			return nil, fmt.Errorf("%s: entry contains a NUL byte", ekey)
		}
		if !strings.HasPrefix(e, preauthPrefix) {
			pa.exact[trimASCIISpace(e)] = true
			continue
		}
		expr := strings.TrimPrefix(e, preauthPrefix)
		if strings.TrimSpace(expr) == "" {
			return nil, fmt.Errorf("%s: empty regular expression after %q", ekey, preauthPrefix)
		}
		re, err := regexp.Compile(`\A(?:` + expr + `)\z`)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ekey, err)
		}
		pa.patterns = append(pa.patterns, preauthPattern{text: e, re: re})
	}
	return pa, nil
}
