package mcptool

import (
	"regexp"
	"strings"
	"testing"
)

// apiName is what the chat-completions API accepts as a function name.
var apiName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestFunctionName(t *testing.T) {
	none := func(string) bool { return false }
	long := strings.Repeat("x", 80)
	cases := []struct {
		server, tool string
		taken        func(string) bool
		want         string
	}{
		{"fs", "read_file", none, "fs__read_file"},
		{"everything", "get-env", none, "everything__get-env"},
		{"k8s", "pods.list/all ns", none, "k8s__pods_list_all_ns"},
		{"k8s", "ünïcode", none, "k8s___n_code"},
		{"fs", "read_file", func(n string) bool { return n == "fs__read_file" }, "fs__read_file_a4a2b1c1"},
		{"s", long, none, "s__" + strings.Repeat("x", 52) + "_"},
	}
	for _, c := range cases {
		got := functionName(c.server, c.tool, c.taken)
		if !apiName.MatchString(got) {
			t.Errorf("functionName(%q, %q) = %q: not a name the API accepts", c.server, c.tool, got)
		}
		if c.want != "" && !strings.HasPrefix(got, c.want[:len(c.want)-min(len(c.want), 8)]) {
			t.Errorf("functionName(%q, %q) = %q, want %q", c.server, c.tool, got, c.want)
		}
	}
	// Deterministic, and two long names that share their first 55 bytes differ.
	a, b := functionName("s", long+"a", none), functionName("s", long+"b", none)
	if a == b || a != functionName("s", long+"a", none) || len(a) != 64 {
		t.Errorf("long names: %q and %q", a, b)
	}
	// Sanitising collides: the second is hashed.
	first := functionName("k8s", "a.b", none)
	second := functionName("k8s", "a_b", func(n string) bool { return n == first })
	if first != "k8s__a_b" || second == first || !apiName.MatchString(second) {
		t.Errorf("collision: %q then %q", first, second)
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name string
		s    ServerConfig
		want string
	}{
		{"fs", ServerConfig{}, "mcp.servers.fs: set command"},
		{"fs", ServerConfig{Command: []string{"x"}, URL: "http://h/"}, "not both"},
		{"fs", ServerConfig{URL: "ftp://h/"}, "mcp.servers.fs.url"},
		{"fs", ServerConfig{URL: "https://u:p@h/"}, "headers_env"},
		{"fs", ServerConfig{URL: "https://h/", EnvPass: []string{"X"}}, "env, env_pass, dir, write and unfenced are for a command"},
		{"fs", ServerConfig{Command: []string{"x"}, HeadersEnv: map[string]string{"A": "B"}}, "headers are for a url"},
		{"fs", ServerConfig{Command: []string{"x"}, EnvPass: []string{"A-B"}}, "mcp.servers.fs.env_pass"},
		{"fs", ServerConfig{Command: []string{"x"}, Policy: map[string]string{"w*": "yes"}}, `mcp.servers.fs.policy["w*"]`},
		{"fs", ServerConfig{Command: []string{"x"}, Timeout: -1}, "mcp.servers.fs.timeout"},
		{"a b", ServerConfig{Command: []string{"x"}}, "server name"},
	}
	for _, c := range cases {
		_, err := Config{Servers: map[string]ServerConfig{c.name: c.s}}.WithDefaults()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.s, err, c.want)
		}
	}
}

func TestEnviron(t *testing.T) {
	bot := map[string]string{"PATH": "/bin", "HOME": "/root", "LC_ALL": "C", "OPENAI_API_KEY": "sk", "GH": "g"}
	s := ServerConfig{EnvPass: []string{"GH", "MISSING"}, Env: map[string]string{"B": "2", "A": "1", "HOME": "/srv"}}
	got := strings.Join(s.Environ(func(k string) (string, bool) { v, ok := bot[k]; return v, ok }, []string{"LC_ALL=C", "OPENAI_API_KEY=sk"}), " ")
	if got != "PATH=/bin HOME=/srv LC_ALL=C GH=g A=1 B=2" {
		t.Errorf("Environ = %q", got)
	}
}
