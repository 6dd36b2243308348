// Package httptool is the http_request tool. Its transport is fenced on its
// own, whatever the assessor decided (SPEC §8): a dialer guard refuses
// link-local and metadata addresses always, and private and loopback
// addresses unless the operator allows them by host or CIDR; the check runs
// at connect time, so redirects and DNS rebinding are covered. No proxy is
// used, and redirects, time and body sizes are capped. Its preview shows the
// addresses a URL's host resolves to and whether the guard allows each.
package httptool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"time"

	"github.com/countersign/countersign/tools"
)

// Name is the tool name the LLM calls.
const Name = "http_request"

// Defaults for the Config fields left zero.
const (
	DefaultTimeout          = 30 * time.Second
	DefaultMaxRedirects     = 5
	DefaultMaxResponseBytes = 1 << 20
	DefaultMaxBodyText      = 32 << 10
	DefaultMaxRequestBytes  = 1 << 20
	DefaultUserAgent        = "countersign"
)

// Config is the http_request section of the configuration.
type Config struct {
	// AllowHosts are host names whose private or loopback addresses may be
	// reached (e.g. an internal status page). Metadata and link-local
	// addresses stay refused.
	AllowHosts []string `yaml:"allow_hosts"`
	// AllowCIDRs are private or loopback ranges (or single addresses) that
	// may be reached. Metadata and link-local addresses stay refused.
	AllowCIDRs []string `yaml:"allow_cidrs"`
	// MaxRedirects caps the redirects followed. Default 5; negative: none.
	MaxRedirects int `yaml:"max_redirects"`
	// Timeout caps the whole request, redirects and body included.
	// Default 30s.
	Timeout time.Duration `yaml:"timeout"`
	// MaxResponseBytes caps how much of a response body is read.
	// Default 1 MiB.
	MaxResponseBytes int64 `yaml:"max_response_bytes"`
	// MaxBodyText caps the body text put in the result. Default 32 KiB.
	MaxBodyText int `yaml:"max_body_text"`
	// MaxRequestBytes caps the request body. Default 1 MiB.
	MaxRequestBytes int `yaml:"max_request_bytes"`
	// UserAgent is sent unless the call sets its own. Default "countersign".
	UserAgent string `yaml:"user_agent"`
}

// Tool is the http_request tool. It is safe for concurrent use.
type Tool struct {
	cfg       Config
	guard     *guard
	dialer    *dialer
	transport *http.Transport
}

var (
	_ tools.Tool      = (*Tool)(nil)
	_ tools.Previewer = (*Tool)(nil)
)

// WithDefaults returns c with its zero fields filled in, as New applies
// them; a negative limit is an error naming its key.
func (c Config) WithDefaults() (Config, error) {
	if c.MaxRedirects == 0 {
		c.MaxRedirects = DefaultMaxRedirects // negative stays: none
	}
	if c.UserAgent == "" {
		c.UserAgent = DefaultUserAgent
	}
	err := errors.Join(
		tools.Limit("timeout", &c.Timeout, DefaultTimeout),
		tools.Limit("max_response_bytes", &c.MaxResponseBytes, DefaultMaxResponseBytes),
		tools.Limit("max_body_text", &c.MaxBodyText, DefaultMaxBodyText),
		tools.Limit("max_request_bytes", &c.MaxRequestBytes, DefaultMaxRequestBytes),
	)
	return c, err
}

// New checks cfg, fills in defaults and builds the guarded transport.
// Errors name the key in the tool's section; the caller names the section.
func New(cfg Config) (*Tool, error) {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	g, err := newGuard(cfg.AllowHosts, cfg.AllowCIDRs)
	if err != nil {
		return nil, err
	}
	d := &dialer{guard: g, timeout: min(cfg.Timeout, 10*time.Second), lookup: net.DefaultResolver.LookupNetIP}
	transport := &http.Transport{
		Proxy:                  nil, // never a proxy, whatever HTTP_PROXY says
		DialContext:            d.DialContext,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		MaxIdleConns:           16,
		IdleConnTimeout:        30 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &Tool{cfg: cfg, guard: g, dialer: d, transport: transport}, nil
}

// Close drops idle connections.
func (t *Tool) Close() error {
	t.transport.CloseIdleConnections()
	return nil
}

// args are the arguments of http_request (SPEC §1).
type args struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Body    *string           `json:"body"`
}

// request is a checked call.
type request struct {
	method  string
	url     *url.URL
	headers http.Header
	body    *string
}

// check decodes and validates the arguments. A non-nil result is the
// refusal to return instead of sending anything.
func (t *Tool) check(raw json.RawMessage) (request, *tools.Result) {
	var a args
	if err := tools.DecodeArgs(raw, &a); err != nil {
		return request{}, invalid(err)
	}
	switch {
	case a.Method == "":
		return request{}, invalid(tools.MissingArg("method"))
	case !isToken(a.Method):
		return request{}, invalid(&tools.ArgError{Arg: "method", Problem: fmt.Sprintf("%q is not an HTTP method", a.Method)})
	case a.URL == "":
		return request{}, invalid(tools.MissingArg("url"))
	case a.Body != nil && len(*a.Body) > t.cfg.MaxRequestBytes:
		return request{}, invalid(&tools.ArgError{Arg: "body", Problem: fmt.Sprintf("is %s bytes; the limit is %s",
			tools.FormatCount(int64(len(*a.Body))), tools.FormatCount(int64(t.cfg.MaxRequestBytes)))})
	}
	u, err := url.Parse(a.URL)
	if err != nil {
		return request{}, invalid(&tools.ArgError{Arg: "url", Problem: "is not a URL: " + withoutURL(err)})
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		r := tools.Denied(fmt.Errorf("only http and https URLs are allowed, not %q", u.Scheme+":"))
		return request{}, &r
	}
	if u.Hostname() == "" {
		return request{}, invalid(&tools.ArgError{Arg: "url", Problem: "has no host"})
	}
	h := http.Header{}
	for k, v := range a.Headers {
		switch {
		case !isToken(k):
			return request{}, invalid(&tools.ArgError{Arg: "headers", Problem: fmt.Sprintf("%q is not a header name", k)})
		case strings.ContainsAny(v, "\r\n\x00"):
			return request{}, invalid(&tools.ArgError{Arg: "headers", Problem: fmt.Sprintf("the value of %s holds a line break or NUL", k)})
		case strings.EqualFold(k, "Host"):
			return request{}, invalid(&tools.ArgError{Arg: "headers", Problem: "Host is taken from the URL"})
		}
		h.Set(k, v)
	}
	if h.Get("User-Agent") == "" {
		h.Set("User-Agent", t.cfg.UserAgent)
	}
	return request{method: strings.ToUpper(a.Method), url: u, headers: h, body: a.Body}, nil
}

// withoutURL is the text of an error from parsing or using a URL, without
// the URL itself, which may hold a password in its userinfo.
func withoutURL(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// invalid is the refusal of arguments that name what is wrong with them.
func invalid(err error) *tools.Result {
	r := tools.InvalidArgs(err)
	return &r
}

// isToken reports whether s is an RFC 9110 token (method or header name).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// Run implements tools.Tool.
func (t *Tool) Run(ctx context.Context, raw json.RawMessage, _ tools.RunOptions) tools.Result {
	start := time.Now()
	res := t.run(ctx, raw)
	res.DurationMS = time.Since(start).Milliseconds()
	return res
}

// errTooManyRedirects stops a redirect chain at the cap.
var errTooManyRedirects = errors.New("too many redirects")

func (t *Tool) run(ctx context.Context, raw json.RawMessage) tools.Result {
	rq, bad := t.check(raw)
	if bad != nil {
		return *bad
	}
	ctx, cancel := context.WithTimeout(ctx, t.cfg.Timeout)
	defer cancel()
	var seen chain
	seen.host(rq.url.Hostname())
	ctx = httptrace.WithClientTrace(ctx, seen.trace())
	var body io.Reader
	if rq.body != nil {
		body = strings.NewReader(*rq.body)
	}
	req, err := http.NewRequestWithContext(ctx, rq.method, rq.url.String(), body)
	if err != nil {
		return *invalid(&tools.ArgError{Arg: "url", Problem: withoutURL(err)})
	}
	req.Header = rq.headers

	hops := 0
	var last *url.URL
	client := &http.Client{
		Transport: t.transport,
		CheckRedirect: func(r *http.Request, via []*http.Request) error {
			if t.cfg.MaxRedirects < 0 {
				return http.ErrUseLastResponse // the 3xx itself is the answer
			}
			hops = len(via)
			last = r.URL
			seen.host(r.URL.Hostname())
			if len(via) > t.cfg.MaxRedirects {
				return errTooManyRedirects
			}
			return nil
		},
	}
	resp, err := client.Do(req)
	if err != nil {
		return t.failure(ctx, rq, err, hops, last)
	}
	defer resp.Body.Close()
	res := t.response(rq, resp, hops)
	res.Outside = seen.outside(t.guard)
	return res
}

// failure words a request that got no response.
func (t *Tool) failure(ctx context.Context, rq request, err error, hops int, last *url.URL) tools.Result {
	var re *RefusedError
	var dnsErr *net.DNSError
	var opErr *net.OpError
	switch {
	case errors.Is(err, errTooManyRedirects):
		return tools.Failed(fmt.Errorf("stopped after %d redirects (the limit); the last one pointed to %s", t.cfg.MaxRedirects, shownURL(last)))
	case errors.As(err, &re) && hops == 0:
		return tools.Denied(re)
	case errors.As(err, &re):
		return tools.Failed(fmt.Errorf("the request was sent, but its redirect to %s was not followed: %w", shownURL(last), re))
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return tools.Failed(fmt.Errorf("the request timed out after %v", t.cfg.Timeout))
	case ctx.Err() != nil:
		return tools.Failed(errors.New("the request was stopped before it finished"))
	case hops == 0 && errors.As(err, &dnsErr):
		return tools.NotStarted(fmt.Errorf("the host %s could not be resolved", rq.url.Hostname()))
	case hops == 0 && errors.As(err, &opErr) && opErr.Op == "dial":
		return tools.NotStarted(fmt.Errorf("could not connect to %s: %w", rq.url.Host, opErr.Err))
	}
	return tools.Failed(fmt.Errorf("the request failed: %w", err))
}

// shownHeaders are the response headers a result carries.
var shownHeaders = []string{
	"Content-Type", "Content-Length", "Content-Encoding", "Location", "Date", "Server",
	"Last-Modified", "ETag", "Cache-Control", "Retry-After", "WWW-Authenticate", "X-Request-Id",
}

func (t *Tool) response(rq request, resp *http.Response, hops int) tools.Result {
	res := tools.Result{Status: tools.StatusOK, Executed: true, HTTPStatus: resp.StatusCode, Headers: map[string]string{}}
	for _, h := range shownHeaders {
		if v := resp.Header.Get(h); v != "" {
			res.Headers[h] = v
		}
	}
	info := map[string]any{"status": resp.Status}
	if hops > 0 {
		info["redirects"] = hops
		info["final_url"] = shownURL(resp.Request.URL)
	}
	var notes []string
	body := tools.NewCappedBuffer(int(t.cfg.MaxResponseBytes))
	n, err := io.Copy(body, io.LimitReader(resp.Body, t.cfg.MaxResponseBytes+1))
	if err != nil {
		notes = append(notes, "reading the body failed after "+tools.FormatCount(n)+" bytes: "+err.Error())
	}
	read := body.Bytes()
	cut := n > t.cfg.MaxResponseBytes
	if cut {
		res.Truncated = true
		notes = append(notes, fmt.Sprintf("the body is longer than %s bytes; reading stopped there", tools.FormatCount(t.cfg.MaxResponseBytes)))
	}
	if len(read) > 0 {
		if isBinary(resp.Header.Get("Content-Type"), read, cut) {
			info["body_bytes"] = len(read)
			info["body_type"] = http.DetectContentType(read)
			info["first_bytes"] = tools.HexPrefix(read, 32)
			notes = append(notes, fmt.Sprintf("the body is binary (%s, %s bytes read); it is not shown as text",
				http.DetectContentType(read), tools.FormatCount(int64(len(read)))))
		} else {
			text, capped := tools.CapText(string(read), t.cfg.MaxBodyText)
			res.Body = text
			if capped {
				res.Truncated = true
				if cut {
					notes = append(notes, fmt.Sprintf("only the first %s bytes of the body are shown", tools.FormatCount(int64(len(text)))))
				} else {
					notes = append(notes, tools.TruncationNote("the body", int64(len(read)), len(text)))
				}
			}
		}
	}
	res.Data, _ = json.Marshal(info)
	res.Note = tools.JoinNotes(notes...)
	return res
}

// isBinary judges a body by its declared type, then by its bytes.
func isBinary(contentType string, p []byte, cut bool) bool {
	if mt, _, err := mime.ParseMediaType(contentType); err == nil {
		switch {
		case strings.HasPrefix(mt, "text/"), strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"),
			mt == "application/json", mt == "application/xml", mt == "application/javascript",
			mt == "application/x-www-form-urlencoded", mt == "application/yaml", mt == "application/x-ndjson":
			return bytes.IndexByte(p, 0) >= 0 // declared text: only NUL bytes make it binary
		}
	}
	return tools.LooksBinary(p[:min(len(p), 8<<10)], cut || len(p) > 8<<10)
}

// Config returns the configuration the tool runs with, defaults filled in.
func (t *Tool) Config() Config { return t.cfg }
