package oncall_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/approval/oncall"
	"github.com/countersign/countersign/approval/oncall/oncalltest"
	"github.com/countersign/countersign/internal/testenv"
)

var (
	alice = oncalltest.Person{ID: "PALICE", Name: "Alice", Email: "Alice@Example.com"}
	bob   = oncalltest.Person{ID: "PBOB", Name: "Bob", Email: "bob@example.com"}
)

// clock is a clock a test moves.
type clock = testenv.Clock

func newClock() *clock { return testenv.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)) }

// TestClients: each service's client, against its fake, reads who is on
// call now (their e-mail, lower case), nobody when nobody is, sends the
// service's own Authorization header, and turns a refused token or an
// unknown schedule into an error that holds the service's message and
// never the token.
func TestClients(t *testing.T) {
	pd := oncalltest.NewPagerDuty(t, "pd-secret")
	og := oncalltest.NewOpsgenie(t, "og-secret")
	for _, f := range []interface {
		SetOnCall(string, ...oncalltest.Person)
	}{pd, og} {
		f.SetOnCall("P123", alice, bob)
		f.SetOnCall("PNOBODY")
	}
	hc := &http.Client{Timeout: 5 * time.Second}
	cases := []struct {
		name     string
		client   oncall.Client
		schedule string
		want     []string
		err      string
	}{
		{"pagerduty on call", &oncall.PagerDutyClient{BaseURL: pd.URL(), Token: "pd-secret", HTTP: hc}, "P123", []string{"alice@example.com", "bob@example.com"}, ""},
		{"pagerduty nobody", &oncall.PagerDutyClient{BaseURL: pd.URL(), Token: "pd-secret", HTTP: hc}, "PNOBODY", []string{}, ""},
		{"pagerduty bad token", &oncall.PagerDutyClient{BaseURL: pd.URL(), Token: "wrong-token", HTTP: hc}, "P123", nil, "HTTP 401: Unauthorized (code 2006)"},
		{"opsgenie on call", &oncall.OpsgenieClient{BaseURL: og.URL(), Key: "og-secret", HTTP: hc}, "P123", []string{"alice@example.com", "bob@example.com"}, ""},
		{"opsgenie nobody", &oncall.OpsgenieClient{BaseURL: og.URL(), Key: "og-secret", HTTP: hc}, "PNOBODY", []string{}, ""},
		{"opsgenie bad key", &oncall.OpsgenieClient{BaseURL: og.URL(), Key: "wrong-token", HTTP: hc}, "P123", nil, "HTTP 401: Key format is not valid!"},
		{"opsgenie unknown schedule", &oncall.OpsgenieClient{BaseURL: og.URL(), Key: "og-secret", HTTP: hc}, "PGONE", nil, "HTTP 404: Schedule with identifier [PGONE] not found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.client.OnCall(context.Background(), c.schedule)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want one holding %q", err, c.err)
				}
				if strings.Contains(err.Error(), "wrong-token") {
					t.Errorf("the error shows the token: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("on call = %q, want %q", got, c.want)
			}
		})
	}
	if a := pd.Auths(); len(a) == 0 || a[0] != "Token token=pd-secret" {
		t.Errorf("PagerDuty saw Authorization %q, want Token token=pd-secret", a)
	}
	if a := og.Auths(); len(a) == 0 || a[0] != "GenieKey og-secret" {
		t.Errorf("Opsgenie saw Authorization %q, want GenieKey og-secret", a)
	}
}

// TestPagerDutyPages: a schedule with more on-calls than one page holds is
// read to its last page.
func TestPagerDutyPages(t *testing.T) {
	pd := oncalltest.NewPagerDuty(t, "tok")
	var people []oncalltest.Person
	for i := range 230 {
		people = append(people, oncalltest.Person{ID: fmt.Sprintf("P%d", i), Email: fmt.Sprintf("p%d@example.com", i)})
	}
	pd.SetOnCall("PBIG", people...)
	got, err := (&oncall.PagerDutyClient{BaseURL: pd.URL(), Token: "tok", HTTP: http.DefaultClient}).OnCall(context.Background(), "PBIG")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 230 || pd.Requests() != 3 {
		t.Errorf("read %d people in %d requests, want 230 in 3", len(got), pd.Requests())
	}
}

// resolver is a resolver of one fake PagerDuty, on a clock the test moves.
func resolver(t *testing.T, ttl, timeout time.Duration) (*oncall.Resolver, *oncalltest.PagerDuty, *clock) {
	pd := oncalltest.NewPagerDuty(t, "tok")
	c := newClock()
	r := oncall.Build(map[string]oncall.Config{oncall.PagerDuty: {BaseURL: pd.URL(), CacheTTL: ttl, Timeout: timeout, Now: c.Now}},
		func(k string) string {
			if k == "PAGERDUTY_TOKEN" {
				return "tok"
			}
			return ""
		})
	return r, pd, c
}

var p123 = oncall.Entry{Service: oncall.PagerDuty, Schedule: "P123"}

// TestResolverCacheAge: an answer is kept for the cache's age, shared by
// every caller, and read again once that has passed: the one who went off
// call is gone, the one newly on call is there.
func TestResolverCacheAge(t *testing.T) {
	r, pd, c := resolver(t, time.Minute, time.Second)
	pd.SetOnCall("P123", alice)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if a := r.OnCall(context.Background(), p123); a.Err != nil || !slices.Equal(a.Emails, []string{"alice@example.com"}) {
				t.Errorf("answer %+v, want alice", a)
			}
		})
	}
	wg.Wait()
	if n := pd.Requests(); n != 1 {
		t.Errorf("20 callers made %d requests, want 1", n)
	}
	pd.SetOnCall("P123", bob)
	c.Advance(59 * time.Second)
	if a := r.OnCall(context.Background(), p123); !slices.Equal(a.Emails, []string{"alice@example.com"}) {
		t.Errorf("within the cache's age: %q, want the answer kept (alice)", a.Emails)
	}
	c.Advance(time.Second)
	if a := r.OnCall(context.Background(), p123); a.Err != nil || !slices.Equal(a.Emails, []string{"bob@example.com"}) {
		t.Errorf("after the cache's age: %+v, want bob alone", a)
	}
	if n := pd.Requests(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

// TestResolverServiceDown: a service that is down gives an answer with an
// error and nobody on call (the static approvers decide), kept for the
// cache's age so that it is not asked on every click; once it is back and
// the age has passed, it answers again.
func TestResolverServiceDown(t *testing.T) {
	r, pd, c := resolver(t, time.Minute, time.Second)
	pd.SetOnCall("P123", alice)
	if a := r.OnCall(context.Background(), p123); a.Err != nil {
		t.Fatal(a.Err)
	}
	pd.Down(true)
	c.Advance(time.Minute)
	a := r.OnCall(context.Background(), p123)
	if a.Err == nil || len(a.Emails) != 0 || !strings.Contains(a.Err.Error(), "HTTP 503") {
		t.Fatalf("down: %+v, want an HTTP 503 error and nobody (never the last set, served stale)", a)
	}
	before := pd.Requests()
	c.Advance(30 * time.Second)
	if a := r.OnCall(context.Background(), p123); a.Err == nil || pd.Requests() != before {
		t.Errorf("within the cache's age the failure is kept: %+v, %d requests (was %d)", a, pd.Requests(), before)
	}
	pd.Down(false)
	c.Advance(30 * time.Second)
	if a := r.OnCall(context.Background(), p123); a.Err != nil || !slices.Equal(a.Emails, []string{"alice@example.com"}) {
		t.Errorf("back up: %+v, want alice", a)
	}
}

// TestResolverTimeout: a service that does not answer holds the caller
// for its timeout, never longer, and the answer says it timed out; a
// caller whose own deadline is sooner is let go at its deadline.
func TestResolverTimeout(t *testing.T) {
	r, pd, _ := resolver(t, time.Minute, 300*time.Millisecond)
	pd.Hang(true)
	start := time.Now()
	a := r.OnCall(context.Background(), p123)
	took := time.Since(start)
	if a.Err == nil || len(a.Emails) != 0 {
		t.Fatalf("hanging service: %+v, want an error and nobody", a)
	}
	if took < 300*time.Millisecond || took > 5*time.Second {
		t.Errorf("the caller waited %s, want the timeout (300ms) and not much more", took)
	}

	r2, pd2, _ := resolver(t, time.Minute, time.Second)
	pd2.Hang(true)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start = time.Now()
	a = r2.OnCall(ctx, p123)
	if took := time.Since(start); took > 2*time.Second || !errors.Is(a.Err, context.DeadlineExceeded) {
		t.Errorf("caller's deadline 100ms: waited %s, err %v; want let go at its deadline", took, a.Err)
	}
}

// TestResolverNotConfigured: an entry of a service without a token is
// answered ErrNotConfigured, asking nobody.
func TestResolverNotConfigured(t *testing.T) {
	r, _, _ := resolver(t, time.Minute, time.Second)
	a := r.OnCall(context.Background(), oncall.Entry{Service: oncall.Opsgenie, Schedule: "S1"})
	if !errors.Is(a.Err, oncall.ErrNotConfigured) || r.Configured(oncall.Opsgenie) || !r.Configured(oncall.PagerDuty) {
		t.Errorf("opsgenie without a token: %+v", a)
	}
	var none *oncall.Resolver
	if a := none.OnCall(context.Background(), p123); !errors.Is(a.Err, oncall.ErrNotConfigured) {
		t.Errorf("no resolver: %+v", a)
	}
}

func TestParse(t *testing.T) {
	cases := []struct {
		in   string
		want oncall.Entry
		ok   bool
		err  string
	}{
		{"oncall:pagerduty:P123", oncall.Entry{Service: "pagerduty", Schedule: "P123"}, true, ""},
		{" oncall:opsgenie:5a1b-c2 ", oncall.Entry{Service: "opsgenie", Schedule: "5a1b-c2"}, true, ""},
		{"U0123", oncall.Entry{}, false, ""},
		{"group:oncall", oncall.Entry{}, false, ""},
		{"oncall:victorops:X", oncall.Entry{}, true, "the service must be one of pagerduty, opsgenie"},
		{"oncall:pagerduty", oncall.Entry{}, true, "names no schedule"},
		{"oncall:pagerduty:", oncall.Entry{}, true, "names no schedule"},
		{"oncall:pagerduty:a/b", oncall.Entry{}, true, "is not a schedule id"},
	}
	for _, c := range cases {
		got, ok, err := oncall.Parse(c.in)
		if ok != c.ok || got != c.want || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("Parse(%q) = %+v, %v, %v; want %+v, %v, %q", c.in, got, ok, err, c.want, c.ok, c.err)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		c    oncall.Config
		err  string
	}{
		{"defaults", oncall.Config{}, ""},
		{"set", oncall.Config{BaseURL: "http://127.0.0.1:8080", CacheTTL: 30 * time.Second, Timeout: 2 * time.Second}, ""},
		{"bad url", oncall.Config{BaseURL: "api.pagerduty.com"}, "pagerduty.base_url: \"api.pagerduty.com\" is not an http(s) URL"},
		{"short ttl", oncall.Config{CacheTTL: 10 * time.Millisecond}, "pagerduty.cache_ttl: 10ms is too short"},
		{"timeout over ttl", oncall.Config{CacheTTL: 2 * time.Second}, "pagerduty.timeout: 3s is longer than pagerduty.cache_ttl (2s)"},
		{"negative timeout", oncall.Config{Timeout: -time.Second}, "pagerduty.timeout: -1s is negative"},
	}
	for _, c := range cases {
		errs := c.c.Validate(oncall.PagerDuty)
		got := errors.Join(errs...)
		if (got == nil) != (c.err == "") || got != nil && !strings.Contains(got.Error(), c.err) {
			t.Errorf("%s: %v, want %q", c.name, got, c.err)
		}
	}
}
