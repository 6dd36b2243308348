package llm

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Error is a failed model call, classed. A permanent error will fail the
// same way until someone changes the configuration or the account, so it
// is not retried and is said once, with the fix; a transient one (a rate
// limit, a server error, a broken connection, a model too slow) was
// retried within llm.total_timeout and may pass later.
//
// Reason is a plain sentence safe to show in a chat: it names no secret
// (the API key never, a URL without its password). Err holds the detail,
// for the log.
type Error struct {
	permanent bool
	Reason    string
	Err       error
}

func (e *Error) Error() string { return e.Reason + ": " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// Permanent reports whether the call will fail the same way until the
// configuration changes.
func (e *Error) Permanent() bool { return e.permanent }

// Fix is the plain sentence to tell people: what happened and, for a
// permanent error, what to change.
func (e *Error) Fix() string { return e.Reason }

// Permanent reports whether err is a model error that retrying will not
// cure (bad URL, 401, 403, 404, unknown model, ...).
func Permanent(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.permanent
}

// Fix returns the plain sentence for a model error ("the model server
// answered 401 Unauthorized: ..."), or "" when err is not one.
func Fix(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// classify wraps the last error of a model call in an *Error that says
// what happened plainly, and whether retrying can help.
func (c *Client) classify(err error) *Error {
	if e := (*Error)(nil); errors.As(err, &e) {
		return e
	}
	perm := func(format string, args ...any) *Error {
		return &Error{permanent: true, Reason: fmt.Sprintf(format, args...), Err: err}
	}
	trans := func(format string, args ...any) *Error {
		return &Error{Reason: fmt.Sprintf(format, args...), Err: err}
	}
	if errors.Is(err, errBrokeOff) {
		return trans("the model's answer broke off after its first words were shown; it was not asked again, so that they are not followed by a second answer")
	}
	server := c.serverName()
	code := StatusCode(err)
	msg := strings.ToLower(apiMessage(err))
	switch {
	case code == http.StatusUnauthorized:
		return perm("the model server answered 401 Unauthorized: the API key is wrong or missing; set llm.api_key or %s", EnvAPIKey)
	case code == http.StatusForbidden:
		return perm("the model server answered 403 Forbidden: the API key may not use model %s or this endpoint; check the key's permissions, or llm.model", c.cfg.Model)
	case code == http.StatusNotFound && strings.Contains(msg, "model"),
		code == http.StatusBadRequest && strings.Contains(msg, "model") && (strings.Contains(msg, "not found") || strings.Contains(msg, "does not exist") || strings.Contains(msg, "unknown")):
		return perm("the model server does not know model %q; set llm.model (or %s) to a model it serves", c.cfg.Model, EnvModel)
	case code == http.StatusNotFound:
		return perm("the model server answered 404 Not Found at %s: the URL is wrong; llm.base_url (or %s) must be the API's root, where /chat/completions lives (e.g. http://localhost:11434/v1)", server, EnvBaseURL)
	case code == http.StatusTooManyRequests && strings.Contains(msg, "quota"):
		return perm("the model server answered 429: the account behind the API key is out of quota; add credit or use another key (llm.api_key or %s)", EnvAPIKey)
	case code == http.StatusTooManyRequests:
		return trans("the model server is rate limiting us (429)")
	case code == http.StatusRequestTimeout || code >= 500:
		return trans("the model server failed (HTTP %d)", code)
	case code >= 400:
		return perm("the model server refused the request (HTTP %d); the details are in the log", code)
	}
	var ue *url.Error
	if errors.As(err, &ue) && strings.Contains(ue.Err.Error(), "unsupported protocol scheme") {
		return perm("llm.base_url %s has no http:// or https:// scheme; write it in full, e.g. http://localhost:11434/v1", server)
	}
	var dns *net.DNSError
	if errors.As(err, &dns) && dns.IsNotFound {
		return perm("the model server's host %s does not exist (DNS); check llm.base_url (or %s)", dns.Name, EnvBaseURL)
	}
	var cert *x509.UnknownAuthorityError
	var host x509.HostnameError
	var inv x509.CertificateInvalidError
	if errors.As(err, &cert) || errors.As(err, &host) || errors.As(err, &inv) {
		return perm("the TLS certificate of %s is not trusted; fix the server's certificate or llm.base_url", server)
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) || errors.Is(err, errNoChoices) {
		return perm("the server at %s did not answer as an OpenAI-compatible API; llm.base_url (or %s) must be the API's root, e.g. https://api.openai.com/v1 or http://localhost:11434/v1", server, EnvBaseURL)
	}
	switch {
	case errors.Is(err, errBudget):
		return trans("the model did not answer within %s (llm.total_timeout); it may be overloaded or hung", c.cfg.TotalTimeout)
	case errors.Is(err, context.DeadlineExceeded):
		return trans("the model did not answer within %s (llm.timeout)", c.cfg.Timeout)
	case errors.Is(err, syscall.ECONNREFUSED):
		return trans("nothing answers at %s (connection refused); is the model server running?", server)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.As(err, &ue):
		return trans("the connection to the model server at %s broke", server)
	}
	return trans("the model call failed")
}

// errBudget ends a call that used up llm.total_timeout.
var errBudget = errors.New("the total time for the model call is up")

// errBrokeOff ends a streamed call that failed after words of its
// answer were shown: it is not retried.
var errBrokeOff = errors.New("the streamed answer broke off")

// errNoChoices is a 200 answer without a message.
var errNoChoices = errors.New("chat completion: the response has no choices")

// apiMessage is the message of the server's error body, when it sent one.
func apiMessage(err error) string {
	var ae *openai.APIError
	if errors.As(err, &ae) {
		if s, ok := ae.Code.(string); ok {
			return s + " " + ae.Message
		}
		return ae.Message
	}
	var re *openai.RequestError
	if errors.As(err, &re) {
		return string(re.Body)
	}
	return ""
}

// serverName is the configured base URL without any password, for
// sentences.
func (c *Client) serverName() string {
	raw := c.cfg.BaseURL
	if raw == "" {
		return "https://api.openai.com/v1"
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "(the configured llm.base_url)"
	}
	return u.Redacted()
}

// budgetLeft is how long the call may still take.
func budgetLeft(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		return time.Until(d)
	}
	return time.Duration(1<<63 - 1)
}
