package discord

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/countersign/countersign/adapters"
)

// rest calls Discord's HTTP API on the session's http.Client. It does not go
// through discordgo's request path, which sleeps through a 429 (or a spent
// rate-limit bucket) without honouring the context: every call here has a
// context, and a 429 comes back at once as an *adapters.RateLimitError for
// the bot to schedule.
type rest struct {
	client *http.Client
	base   string // discordgo.EndpointAPI without its trailing slash
	token  string // "Bot …"
	agent  string
}

// apiError is Discord's answer to a call that failed.
type apiError struct {
	Method, Path string
	Status       int
	Code         int     `json:"code"`
	Message      string  `json:"message"`
	RetryAfter   float64 `json:"retry_after"`
}

func (e *apiError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	return fmt.Sprintf("discord %s %s: HTTP %d, code %d: %s", e.Method, e.Path, e.Status, e.Code, msg)
}

// Discord's JSON error codes the adapter acts on
// (https://discord.com/developers/docs/topics/opcodes-and-status-codes#json).
const (
	codeUnknownChannel     = 10003
	codeUnknownMessage     = 10008
	codeUnknownWebhook     = 10015
	codeUnknownInteraction = 10062
	codeAlreadyAcked       = 40060
	codeThreadExists       = 160004
	codeInvalidForm        = 50035
)

func isCode(err error, code int) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.Code == code
}

func isStatus(err error, status int) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.Status == status
}

// do sends body (JSON; multipart when files are attached) and decodes the
// answer into out when it is not nil.
func (r *rest) do(ctx context.Context, method, path string, body any, files []file, out any) error {
	var (
		rd    io.Reader
		ctype string
	)
	if body != nil {
		js, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		if len(files) == 0 {
			rd, ctype = bytes.NewReader(js), "application/json"
		} else {
			var buf bytes.Buffer
			w := multipart.NewWriter(&buf)
			h := textproto.MIMEHeader{}
			h.Set("Content-Disposition", `form-data; name="payload_json"`)
			h.Set("Content-Type", "application/json")
			pw, _ := w.CreatePart(h)
			_, _ = pw.Write(js)
			for i, f := range files {
				h := textproto.MIMEHeader{}
				h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="files[%d]"; filename="%s"`, i, f.Name))
				h.Set("Content-Type", "text/plain; charset=utf-8")
				fw, _ := w.CreatePart(h)
				_, _ = io.WriteString(fw, f.Content)
			}
			_ = w.Close()
			rd, ctype = &buf, w.FormDataContentType()
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, rd)
	if err != nil {
		return fmt.Errorf("discord %s %s: %w", method, path, err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if r.token != "" {
		req.Header.Set("Authorization", r.token)
	}
	req.Header.Set("User-Agent", r.agent)
	resp, err := r.client.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			return fmt.Errorf("discord %s %s: %w: %w", method, redact(path), adapters.ErrUnavailable, err)
		}
		return fmt.Errorf("discord %s %s: %w", method, redact(path), err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("discord %s %s: read the answer: %w", method, path, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if out != nil && len(data) > 0 {
			if err := json.Unmarshal(data, out); err != nil {
				return fmt.Errorf("discord %s %s: decode the answer: %w", method, path, err)
			}
		}
		return nil
	}
	ae := &apiError{Method: method, Path: redact(path), Status: resp.StatusCode}
	_ = json.Unmarshal(data, ae)
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		return &adapters.RateLimitError{RetryAfter: retryAfter(resp.Header, ae.RetryAfter), Err: ae}
	case resp.StatusCode == http.StatusNotFound && (ae.Code == codeUnknownMessage || ae.Code == codeUnknownChannel):
		return fmt.Errorf("%w: %w", adapters.ErrGone, ae)
	case resp.StatusCode >= 500:
		return fmt.Errorf("%w: %w", adapters.ErrUnavailable, ae)
	}
	return ae
}

// retryAfter reads how long a 429 asks to wait: the body's retry_after
// (seconds, fractional), else the Retry-After header; at least a second
// when neither says.
func retryAfter(h http.Header, body float64) time.Duration {
	if body > 0 {
		return time.Duration(body * float64(time.Second))
	}
	if s, err := strconv.ParseFloat(h.Get("Retry-After"), 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	return time.Second
}

// redact keeps interaction and webhook tokens out of errors and logs.
func redact(path string) string {
	parts := strings.Split(path, "/")
	for i := 1; i < len(parts); i++ {
		if (parts[i-1] == "webhooks" && i+1 < len(parts)) || parts[i-1] == "interactions" {
			if i+1 < len(parts) {
				parts[i+1] = "…"
			}
		}
	}
	return strings.Join(parts, "/")
}

// rewrite sends requests for Discord's own host to a compatible server
// instead. discordgo builds its endpoint strings from "https://discord.com/"
// when the package loads, so changing them later changes nothing: the
// transport rewrites each request on its way out.
type rewrite struct {
	from string   // discord.com
	to   *url.URL // the compatible server's base
	next http.RoundTripper
}

func (t rewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != t.from {
		return t.next.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	u := *req.URL
	u.Scheme, u.Host = t.to.Scheme, t.to.Host
	u.Path = strings.TrimRight(t.to.Path, "/") + req.URL.Path
	u.RawPath = ""
	r.URL, r.Host = &u, ""
	return t.next.RoundTrip(r)
}

// discordHost is the host discordgo's endpoints name.
func discordHost() string {
	u, err := url.Parse(discordgo.EndpointDiscord)
	if err != nil {
		return "discord.com"
	}
	return u.Host
}
