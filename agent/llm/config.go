// Package llm is the agent's chat model client: it implements agent.Model
// on top of github.com/sashabaranov/go-openai, so OpenAI, Azure OpenAI,
// Ollama, vLLM and any other server that speaks the OpenAI chat completions
// API work. It owns the SDK: nothing else in Countersign imports go-openai.
// It retries rate limits, server errors and broken connections with
// exponential backoff and jitter, honouring Retry-After, and gives every
// attempt a time limit.
package llm

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/tools"
)

// API types.
const (
	// APIOpenAI is OpenAI itself and every OpenAI-compatible server
	// (Ollama, vLLM, LiteLLM, llama.cpp, ...): a base URL and, where the
	// server wants one, a key sent as a bearer token.
	APIOpenAI = "openai"
	// APIAzure is Azure OpenAI with an api-key header; the model name is
	// mapped to a deployment name.
	APIAzure = "azure"
	// APIAzureAD is Azure OpenAI with an Entra ID (AAD) bearer token.
	APIAzureAD = "azure_ad"
)

// Defaults.
const (
	DefaultModel = "gpt-4o-mini"
	// DefaultBaseURL is OpenAI's, used when llm.base_url is empty.
	DefaultBaseURL = "https://api.openai.com/v1"
	DefaultTimeout = 20 * time.Second
	// DefaultTotalTimeout bounds a model call across all its attempts and
	// the waits between them: a hung model is given up on well before
	// minutes pass, and the person is told.
	DefaultTotalTimeout = 45 * time.Second
	DefaultMaxAttempts  = 4
	DefaultBackoff      = 500 * time.Millisecond
	DefaultMaxBackoff   = 20 * time.Second
	// DefaultMaxRetryAfter is the longest Retry-After the client waits
	// for; a server asking for longer ends the retries.
	DefaultMaxRetryAfter = 60 * time.Second
)

// Config is the model client's section of the configuration (the
// integrator puts it under "llm:"). Empty fields are filled from the
// environment by FromEnv.
//
//	llm:
//	  base_url: http://localhost:11434/v1   # Ollama; empty means api.openai.com
//	  model: llama3.1
//	  api_key: ""                           # or OPENAI_API_KEY; optional for local servers
//	  organization: ""                      # or OPENAI_ORG_ID
//	  api_type: openai                      # openai | azure | azure_ad
//	  api_version: 2024-10-21               # Azure only, required there
//	  deployments: {gpt-4o: prod-gpt4o}     # Azure only: model → deployment
//	  timeout: 20s                          # per attempt
//	  total_timeout: 45s                    # per call, all attempts and waits
//	  max_attempts: 4
//	  backoff: 500ms
//	  max_backoff: 20s
//	  max_retry_after: 60s
//	  budget: {per_turn: 0, per_conversation: 0, per_channel_per_day: 0}  # tokens; 0 is no limit
type Config struct {
	BaseURL      string `yaml:"base_url"`
	Model        string `yaml:"model"`
	APIKey       string `yaml:"api_key"`
	Organization string `yaml:"organization"`

	APIType     string            `yaml:"api_type"`
	APIVersion  string            `yaml:"api_version"`
	Deployments map[string]string `yaml:"deployments"`

	// Timeout limits each attempt (default 20s).
	Timeout time.Duration `yaml:"timeout"`
	// TotalTimeout limits a whole call: every attempt and every wait
	// between them (default 45s).
	TotalTimeout time.Duration `yaml:"total_timeout"`
	// MaxAttempts counts the first try (default 4; 1 means no retry).
	MaxAttempts int `yaml:"max_attempts"`
	// Backoff is the first wait between attempts; it doubles each time,
	// up to MaxBackoff, with jitter (defaults 500ms and 20s).
	Backoff    time.Duration `yaml:"backoff"`
	MaxBackoff time.Duration `yaml:"max_backoff"`
	// MaxRetryAfter caps how long a Retry-After is honoured (default 60s);
	// a longer one ends the retries with the error.
	MaxRetryAfter time.Duration `yaml:"max_retry_after"`
	// Budget limits the tokens the model may spend (agent.Budget, which
	// the agent enforces; the client only reports each call's usage).
	Budget agent.Budget `yaml:"budget"`
}

// The environment variables FromEnv reads.
const (
	EnvAPIKey     = "OPENAI_API_KEY"
	EnvBaseURL    = "OPENAI_BASE_URL"
	EnvModel      = "OPENAI_MODEL"
	EnvOrg        = "OPENAI_ORG_ID"
	EnvAPIVersion = "OPENAI_API_VERSION"
)

// FromEnv returns c with its empty connection fields taken from the
// environment: OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL, OPENAI_ORG_ID
// and OPENAI_API_VERSION. Values in the configuration file win. getenv is
// os.Getenv in production.
func (c Config) FromEnv(getenv func(string) string) Config {
	fill := func(dst *string, env string) {
		if *dst == "" {
			*dst = strings.TrimSpace(getenv(env))
		}
	}
	fill(&c.APIKey, EnvAPIKey)
	fill(&c.BaseURL, EnvBaseURL)
	fill(&c.Model, EnvModel)
	fill(&c.Organization, EnvOrg)
	fill(&c.APIVersion, EnvAPIVersion)
	return c
}

// Configured reports whether a model is configured at all: an API key or a
// base URL (a local server needs no key). Without one, Countersign runs
// with direct commands only.
func (c Config) Configured() bool {
	return strings.TrimSpace(c.APIKey) != "" || strings.TrimSpace(c.BaseURL) != ""
}

// WithDefaults returns c with its zero fields filled and the rest checked,
// as New applies them; errors name the key under llm.
func (c Config) WithDefaults() (Config, error) {
	c.APIType = strings.ToLower(strings.TrimSpace(c.APIType))
	if c.APIType == "" {
		c.APIType = APIOpenAI
	}
	switch c.APIType {
	case APIOpenAI:
		if c.Model == "" {
			if c.BaseURL != "" {
				return c, fmt.Errorf("llm.model: required with a custom base_url (%s)", c.BaseURL)
			}
			c.Model = DefaultModel
		}
	case APIAzure, APIAzureAD:
		if c.BaseURL == "" {
			return c, fmt.Errorf("llm.base_url: required for api_type %s (https://RESOURCE.openai.azure.com)", c.APIType)
		}
		if c.APIVersion == "" {
			return c, fmt.Errorf("llm.api_version: required for api_type %s (e.g. 2024-10-21)", c.APIType)
		}
		if c.Model == "" {
			return c, fmt.Errorf("llm.model: required for api_type %s", c.APIType)
		}
	default:
		return c, fmt.Errorf("llm.api_type: %q is not one of openai, azure, azure_ad", c.APIType)
	}
	if err := checkBaseURL(c.BaseURL); err != nil {
		return c, err
	}
	err := errors.Join(
		tools.Limit("llm.timeout", &c.Timeout, DefaultTimeout),
		tools.Limit("llm.total_timeout", &c.TotalTimeout, DefaultTotalTimeout),
		tools.Limit("llm.max_attempts", &c.MaxAttempts, DefaultMaxAttempts),
		tools.Limit("llm.backoff", &c.Backoff, DefaultBackoff),
		tools.Limit("llm.max_backoff", &c.MaxBackoff, DefaultMaxBackoff),
		tools.Limit("llm.max_retry_after", &c.MaxRetryAfter, DefaultMaxRetryAfter),
	)
	if err != nil {
		return c, err
	}
	if c.MaxBackoff < c.Backoff {
		c.MaxBackoff = c.Backoff
	}
	return c, nil
}

// checkBaseURL rejects a base URL the client could never reach, at load
// time rather than on every message: one without an http:// or https://
// scheme, or without a host. The error never repeats a password.
func checkBaseURL(raw string) error {
	if raw == "" {
		return nil
	}
	shown, fix := raw, "http://"+raw
	if strings.Contains(raw, "@") {
		shown, fix = "(a URL with credentials)", "http://HOST:PORT/v1"
	}
	if !strings.Contains(raw, "://") {
		return fmt.Errorf("llm.base_url: %q has no scheme; use %s", shown, fix)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("llm.base_url: %q is not a URL; write it in full, e.g. http://localhost:11434/v1", shown)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("llm.base_url: %q is not an http:// or https:// URL; e.g. http://localhost:11434/v1", shown)
	case u.Host == "":
		return fmt.Errorf("llm.base_url: %q has no host; e.g. http://localhost:11434/v1", shown)
	}
	return nil
}
