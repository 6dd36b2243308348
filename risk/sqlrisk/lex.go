package sqlrisk

import "unicode/utf8"

// This file holds a small MySQL lexer. It does not replace the parser: it
// finds what the parser would hide or treat differently from the server
// (executable comments, comments that hold a ';', bytes the two lexers may
// read differently) and splits text the parser rejects into statements, so
// that the fallback in fallback.go can still name a DROP or a RESET.

// tokenKind is the kind of one lexical token.
type tokenKind uint8

const (
	tokWord   tokenKind = iota + 1 // keyword, identifier or number
	tokString                      // '...' or "..." (a string unless ANSI_QUOTES)
	tokQuoted                      // `...` (or "..." under ANSI_QUOTES)
	tokPunct                       // any other single byte, ';' included
)

// token is one token of the text: text[start:end].
type token struct {
	kind       tokenKind
	start, end int
}

// lexMode holds the sql_mode flags that change how text splits into tokens.
type lexMode struct {
	ansiQuotes   bool
	noBackslash  bool
	collectWords bool // lex.tokens is filled (the fallback needs it)
}

// lexResult is what one pass over the text found.
type lexResult struct {
	// execComment is the opening of the first executable comment outside a
	// literal ("/*!", "/*M!", "/*T!"), or "".
	execComment string
	// commentSemicolon: a comment holds a ';' (it may hide a statement).
	commentSemicolon bool
	// nestedComment: a block comment holds "/*", which MySQL may read differently.
	nestedComment bool
	// limitHint names an optimizer hint that lifts server limits
	// (MAX_EXECUTION_TIME, SET_VAR, RESOURCE_GROUP) found in any /*+ */
	// comment, whether or not the parser reads that comment as hints: the
	// parser drops a hint comment it cannot parse, MySQL may keep part of it.
	limitHint string
	// unterminated: a literal or a block comment is not closed.
	unterminated bool
	// badBytes: control characters or invalid UTF-8, which the server's lexer
	// and the parser's may read differently.
	badBytes bool
	// statements counts the non-empty statements between semicolons.
	statements int
	// semicolons counts ';' outside literals and comments.
	semicolons int
	// afterLast: a ';' that ends a statement is followed by something more
	// (a comment, another ';', a statement).
	afterLast bool
	// tokens holds every token when lexMode.collectWords is set.
	tokens []token
}

// lex reads text once.
func lex(text string, mode lexMode) lexResult {
	var r lexResult
	inStatement := false // a token of the current statement was seen
	sawSemicolon := false
	note := func() {
		if sawSemicolon {
			r.afterLast = true
		}
	}
	ascii := true
	n := len(text)
	for i := 0; i < n; {
		c := text[i]
		if c >= utf8.RuneSelf {
			ascii = false
		}
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		case c < ' ' || c == 0x7f:
			r.badBytes = true
			i++
			continue
		}
		start := i
		switch {
		case c == '#':
			note()
			i = lineComment(text, i, &r)
			continue
		case c == '-' && i+1 < n && text[i+1] == '-' && (i+2 == n || isSpace(text[i+2])):
			note()
			i = lineComment(text, i, &r)
			continue
		case c == '/' && i+1 < n && text[i+1] == '*':
			note()
			i = blockComment(text, i, &r)
			continue
		case c == '\'':
			i = quoted(text, i, '\'', !mode.noBackslash, &r)
			r.add(mode, tokString, start, i)
		case c == '"':
			if mode.ansiQuotes {
				i = quoted(text, i, '"', false, &r)
				r.add(mode, tokQuoted, start, i)
			} else {
				i = quoted(text, i, '"', !mode.noBackslash, &r)
				r.add(mode, tokString, start, i)
			}
		case c == '`':
			i = quoted(text, i, '`', false, &r)
			r.add(mode, tokQuoted, start, i)
		case isWordByte(c):
			for i < n && isWordByte(text[i]) {
				if text[i] >= utf8.RuneSelf {
					ascii = false
				}
				i++
			}
			r.add(mode, tokWord, start, i)
		default:
			i++
			r.add(mode, tokPunct, start, i)
			if c == ';' {
				r.semicolons++
				if inStatement {
					r.statements++
					inStatement = false
				} else {
					note()
				}
				sawSemicolon = true
				continue
			}
		}
		note()
		inStatement = true
	}
	if inStatement {
		r.statements++
	}
	if !ascii && !utf8.ValidString(text) {
		r.badBytes = true
	}
	return r
}

func (r *lexResult) add(mode lexMode, kind tokenKind, start, end int) {
	if mode.collectWords {
		r.tokens = append(r.tokens, token{kind: kind, start: start, end: end})
	}
}

// isSpace reports the bytes after "--" that make it a comment. MySQL also
// accepts control characters there; those are flagged as bad bytes anyway.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// isWordByte reports bytes that continue an identifier, keyword or number.
func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= utf8.RuneSelf ||
		(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// lineComment skips a '#' or '-- ' comment that starts at i, up to the
// newline.
func lineComment(text string, i int, r *lexResult) int {
	for ; i < len(text) && text[i] != '\n'; i++ {
		if text[i] == ';' {
			r.commentSemicolon = true
		}
	}
	return i
}

// blockComment skips a /* ... */ comment that starts at i and notes an
// executable one.
func blockComment(text string, i int, r *lexResult) int {
	body := text[i+2:]
	if r.execComment == "" {
		switch {
		case len(body) > 0 && body[0] == '!':
			r.execComment = "/*!"
		case len(body) > 1 && (body[0] == 'M' || body[0] == 'm') && body[1] == '!':
			r.execComment = "/*M!"
		case len(body) > 1 && (body[0] == 'T' || body[0] == 't') && body[1] == '!':
			r.execComment = "/*T!"
		}
	}
	for j := i + 2; j < len(text); j++ {
		switch text[j] {
		case ';':
			r.commentSemicolon = true
		case '/':
			if j+1 < len(text) && text[j+1] == '*' {
				r.nestedComment = true
			}
		case '*':
			if j+1 < len(text) && text[j+1] == '/' && j > i+1 {
				if r.limitHint == "" && len(body) > 0 && body[0] == '+' {
					r.limitHint = limitHintIn(text[i+3 : j])
				}
				return j + 2
			}
		}
	}
	r.unterminated = true
	return len(text)
}

// quoted skips a literal that opens with q at i. A doubled quote stands for
// itself; a backslash escapes the next byte when backslash is set.
func quoted(text string, i int, q byte, backslash bool, r *lexResult) int {
	for j := i + 1; j < len(text); j++ {
		switch text[j] {
		case '\\':
			if backslash {
				j++
			}
		case q:
			if j+1 < len(text) && text[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	r.unterminated = true
	return len(text)
}

// limitHints are the optimizer hints that change server limits for a query.
var limitHints = []string{"MAX_EXECUTION_TIME", "SET_VAR", "RESOURCE_GROUP"}

// limitHintIn returns the first of limitHints in the body of a hint
// comment, ignoring case, or "".
func limitHintIn(body string) string {
	for _, h := range limitHints {
		if containsFold(body, h) {
			return h
		}
	}
	return ""
}
