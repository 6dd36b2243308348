package slack

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/countersign/countersign/adapters"
)

// Config is the `slack:` section of the configuration. Secrets never live in
// it: it names the environment variables that hold them.
type Config struct {
	// Mode is "socket" (Socket Mode: the bot dials out, no public URL) or
	// "http" (Events API and interactivity requests to Listen). Empty:
	// socket when the app token is set, http otherwise.
	Mode string `yaml:"mode"`
	// Listen is the address the HTTP mode listener binds, ":3000" by default.
	Listen string `yaml:"listen"`
	// BotTokenEnv names the variable holding the bot token (xoxb-),
	// SLACK_BOT_TOKEN by default.
	BotTokenEnv string `yaml:"bot_token_env"`
	// AppTokenEnv names the variable holding the app-level token (xapp-)
	// that Socket Mode needs, SLACK_APP_TOKEN by default.
	AppTokenEnv string `yaml:"app_token_env"`
	// SigningSecretEnv names the variable holding the signing secret that
	// HTTP mode verifies requests with, SLACK_SIGNING_SECRET by default.
	SigningSecretEnv string `yaml:"signing_secret_env"`
	// APIURL is the Web API's base URL; empty means $SLACK_API_URL, and
	// then Slack's own. Socket Mode's websocket URL comes from
	// apps.connections.open on this base.
	APIURL string `yaml:"api_url"`
	// GroupCacheTTL is how long a user group's members are trusted before
	// they are asked for again, 1m by default.
	GroupCacheTTL time.Duration `yaml:"group_cache_ttl"`
	// Streaming, when false, keeps a turn's answer and its tool calls as
	// separate messages (the "▸" lines) instead of one streamed message
	// with tasks (chat.startStream). Unset means true; a workspace that
	// refuses streaming gets messages either way.
	Streaming *bool `yaml:"streaming"`
	// Status, when false, shows no thread status while a turn works
	// (assistant.threads.setStatus). Unset means true.
	Status *bool `yaml:"status"`
	// Transport carries the adapter's Web API requests; nil means
	// http.DefaultTransport. cmd sets it (traces of each call); it is not
	// a key.
	Transport http.RoundTripper `yaml:"-"`
	// ByEmail says an approver is whoever is on call (oncall:…), so the
	// bot token must hold ScopeEmail. cmd sets it from the approver
	// lists; it is not a key.
	ByEmail bool `yaml:"-"`
}

// on reads an optional switch: unset means on.
func on(b *bool) bool { return b == nil || *b }

// Default values.
const (
	DefaultListen        = ":3000"
	DefaultBotTokenEnv   = "SLACK_BOT_TOKEN"
	DefaultAppTokenEnv   = "SLACK_APP_TOKEN"
	DefaultSigningEnv    = "SLACK_SIGNING_SECRET"
	DefaultAPIURL        = "https://slack.com/api/"
	DefaultGroupCacheTTL = time.Minute
	// APIURLEnv overrides the Web API's base URL when api_url is not set.
	APIURLEnv = "SLACK_API_URL"
)

// WithDefaults returns c with every empty key set to its default. Mode and
// APIURL depend on the environment and are settled by New.
func (c Config) WithDefaults() Config {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.BotTokenEnv == "" {
		c.BotTokenEnv = DefaultBotTokenEnv
	}
	if c.AppTokenEnv == "" {
		c.AppTokenEnv = DefaultAppTokenEnv
	}
	if c.SigningSecretEnv == "" {
		c.SigningSecretEnv = DefaultSigningEnv
	}
	if c.GroupCacheTTL == 0 {
		c.GroupCacheTTL = DefaultGroupCacheTTL
	}
	return c
}

// Validate reports the first key that holds a value the adapter cannot use,
// by name.
func (c Config) Validate() error {
	switch c.Mode {
	case "", "socket", "http":
	default:
		return fmt.Errorf("slack.mode: %q is not a mode; use socket or http", c.Mode)
	}
	if c.Listen != "" {
		if _, _, err := net.SplitHostPort(c.Listen); err != nil {
			return fmt.Errorf("slack.listen: %q is not host:port (e.g. \":3000\"): %w", c.Listen, err)
		}
	}
	for key, v := range map[string]string{"slack.bot_token_env": c.BotTokenEnv, "slack.app_token_env": c.AppTokenEnv, "slack.signing_secret_env": c.SigningSecretEnv} {
		if v != "" && !envName(v) {
			return fmt.Errorf("%s: %q is not an environment variable name; the key names the variable that holds the secret, never the secret", key, v)
		}
	}
	if c.APIURL != "" {
		if err := checkAPIURL(c.APIURL); err != nil {
			return fmt.Errorf("slack.api_url: %w", err)
		}
	}
	if c.GroupCacheTTL < 0 {
		return fmt.Errorf("slack.group_cache_ttl: %s is negative", c.GroupCacheTTL)
	}
	return nil
}

func checkAPIURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %w", s, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL such as https://slack.com/api/", s)
	}
	return nil
}

// apiBase returns s as slack-go wants a base: ending in a slash.
func apiBase(s string) string {
	if !strings.HasSuffix(s, "/") {
		s += "/"
	}
	return s
}

func envName(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// Extras are everything Slack offers: buttons (clicks arrive over Socket
// Mode or the interactivity endpoint), forms (modals), the thread status
// and the streamed answer unless switched off (slack.status,
// slack.streaming), the App Home, the count of sends given up, the
// connection's state, and people found by e-mail (on-call approvers).
func (a *Adapter) Extras() adapters.Extras {
	x := adapters.Extras{Buttons: true, Forms: true, Home: a, Undelivered: a, Link: a, Permalink: a, ByEmail: a}
	if on(a.cfg.Status) {
		x.Status = a
	}
	if on(a.cfg.Streaming) {
		x.Stream = a
	}
	return x
}
