package httptool

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/countersign/countersign/tools"
)

// This file is how the tool describes itself: to the model (Name,
// Description, Schema, at the end) and, for each call, to people (the
// tools.Describer methods).

var _ tools.Describer = (*Tool)(nil)

// bodyShown is how much of a request body an operation text shows.
const bodyShown = 500

// DirectCommand is !http, which reaches http_request without a model.
var DirectCommand = tools.Direct{
	Verb:  "!http",
	Usage: "!http <METHOD> <url>",
	Help:  "make an HTTP request",
	Parse: func(rest string) (map[string]any, string) {
		method, u, _ := strings.Cut(rest, " ")
		u = strings.TrimSpace(u)
		if method == "" || u == "" || strings.ContainsAny(u, " \t") {
			return nil, "Usage: !http <METHOD> <url>, e.g. !http GET https://example.com/health"
		}
		return map[string]any{"method": strings.ToUpper(method), "url": u}, ""
	},
}

// Title implements tools.Describer.
func (t *Tool) Title() string { return "Send this HTTP request?" }

// Operation implements tools.Describer: the request line, the headers one
// a line, and the body (its first 500 bytes, and how long it is). The
// values of credential headers, a URL's password and secret-looking query
// values are masked: a card, the audit log and the log must never carry
// them, while what runs is the stored call.
func (t *Tool) Operation(raw json.RawMessage) tools.Operation {
	var a struct {
		Method  string         `json:"method"`
		URL     string         `json:"url"`
		Headers map[string]any `json:"headers"`
		Body    *string        `json:"body"`
	}
	if json.Unmarshal(raw, &a) != nil || a.URL == "" {
		return tools.Operation{Text: string(raw)}
	}
	u, masked := maskURL(a.URL)
	var b strings.Builder
	b.WriteString(strings.ToUpper(a.Method) + " " + u)
	names := make([]string, 0, len(a.Headers))
	for k := range a.Headers {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		v := fmt.Sprint(a.Headers[k])
		if secretHeader(k) {
			v, masked = tools.Mask, true
		}
		fmt.Fprintf(&b, "\n%s: %s", k, v)
	}
	b.WriteString(tools.ArgLines(raw, "method", "url", "headers", "body"))
	if a.Body != nil && *a.Body != "" {
		shown, cut := tools.CapText(*a.Body, bodyShown)
		b.WriteString("\n\n" + shown)
		if cut {
			// Never let a tail the approver cannot see pass for the whole.
			fmt.Fprintf(&b, "\n--- body cut: the first %d of %d bytes are shown ---", len(shown), len(*a.Body))
		}
	}
	return tools.Operation{Text: b.String(), Masked: masked}
}

// Direct implements tools.Describer.
func (t *Tool) Direct() tools.Direct { return DirectCommand }

// secretWords mark a header or query parameter whose value is a
// credential.
var secretWords = []string{"auth", "cookie", "token", "secret", "password", "passwd", "api-key", "apikey", "api_key", "session", "signature", "credential"}

// secretHeader reports whether a header carries a credential:
// Authorization, Proxy-Authorization, Cookie, X-Api-Key, X-Auth-Token, ….
func secretHeader(name string) bool {
	n := strings.ToLower(name)
	if n == "x-api-key" || n == "api-key" || n == "x-amz-security-token" {
		return true
	}
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// maskURL hides a URL's password and the values of secret-looking query
// parameters (token=, api_key=, sig=, …). A URL that does not parse is
// shown as it is: there is nothing to mask that a parser would find.
func maskURL(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil {
		return raw, false
	}
	masked := false
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxxx")
			masked = true
		}
	}
	if u.RawQuery != "" {
		q := strings.Split(u.RawQuery, "&")
		for i, kv := range q {
			k, _, found := strings.Cut(kv, "=")
			if found && (secretHeader(k) || strings.EqualFold(k, "sig") || strings.EqualFold(k, "key")) {
				q[i] = k + "=xxxxxx"
				masked = true
			}
		}
		u.RawQuery = strings.Join(q, "&")
	}
	if !masked {
		return raw, false
	}
	return strings.ReplaceAll(u.String(), "xxxxxx", tools.Mask), true
}

// shownURL is u as every text a person or the model reads shows it: its
// password and secret-looking query values masked (maskURL).
func shownURL(u *url.URL) string {
	s, _ := maskURL(u.String())
	return s
}

// Name implements tools.Tool.
func (t *Tool) Name() string { return Name }

// Description implements tools.Tool.
func (t *Tool) Description() string {
	return "Send an HTTP or HTTPS request and return the status, the main response headers and the body " +
		"as text (capped; binary bodies are summarised). Redirects are followed up to a limit. Cloud " +
		"metadata and link-local addresses are always refused, and private or loopback addresses unless " +
		"the operator allowed them. GET, HEAD and OPTIONS run at once; other methods wait for a person's approval."
}

// Schema implements tools.Tool.
func (t *Tool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"method":{"type":"string","description":"HTTP method, e.g. GET, HEAD, POST, PUT, DELETE."},` +
		`"url":{"type":"string","description":"Absolute http:// or https:// URL."},` +
		`"headers":{"type":"object","additionalProperties":{"type":"string"},"description":"Request headers."},` +
		`"body":{"type":"string","description":"Request body."}},` +
		`"required":["method","url"],"additionalProperties":false}`)
}
