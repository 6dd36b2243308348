// Package gateway is Countersign for every agent (issue 26): an MCP
// server over streamable HTTP at /mcp and an approval API at /v1, both
// for named agents (Claude Code, a CI job, any MCP client) whose calls go
// through the same gate as the bot's own model (agent/call.go): the same
// policy, cards, quorum, audit and fences. A call that needs a person
// waits for the card's decision in the agent's channel.
package gateway

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/risk"
)

// Config is the gateway section of the configuration:
//
//	gateway:
//	  listen: 127.0.0.1:8790
//	  rate: 60                 # requests a minute per agent
//	  agents:
//	    ci-bot:
//	      token_env: CI_BOT_TOKEN
//	      channel: slack:C0123
//	      tools: [execute_command]
//	      mode: guarded
type Config struct {
	// Listen is the address to serve on; empty means no gateway.
	Listen string `yaml:"listen"`
	// TLSCert and TLSKey serve HTTPS; required on a non-loopback address
	// unless AllowPlaintext.
	TLSCert string `yaml:"tls_cert"`
	TLSKey  string `yaml:"tls_key"`
	// AllowPlaintext lets the gateway serve plain HTTP on a non-loopback
	// address (behind a proxy that terminates TLS).
	AllowPlaintext bool `yaml:"allow_plaintext"`
	// Rate is how many requests a minute each agent may make (default
	// DefaultRate); more get 429.
	Rate int `yaml:"rate"`
	// Agents are the agents that may call, by name.
	Agents map[string]AgentConfig `yaml:"agents"`
}

// AgentConfig is one agent: gateway.agents.<name>.
type AgentConfig struct {
	// TokenEnv names the environment variable that holds the agent's
	// bearer token. The token is read at start and stored nowhere else.
	TokenEnv string `yaml:"token_env"`
	// Channel is where its cards go: terminal, slack:<channel id>,
	// discord:<channel id>.
	Channel string `yaml:"channel"`
	// Tools are the tools it may call; empty means every configured one.
	Tools []string `yaml:"tools"`
	// Mode is strict, guarded (the default) or smart: what its risk_level
	// may do (guarded: raise the risk, never lower it).
	Mode risk.Mode `yaml:"mode"`
}

// DefaultRate is gateway.rate's default: requests a minute per agent.
const DefaultRate = 60

// maxBody is the largest request body the gateway reads: 1 MiB.
const maxBody = 1 << 20

// agentOf is one agent as the gateway serves it.
type agentOf struct {
	name  string
	token []byte
	conv  approval.Conversation
	tools map[string]bool // nil: every tool
	mode  risk.Mode
	rate  *bucket
}

// Enabled reports whether the gateway is to start.
func (c Config) Enabled() bool { return c.Listen != "" }

// Validate checks the section as far as it can without the environment:
// the address and its TLS, and each agent's channel and mode.
func (c Config) Validate() error {
	if !c.Enabled() {
		return nil
	}
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return fmt.Errorf("gateway.listen: %q is not host:port (%v); for example 127.0.0.1:8790", c.Listen, err)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("gateway.tls_cert and gateway.tls_key: set both or neither")
	}
	if c.TLSCert == "" && !c.AllowPlaintext && !loopback(host) {
		return fmt.Errorf("gateway.listen: %s is not a loopback address, and bearer tokens would cross the network in plain text; "+
			"set gateway.tls_cert and gateway.tls_key, or gateway.allow_plaintext: true behind a proxy that terminates TLS", c.Listen)
	}
	if c.Rate < 0 {
		return fmt.Errorf("gateway.rate: %d is negative; give requests a minute per agent (default %d)", c.Rate, DefaultRate)
	}
	if len(c.Agents) == 0 {
		return errors.New("gateway.agents: no agent is configured, so nobody could call; add one with a token_env and a channel")
	}
	for name, a := range c.Agents {
		key := "gateway.agents." + name
		if name == "" || strings.ContainsAny(name, " :\t\n") {
			return fmt.Errorf("%s: an agent's name has no spaces or colons", key)
		}
		if a.TokenEnv == "" {
			return fmt.Errorf("%s.token_env: name the environment variable that holds its bearer token", key)
		}
		if _, err := parseChannel(a.Channel); err != nil {
			return fmt.Errorf("%s.channel: %w", key, err)
		}
		if a.Mode != "" && a.Mode != risk.Strict && a.Mode != risk.Guarded && a.Mode != risk.Smart {
			return fmt.Errorf("%s.mode: %q is not one of strict, guarded, smart", key, string(a.Mode))
		}
	}
	return nil
}

// loopback reports whether host names only this machine.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// parseChannel reads an agent's channel: terminal, slack:<id>,
// discord:<id>.
func parseChannel(s string) (approval.Conversation, error) {
	if s == "terminal" {
		return approval.Conversation{Platform: "terminal", Channel: "terminal", Thread: "main"}, nil
	}
	platform, id, ok := strings.Cut(s, ":")
	if !ok || id == "" || (platform != "slack" && platform != "discord") {
		return approval.Conversation{}, fmt.Errorf("%q is not terminal, slack:<channel id> or discord:<channel id>", s)
	}
	return approval.Conversation{Platform: platform, Channel: id}, nil
}

// agents resolves the configured agents: each token from its variable,
// each tool named a configured tool. tools are the configured tools' names.
func (c Config) agents(getenv func(string) string, tools []string, serves func(platform string) bool) (map[string]*agentOf, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	rate := c.Rate
	if rate == 0 {
		rate = DefaultRate
	}
	out := map[string]*agentOf{}
	seen := map[string]string{}
	for name, a := range c.Agents {
		key := "gateway.agents." + name
		tok := getenv(a.TokenEnv)
		if len(tok) < 16 {
			return nil, fmt.Errorf("%s.token_env: $%s is unset or shorter than 16 characters; set it to a long random token (openssl rand -hex 32)", key, a.TokenEnv)
		}
		if other, dup := seen[tok]; dup {
			return nil, fmt.Errorf("%s.token_env: agents %s and %s have the same token; give each its own", key, other, name)
		}
		seen[tok] = name
		conv, _ := parseChannel(a.Channel)
		if serves != nil && !serves(conv.Platform) {
			return nil, fmt.Errorf("%s.channel: %s is not served by this process, so its cards could not be shown; turn that platform on or pick another channel", key, a.Channel)
		}
		ag := &agentOf{name: name, token: []byte(tok), conv: conv, mode: a.Mode, rate: newBucket(rate)}
		if ag.mode == "" {
			ag.mode = risk.Guarded
		}
		if len(a.Tools) > 0 {
			ag.tools = map[string]bool{}
			for _, t := range a.Tools {
				if !slices.Contains(tools, t) {
					return nil, fmt.Errorf("%s.tools: %q is not a configured tool; the tools are %s", key, t, strings.Join(tools, ", "))
				}
				ag.tools[t] = true
			}
		}
		out[name] = ag
	}
	return out, nil
}

// may reports whether the agent may call tool.
func (a *agentOf) may(tool string) bool { return a.tools == nil || a.tools[tool] }
