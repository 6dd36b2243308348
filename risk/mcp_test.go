package risk

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMCPOrder(t *testing.T) {
	f, tr := false, true
	p, err := New(Config{
		Tools:    map[string]ToolConfig{"ops__restart": {Preauthorized: []string{`{"service":"web"}`}}},
		Channels: map[string]ChannelConfig{"CPROD": {Mode: Strict}},
	})
	if err != nil {
		t.Fatal(err)
	}
	rules, err := CompileMCPRules("mcp.servers.ops.policy", map[string]string{"*": "confirm", "drop_*": "block", "drop_cache": "auto", "d*": "confirm"})
	if err != nil {
		t.Fatal(err)
	}
	tool := func(name string, trusted, ro bool, destr *bool) MCPTool {
		m := MCPTool{Server: "ops", Tool: name, Trusted: trusted, ReadOnlyHint: ro, DestructiveHint: destr}
		return m
	}
	withRule := func(m MCPTool) MCPTool { m.Setting, m.From = rules.For(m.Tool); return m }
	p = p.WithMCP(map[string]MCPTool{
		"fs__read":        tool("read", true, true, nil),
		"ev__echo":        tool("echo", false, true, &f),
		"fs__write":       tool("write", true, false, nil),
		"fs__mkdir":       tool("mkdir", true, false, &f),
		"fs__rm":          tool("rm", true, false, &tr),
		"ops__drop_db":    withRule(tool("drop_db", true, true, nil)),
		"ops__drop_cache": withRule(tool("drop_cache", false, false, nil)),
		"ops__status":     withRule(tool("status", true, true, nil)),
		"ops__restart":    tool("restart", false, false, nil),
	})
	cases := []struct {
		name, fn, args, channel string
		mode                    Mode
		want                    Decision
		rule                    Rule
		reason                  string
	}{
		{"trusted read-only runs", "fs__read", `{}`, "", "", Auto, RuleWhitelist, "readOnlyHint: true"},
		{"trusted read-only, the model says high", "fs__read", `{"risk_level":"high"}`, "", "", Confirm, RuleLLM, ""},
		{"trusted read-only in a strict channel", "fs__read", `{}`, "CPROD", "", Confirm, RuleMode, ""},
		{"untrusted read-only waits", "ev__echo", `{}`, "", "", Confirm, RuleDefault, "hint, not a proof"},
		{"untrusted read-only on the model's low", "ev__echo", `{"risk_level":"low"}`, "", "", Auto, RuleLLM, ""},
		{"untrusted read-only on low in guarded", "ev__echo", `{"risk_level":"low"}`, "", Guarded, Confirm, RuleDefault, ""},
		{"no destructiveHint is destructive", "fs__write", `{"risk_level":"low"}`, "", "", Confirm, RuleDanger, "no destructiveHint"},
		{"destructiveHint true", "fs__rm", `{"risk_level":"low"}`, "", "", Confirm, RuleDanger, "destructiveHint: true"},
		{"not destructive on low", "fs__mkdir", `{"risk_level":"low"}`, "", "", Auto, RuleLLM, ""},
		{"not destructive without low", "fs__mkdir", `{}`, "", "", Confirm, RuleDefault, "destructiveHint: false"},
		{"operator glob blocks a trusted read", "ops__drop_db", `{"risk_level":"low"}`, "", "", Block, RuleOperator, `policy["drop_*"]: block`},
		{"operator exact name beats the glob", "ops__drop_cache", `{}`, "", "", Auto, RulePreauthorized, `policy["drop_cache"]: auto`},
		{"operator server-wide confirm beats trust", "ops__status", `{"risk_level":"low"}`, "", "", Confirm, RuleOperator, `policy["*"]: confirm`},
		{"operator auto in a strict channel", "ops__drop_cache", `{}`, "CPROD", "", Auto, RulePreauthorized, ""},
		{"pre-authorised call", "ops__restart", `{"service":"web"}`, "", "", Auto, RulePreauthorized, ""},
		{"another call of it", "ops__restart", `{"service":"db"}`, "", "", Confirm, RuleDanger, ""},
		{"an unknown function", "nope__x", `{"risk_level":"low"}`, "", Guarded, Confirm, RuleDefault, ""},
	}
	for _, c := range cases {
		v := p.Assess(Call{Tool: c.fn, Args: json.RawMessage(c.args), Channel: c.channel, Mode: c.mode})
		if v.Decision != c.want || v.Rule != c.rule {
			t.Errorf("%s: %s %s by %s (%v), want %s by %s", c.name, c.fn, v.Decision, v.Rule, v.Reasons, c.want, c.rule)
		}
		if c.reason != "" && !strings.Contains(strings.Join(v.Reasons, " | "), c.reason) {
			t.Errorf("%s: reasons %q lack %q", c.name, v.Reasons, c.reason)
		}
	}
}

func TestMCPRulesInvalid(t *testing.T) {
	for _, c := range []struct {
		m    map[string]string
		want string
	}{
		{map[string]string{"x": "allow"}, `"allow" is not one of auto, confirm, block`},
		{map[string]string{"[x": "block"}, "not a valid glob"},
		{map[string]string{" ": "block"}, "empty"},
	} {
		_, err := CompileMCPRules("mcp.servers.s.policy", c.m)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "mcp.servers.s.policy") {
			t.Errorf("%v: error %v, want one naming the key and %q", c.m, err, c.want)
		}
	}
}
