package oncall

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"
)

// ErrNotConfigured is the answer for an entry whose service has no token.
var ErrNotConfigured = errors.New("the service is not configured")

// Answer is who is on call in one schedule, as last read.
type Answer struct {
	// Emails are the addresses of the people on call, lower case.
	Emails []string
	// Err is why the service could not say (down, too slow, the token
	// refused): the entry stands for nobody until it can.
	Err error
	// At is when the answer was read.
	At time.Time
}

// Source is one service as the resolver asks it.
type Source struct {
	Client Client
	// TTL is how long an answer is trusted; Timeout bounds a request
	// (at most TTL).
	TTL, Timeout time.Duration
	// Now is the clock TTL is counted on; nil is time.Now.
	Now func() time.Time
}

// Resolver answers who is on call for each entry, one request per schedule
// at a time however many cards and clicks ask, each answer kept for its
// service's TTL in a bounded cache. Safe for concurrent use.
type Resolver struct {
	sources map[string]Source
	cache   *lru.Cache[Entry, Answer]
	flight  singleflight.Group
}

// maxSchedules bounds the cache: more schedules than any configuration
// names.
const maxSchedules = 512

// NewResolver asks the sources by service name (PagerDuty, Opsgenie).
func NewResolver(sources map[string]Source) *Resolver {
	for name, src := range sources {
		if src.Now == nil {
			src.Now = time.Now
			sources[name] = src
		}
	}
	cache, _ := lru.New[Entry, Answer](maxSchedules) // only a size ≤ 0 fails
	return &Resolver{sources: sources, cache: cache}
}

// Build makes the resolver of the sections given by service name, each
// with the token its token_env names (getenv); a service without a token
// is left out, and its entries are answered ErrNotConfigured.
func Build(sections map[string]Config, getenv func(string) string) *Resolver {
	sources := map[string]Source{}
	for _, service := range Services {
		c := sections[service].WithDefaults(service)
		token := getenv(c.TokenEnv)
		if token == "" {
			continue
		}
		hc := &http.Client{Timeout: c.Timeout}
		var client Client = &PagerDutyClient{BaseURL: c.BaseURL, Token: token, HTTP: hc}
		if service == Opsgenie {
			client = &OpsgenieClient{BaseURL: c.BaseURL, Key: token, HTTP: hc}
		}
		sources[service] = Source{Client: client, TTL: c.CacheTTL, Timeout: c.Timeout, Now: c.Now}
	}
	return NewResolver(sources)
}

// Configured reports whether entries of service are answered.
func (r *Resolver) Configured(service string) bool {
	if r == nil {
		return false
	}
	_, ok := r.sources[service]
	return ok
}

// OnCall returns who is on call in e's schedule: the answer in the cache
// while it is younger than the service's TTL, else a fresh one, read at
// most once at a time per schedule and within the service's Timeout (or
// ctx's deadline, if sooner). A failure is an answer too, kept as long:
// a service that is down holds no decision longer than one Timeout per
// TTL. A set older than the TTL is never served: whoever went off call
// is no longer on it.
func (r *Resolver) OnCall(ctx context.Context, e Entry) Answer {
	if r == nil {
		return Answer{Err: ErrNotConfigured}
	}
	src, ok := r.sources[e.Service]
	if !ok {
		return Answer{Err: fmt.Errorf("%s: %w", e.Title(), ErrNotConfigured)}
	}
	if a, ok := r.cache.Get(e); ok && src.Now().Sub(a.At) < src.TTL {
		return a
	}
	ch := r.flight.DoChan(e.String(), func() (any, error) {
		// The request is the schedule's, not this caller's: a caller that
		// gives up leaves it to finish for the others.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(src.Timeout, src.TTL))
		defer cancel()
		emails, err := src.Client.OnCall(rctx, e.Schedule)
		a := Answer{Emails: emails, Err: err, At: src.Now()}
		r.cache.Add(e, a)
		return a, nil
	})
	select {
	case res := <-ch:
		return res.Val.(Answer)
	case <-ctx.Done():
		return Answer{Err: fmt.Errorf("%s: on-calls of schedule %s: %w", e.Title(), e.Schedule, ctx.Err()), At: src.Now()}
	}
}
