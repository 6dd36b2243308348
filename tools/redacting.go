package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Redactor hides secrets in text: it returns the text with each secret
// replaced by "[redacted: <rule>]" and how many it replaced. tools/redact
// implements it with the gitleaks rule set; main builds one and gives it
// to the registry (Registry.Redact), which puts it between every tool and
// everything downstream.
type Redactor interface {
	Redact(text string) (string, int)
}

// Redact makes every result, preview and progress report of the
// registry's tools pass through x before anyone sees them: the model, the
// card, the chat, the store and the audit log all get their results from
// Lookup, Run and Preview, so there is no path around it. It is part of
// building the registry, before it is shared; a nil x turns redaction off.
func (r *Registry) Redact(x Redactor) {
	r.redactor = x
	r.shown = make(map[string]Tool, len(r.tools))
	for name, t := range r.tools {
		r.shown[name] = redacting(t, x)
	}
}

// redacting wraps t so that what it returns passes through x, keeping
// the Previewer capability when t has it.
func redacting(t Tool, x Redactor) Tool {
	if x == nil {
		return t
	}
	rt := redactedTool{Tool: t, x: x}
	if pv, ok := t.(Previewer); ok {
		return redactedPreviewer{redactedTool: rt, pv: pv}
	}
	return rt
}

// redactedTool is a tool whose output is redacted.
type redactedTool struct {
	Tool
	x Redactor
}

func (t redactedTool) Run(ctx context.Context, args json.RawMessage, opts RunOptions) Result {
	if report := opts.Progress; report != nil {
		opts.Progress = func(p Progress) {
			p.Tail, _ = t.x.Redact(p.Tail)
			report(p)
		}
	}
	return RedactResult(t.Tool.Run(ctx, args, opts), t.x)
}

// redactedPreviewer is a previewing tool whose output and previews are
// redacted.
type redactedPreviewer struct {
	redactedTool
	pv Previewer
}

func (t redactedPreviewer) Preview(ctx context.Context, args json.RawMessage) Preview {
	return RedactPreview(t.pv.Preview(ctx, args), t.x)
}

// RedactResult passes every text a result carries through x: output,
// rows and column names, headers, body, content, structured data, error,
// message and note. When something was hidden, Redacted says how many
// values and the note tells the model so.
func RedactResult(res Result, x Redactor) Result {
	if x == nil {
		return res
	}
	n := 0
	text := func(s *string) {
		var k int
		*s, k = x.Redact(*s)
		n += k
	}
	text(&res.Stdout)
	text(&res.Stderr)
	text(&res.Body)
	text(&res.Content)
	text(&res.Error)
	text(&res.Message)
	text(&res.Note)
	if len(res.Columns) > 0 {
		cols := make([]Column, len(res.Columns))
		for i, c := range res.Columns {
			text(&c.Name)
			cols[i] = c
		}
		res.Columns = cols
	}
	if len(res.Rows) > 0 {
		secret := make([]bool, len(res.Columns))
		for i, c := range res.Columns {
			secret[i] = SecretColumn(c.Name)
		}
		rows := make([][]any, len(res.Rows))
		for i, row := range res.Rows {
			rows[i] = make([]any, len(row))
			for j, v := range row {
				if j < len(secret) && secret[j] && v != nil && v != "" {
					rows[i][j] = ColumnMark
					n++
					continue
				}
				rows[i][j] = redactValue(v, text)
			}
		}
		res.Rows = rows
	}
	if len(res.Headers) > 0 {
		h := make(map[string]string, len(res.Headers))
		for k, v := range res.Headers {
			text(&k)
			text(&v)
			h[k] = v
		}
		res.Headers = h
	}
	if len(res.Data) > 0 {
		res.Data = redactJSON(res.Data, text)
	}
	if n > 0 {
		res.Redacted = n
		res.Note = JoinNotes(res.Note, RedactedNote(n))
	}
	return res
}

// ColumnMark replaces every value of a column whose name says it holds
// passwords or their hashes.
const ColumnMark = "[redacted: password-column]"

// SecretColumn reports whether a result column's name says its values
// are passwords, password hashes or tokens (mysql.user's
// authentication_string, pg_authid's rolpassword, an application's
// password_hash or api_token), whatever the values look like: a hash of
// an unknown scheme, or a plain password, has no shape a rule can find.
func SecretColumn(name string) bool {
	n := strings.ToLower(name)
	if i := strings.LastIndexByte(n, '.'); i >= 0 {
		n = n[i+1:] // a qualified name, user.password
	}
	switch n {
	case "authentication_string", "rolpassword", "passwd", "pwd", "secret", "token", "api_key", "apikey":
		return true
	}
	for _, w := range []string{"password", "passwd", "pass_hash", "secret_key", "api_token", "access_token", "refresh_token", "private_key"} {
		if strings.Contains(n, w) {
			// Names that only say something about the secret.
			for _, about := range []string{"expired", "expires", "changed", "last", "lifetime", "reuse", "require", "policy", "length", "_at", "_on", "count", "errors", "locked"} {
				if strings.Contains(n, about) {
					return false
				}
			}
			return true
		}
	}
	return false
}

// RedactedNote is the one wording that tells the model values were hidden.
func RedactedNote(n int) string {
	values := "values that look like secrets were"
	if n == 1 {
		values = "value that looks like a secret was"
	}
	return fmt.Sprintf("%d %s replaced by a [redacted: …] mark; the original is kept nowhere, so do not ask for it again", n, values)
}

// RedactPreview passes a preview's texts through x.
func RedactPreview(p Preview, x Redactor) Preview {
	if x == nil {
		return p
	}
	p.Summary, _ = x.Redact(p.Summary)
	p.Err, _ = x.Redact(p.Err)
	if len(p.Items) > 0 {
		items := make([]string, len(p.Items))
		for i, it := range p.Items {
			items[i], _ = x.Redact(it)
		}
		p.Items = items
	}
	return p
}

// redactValue redacts the strings inside a decoded value.
func redactValue(v any, text func(*string)) any {
	switch v := v.(type) {
	case string:
		text(&v)
		return v
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = redactValue(e, text)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			text(&k)
			out[k] = redactValue(e, text)
		}
		return out
	}
	return v
}

// redactJSON redacts the strings of a JSON value. Data that does not
// decode is redacted as text and kept as a JSON string, so that a value
// is never let through for being malformed.
func redactJSON(raw json.RawMessage, text func(*string)) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err == nil {
		if out, err := json.Marshal(redactValue(v, text)); err == nil {
			return out
		}
	}
	s := string(raw)
	text(&s)
	out, _ := json.Marshal(s)
	return out
}
