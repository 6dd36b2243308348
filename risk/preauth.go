package risk

import (
	"net/url"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// preauth holds the pre-authorised operations of one tool (rule 2); see
// ToolConfig.Preauthorized for what they mean.
type preauth struct {
	tool     string
	exact    map[string]bool
	patterns []preauthPattern
}

type preauthPattern struct {
	text string // as configured, with the re: prefix
	re   *regexp.Regexp
}

// match returns the entry that pre-authorises op, or ok=false.
func (pa *preauth) match(op string) (entry string, ok bool) {
	op = trimASCIISpace(op)
	if op == "" {
		return "", false
	}
	if pa.exact[op] {
		return op, true
	}
	for _, pt := range pa.patterns {
		if pt.re.MatchString(op) && patternSafe(pa.tool, op) {
			return pt.text, true
		}
	}
	return "", false
}

// patternSafe reports whether op meets the extra conditions of a "re:" entry
// for tool.
func patternSafe(tool, op string) bool {
	switch tool {
	case ToolCommand:
		return singleLiteralCommand(op)
	case ToolSQL:
		body := strings.TrimRight(op, "; \t\r\n")
		return !strings.Contains(body, ";") && !strings.Contains(body, "/*")
	case ToolHTTP:
		_, raw, _ := strings.Cut(op, " ")
		u, err := url.Parse(raw)
		return err == nil && u.User == nil && !strings.Contains(u.Host, "@") && !climbsPath(u)
	}
	return true
}

// climbsPath reports whether a URL's path holds a dot segment or an encoded
// slash or backslash, plain or percent-encoded: a server that normalises
// the path may serve /flags/../admin from /admin, outside what a pattern
// such as https://api.example.com/flags/.* meant to allow.
func climbsPath(u *url.URL) bool {
	for _, seg := range strings.Split(u.EscapedPath(), "/") {
		s, err := url.PathUnescape(seg)
		if err != nil || s == "." || s == ".." || strings.ContainsAny(s, `/\`) {
			return true
		}
	}
	return false
}

// singleLiteralCommand reports whether line is exactly one simple command
// made only of literal words.
func singleLiteralCommand(line string) bool {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil || len(f.Stmts) != 1 {
		return false
	}
	st := f.Stmts[0]
	if st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 {
		return false
	}
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return false
	}
	for _, w := range call.Args {
		var text strings.Builder
		for _, part := range w.Parts {
			switch x := part.(type) {
			case *syntax.Lit:
				if strings.ContainsAny(x.Value, "*?[]{}~$`") {
					return false
				}
				text.WriteString(x.Value)
			case *syntax.SglQuoted:
				if x.Dollar {
					return false
				}
				text.WriteString(x.Value)
			case *syntax.DblQuoted:
				if x.Dollar {
					return false
				}
				for _, in := range x.Parts {
					lit, ok := in.(*syntax.Lit)
					if !ok || strings.ContainsAny(lit.Value, "$`") {
						return false
					}
					text.WriteString(lit.Value)
				}
			default:
				return false
			}
		}
		for _, seg := range strings.Split(text.String(), "/") {
			if seg == ".." {
				return false
			}
		}
	}
	return true
}

// trimASCIISpace trims the white space a shell or SQL server ignores around
// a statement; other Unicode spaces are text to them, so they stay.
func trimASCIISpace(s string) string {
	return strings.Trim(s, " \t\r\n")
}
