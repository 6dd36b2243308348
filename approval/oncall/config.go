package oncall

import (
	"cmp"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Config is one service's section of the configuration (pagerduty:,
// opsgenie:). A service is configured when the variable TokenEnv names
// holds a token; an entry of a service that is not is a config error.
type Config struct {
	// TokenEnv names the environment variable holding the API token
	// (default PAGERDUTY_TOKEN, OPSGENIE_API_KEY).
	TokenEnv string `yaml:"token_env"`
	// BaseURL is the API's address (default https://api.pagerduty.com,
	// https://api.opsgenie.com; https://api.eu.opsgenie.com for
	// Opsgenie's EU instance).
	BaseURL string `yaml:"base_url"`
	// CacheTTL is how long a schedule's on-call set is trusted before it
	// is read again (default 1m): someone who goes off call can still
	// decide for at most this long.
	CacheTTL time.Duration `yaml:"cache_ttl"`
	// Timeout bounds one request to the service (default 3s, at most
	// CacheTTL): past it the card's static approvers decide.
	Timeout time.Duration `yaml:"timeout"`
	// Now is the clock CacheTTL is counted on; nil is time.Now. Set by
	// tests, never by the file.
	Now func() time.Time `yaml:"-"`
}

// The defaults of a service's section.
const (
	DefaultCacheTTL = time.Minute
	DefaultTimeout  = 3 * time.Second
)

var defaults = map[string]Config{
	PagerDuty: {TokenEnv: "PAGERDUTY_TOKEN", BaseURL: "https://api.pagerduty.com"},
	Opsgenie:  {TokenEnv: "OPSGENIE_API_KEY", BaseURL: "https://api.opsgenie.com"},
}

// WithDefaults fills in what c leaves out for service.
func (c Config) WithDefaults(service string) Config {
	d := defaults[service]
	c.TokenEnv = cmp.Or(strings.TrimSpace(c.TokenEnv), d.TokenEnv)
	c.BaseURL = strings.TrimRight(cmp.Or(strings.TrimSpace(c.BaseURL), d.BaseURL), "/")
	c.CacheTTL = cmp.Or(c.CacheTTL, DefaultCacheTTL)
	c.Timeout = cmp.Or(c.Timeout, DefaultTimeout)
	return c
}

// Validate reports every bad value of service's section, each naming its
// key ("pagerduty.timeout: …").
func (c Config) Validate(service string) []error {
	var errs []error
	if c.BaseURL != "" {
		u, err := url.Parse(c.BaseURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			errs = append(errs, fmt.Errorf("%s.base_url: %q is not an http(s) URL; leave it out for %s", service, c.BaseURL, defaults[service].BaseURL))
		}
	}
	if c.CacheTTL < 0 || c.CacheTTL > 0 && c.CacheTTL < time.Second {
		errs = append(errs, fmt.Errorf("%s.cache_ttl: %s is too short: the service would be asked on every click; use at least 1s, or leave it out for %s", service, c.CacheTTL, DefaultCacheTTL))
	}
	if c.Timeout < 0 {
		errs = append(errs, fmt.Errorf("%s.timeout: %s is negative; leave it out for %s", service, c.Timeout, DefaultTimeout))
	}
	if w := c.WithDefaults(service); c.CacheTTL >= 0 && c.Timeout >= 0 && w.Timeout > w.CacheTTL {
		errs = append(errs, fmt.Errorf("%s.timeout: %s is longer than %s.cache_ttl (%s): a slow service would hold a decision longer than the cache's age; lower it", service, w.Timeout, service, w.CacheTTL))
	}
	return errs
}
