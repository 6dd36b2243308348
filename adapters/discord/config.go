package discord

import (
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Config is the discord: section of the configuration.
type Config struct {
	// TokenEnv names the environment variable that holds the bot token
	// (the bare token; a "Bot " prefix is accepted). Default DISCORD_BOT_TOKEN.
	TokenEnv string `yaml:"token_env"`
	// APIURL is the base URL of a Discord-compatible server, in place of
	// https://discord.com (DISCORD_API_URL overrides it). A trailing /api
	// or /api/vN is accepted.
	APIURL string `yaml:"api_url"`
	// Guilds are the guild (server) ids where the slash commands are
	// registered; empty registers them globally (Discord takes up to an
	// hour to show global commands, guild commands show at once).
	Guilds []string `yaml:"guilds"`
	// MessageContent asks for the privileged Message Content intent, so
	// that later messages in a conversation's thread need no mention.
	// Without it the bot reads mentions, direct messages and slash commands.
	MessageContent bool `yaml:"message_content"`
	// Interactions is how clicks and slash commands arrive: "gateway"
	// (the default; nothing to expose) or "http" (Discord posts them to
	// Listen, so that they load-balance across replicas).
	Interactions string `yaml:"interactions"`
	// Listen is the address the interactions endpoint listens on
	// (interactions: http), e.g. ":8080"; the path is /interactions.
	Listen string `yaml:"listen"`
	// PublicKeyEnv names the environment variable that holds the
	// application's Ed25519 public key, in hex, as the developer portal
	// shows it (interactions: http). Default DISCORD_PUBLIC_KEY.
	PublicKeyEnv string `yaml:"public_key_env"`
	// CommandName is the slash command's name. Default countersign.
	CommandName string `yaml:"command_name"`
	// MaxBodyBytes caps an interaction request's body. Default 1 MiB.
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// AckTimeout bounds the first response to an interaction. Default 2s,
	// inside Discord's 3.
	AckTimeout time.Duration `yaml:"ack_timeout"`

	// tokenLifetime is how long an interaction token is used for edits
	// before the bot's own message edit takes over; tests shorten it.
	tokenLifetime time.Duration
	// Transport carries the adapter's REST requests; nil means
	// http.DefaultTransport. cmd sets it (traces of each call); it is not
	// a key.
	Transport http.RoundTripper `yaml:"-"`
}

// Defaults.
const (
	DefaultTokenEnv     = "DISCORD_BOT_TOKEN"
	DefaultPublicKeyEnv = "DISCORD_PUBLIC_KEY"
	DefaultAPIURL       = "https://discord.com"
	// APIURLEnv overrides Config.APIURL.
	APIURLEnv = "DISCORD_API_URL"
	// InteractionsPath is where HTTP interactions are served.
	InteractionsPath = "/interactions"
	// tokenTTL is how long Discord keeps an interaction token (15
	// minutes), less a margin for a slow edit.
	tokenTTL = 15*time.Minute - 30*time.Second
)

// WithDefaults fills the unset fields.
func (c Config) WithDefaults() Config {
	if c.TokenEnv == "" {
		c.TokenEnv = DefaultTokenEnv
	}
	if c.PublicKeyEnv == "" {
		c.PublicKeyEnv = DefaultPublicKeyEnv
	}
	if c.Interactions == "" {
		c.Interactions = "gateway"
	}
	if c.CommandName == "" {
		c.CommandName = "countersign"
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = 1 << 20
	}
	if c.AckTimeout == 0 {
		c.AckTimeout = 2 * time.Second
	}
	if c.tokenLifetime == 0 {
		c.tokenLifetime = tokenTTL
	}
	return c
}

var (
	snowflake   = regexp.MustCompile(`^[0-9]{1,20}$`)
	commandName = regexp.MustCompile(`^[-_a-z0-9]{1,32}$`)
)

// Validate reports a bad setting, naming its key.
func (c Config) Validate() error {
	switch c.Interactions {
	case "", "gateway":
	case "http":
		if c.Listen == "" {
			return fmt.Errorf("discord.listen: interactions: http needs an address to listen on, e.g. \":8080\"")
		}
		if _, _, err := net.SplitHostPort(c.Listen); err != nil {
			return fmt.Errorf("discord.listen: %q is not host:port: %w", c.Listen, err)
		}
	default:
		return fmt.Errorf("discord.interactions: %q is not one of gateway, http", c.Interactions)
	}
	if c.APIURL != "" {
		if _, err := parseAPIURL(c.APIURL); err != nil {
			return fmt.Errorf("discord.api_url: %w", err)
		}
	}
	for _, g := range c.Guilds {
		if !snowflake.MatchString(g) {
			return fmt.Errorf("discord.guilds: %q is not a guild id (a number: right-click the server with developer mode on, Copy Server ID)", g)
		}
	}
	if c.CommandName != "" && !commandName.MatchString(c.CommandName) {
		return fmt.Errorf("discord.command_name: %q is not a slash command name (lower case letters, digits, - and _, up to 32)", c.CommandName)
	}
	if c.MaxBodyBytes < 0 {
		return fmt.Errorf("discord.max_body_bytes: %d is negative", c.MaxBodyBytes)
	}
	if c.AckTimeout < 0 || c.AckTimeout >= 3*time.Second {
		return fmt.Errorf("discord.ack_timeout: %s is not between 0 and Discord's 3s", c.AckTimeout)
	}
	return nil
}

// parseAPIURL reads a base URL, dropping a trailing /api or /api/vN.
func parseAPIURL(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL: %w", s, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http(s) URL such as https://discord.com", s)
	}
	p := strings.TrimRight(u.Path, "/")
	p = regexp.MustCompile(`/api(/v[0-9]+)?$`).ReplaceAllString(p, "")
	u.Path = p
	u.RawQuery, u.Fragment = "", ""
	return u, nil
}

// token reads the bot token from the environment; "Bot " is added when
// missing.
func token(raw string) string {
	t := strings.TrimSpace(raw)
	if t == "" {
		return ""
	}
	if strings.HasPrefix(t, "Bot ") {
		return t
	}
	return "Bot " + t
}

// publicKey reads a hex Ed25519 public key.
func publicKey(env, raw string) (ed25519.PublicKey, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, fmt.Errorf("discord.public_key_env: %s is empty: interactions: http needs the application's public key (developer portal, General Information, Public Key)", env)
	}
	b, err := hex.DecodeString(raw)
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("discord.public_key_env: %s does not hold a 64-digit hex public key (developer portal, General Information, Public Key)", env)
	}
	return ed25519.PublicKey(b), nil
}
