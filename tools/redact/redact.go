// Package redact owns the secret scanner that every tool's output passes
// through before the model, a card, the chat or the audit log sees it
// (issue 16, mechanism 7). It applies the rule set of gitleaks v8 (about
// two hundred maintained rules: cloud keys, chat and forge tokens, private
// keys, generic "password = …" assignments with an entropy test), kept as a
// generated table (rules_gitleaks.go, written by internal/rulegen) and
// applied by a detector of its own (detect.go) that does what gitleaks'
// does; the binary does not link gitleaks.
//
// Each rule's regular expression is compiled the first time a keyword of
// its is seen (lazy.go), so an idle process holds none of them. A Redactor
// is built once at start (in cmd) and shared: Redact is safe for
// concurrent use.
//
// gitleaks scans a whole file at once; on output most lines hold none of
// its rules' keywords, so Redact first finds the lines that do (one
// Aho-Corasick pass) and gives the detector only those, each with the line
// after it, and a private key's block whole. A value found there is hidden
// wherever it appears in the text. Runs of base64 are decoded and scanned
// on their own, so a secret printed encoded (a Kubernetes secret as YAML)
// is hidden too.
package redact

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Redactor replaces secrets in text by "[redacted: <rule>]".
type Redactor struct {
	det *detector
	// generic is the detector of the one rule that costs most, gitleaks'
	// generic "key = value" rule, whose keywords (key, token, auth, …)
	// are everywhere in output; it sees only the lines where such a
	// keyword is followed by an assignment (assigned). Nil when the rule
	// set has no such rule.
	generic *detector
	allow   map[string]bool
	// pemBegin and pemEnd find the parts of a private key block that a
	// cap or a tail cut in two, which no gitleaks rule matches: a
	// header with no end after it, or an end with no header before it.
	pemBegin, pemEnd *regexp.Regexp
	// extras are rules gitleaks lacks for what on-call output often
	// holds: a password in a URL's user information, and one on a
	// command line as ps shows it.
	extras []extra
}

// extra is a rule of our own: the first group of re that matched is the
// secret. hints are lower-case words of which the text must hold one for
// the rule to be tried (a cheap filter before the regular expression); a
// rule with none is tried on every text.
type extra struct {
	id    string
	re    *lazyRegexp
	hints []string
	// keep, when set, reports whether a matched value is a secret at all
	// (e.g. not a plain number in "password_min_length=12"), given the
	// whole match and the value.
	keep func(match, v string) bool
	// after, when set, narrows hints to those where what follows can be
	// the rest of a match (an assignment, a password and an @). When
	// the expression starts with lineOrBoundary it is then tried from
	// each such hint rather than over their lines (assign.go), and mid
	// is the expression for text that does not start a line.
	after func(rest string) bool
	mid   *lazyRegexp
	// line, when set for a rule without hints, is what a line must be
	// for the rule to read it (cheaper than the expression on all text).
	line func(line string) bool
}

// secretName is the part of a key's name that says its value is a secret:
// password, passwd, passphrase, pwd as a word of its own (DB_PWD, not the
// shell's PWD, whose value is a folder), secret, token, api key, auth.
const secretName = `(?:[A-Za-z0-9_.-]*(?:(?i:pass(?:word|wd|phrase))|(?i:secret)|(?i:token)|(?i:api[_-]?key)|(?i:access[_-]?key)|(?i:private[_-]?key))[A-Za-z0-9_.-]*|[A-Za-z0-9_.-]*_(?i:pwd))`

// quotedValue is a value in double quotes (with JSON's escapes), in
// single quotes, or bare up to a blank, quote, comma, brace or semicolon;
// each form is its own group.
const quotedValue = `(?:"((?:[^"\\\n]|\\.)+)"|'([^'\n]+)'|([^\s'",;{}\[\]]+))`

// extraRules are the rules gitleaks lacks (see Redactor.extras).
var extraRules = []struct {
	id, re string
	hints  []string
	keep   func(match, v string) bool
	after  func(rest string) bool
	line   func(line string) bool
}{
	// scheme://user:password@host (postgres, mysql, redis, amqp, https…).
	{"url-password", `(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s/:@'"]*:([^\s/@'"]+)@`, []string{"://"}, nil, userinfoPassword, nil},
	// --password=secret, --password secret (mysql, mysqldump, redis-cli,
	// kcadm, curl --proxy-password, …).
	{"cli-password", `--(?:[a-z]+-)?password(?:=|[ \t]+)([^\s'"-][^\s'"]*)`, []string{"password"}, nil, nil, nil},
	// mysql -psecret, as ps aux and shell history show it.
	{"cli-password", `\b(?:mysql|mysqldump|mysqladmin|mysqlcheck|mysqlimport|mysqlshow|mysqlbinlog|mariadb|mariadb-dump|mariadb-admin)\b[^\n]*?[ \t]-p([^\s'"-][^\s'"]*)`, []string{" -p", "\t-p"}, nil, nil, nil},
	// redis-cli -a secret, erl -setcookie COOKIE, curl -u user:secret.
	{"cli-password", `\bredis-cli\b[^\n]*?[ \t]-a[ \t]+([^\s'"-][^\s'"]*)`, []string{"redis-cli"}, nil, nil, nil},
	{"erlang-cookie", `-setcookie[ \t]+['"]?([^\s'"]+)`, []string{"-setcookie"}, nil, nil, nil},
	{"cli-password", `(?i)\bcurl\b[^\n]*?[ \t](?:-u|--user)[ \t=]*['"]?[^:\s'"]*:([^\s'"]+)`, []string{"curl"}, nil, nil, nil},
	// An assignment to a name that says secret, in any of the shapes
	// configuration and environments print: password = "a#b$c",
	// DB_PASSWORD=…, "password": "…", PGPASSWORD='…', password: …
	// gitleaks' generic rule refuses values with # or $ and short ones.
	{"password-assignment", lineOrBoundary + `["']?` + secretName + `["']?[ \t]*(?:=|:)[ \t]*` + quotedValue, []string{"pass", "secret", "token", "key", "pwd"}, secretValue, nameAssigned, nil},
	// Authorization: Basic …, Bearer …, Token … (headers, curl -H,
	// nginx and proxy logs).
	{"authorization-header", `(?i)\b(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?(?:basic|bearer|token|negotiate)[ \t]+([^\s'",]+)`, []string{"authorization"}, nil, nil, nil},
	// SQL text: IDENTIFIED BY 'x', PASSWORD('x'), SET PASSWORD = 'x',
	// MASTER_PASSWORD='x'.
	{"sql-password", `(?i)\bidentified[ \t]+(?:with[ \t]+\S+[ \t]+)?(?:by|as)[ \t]+(?:password[ \t]+)?'([^'\n]+)'`, []string{"identified"}, nil, nil, nil},
	{"sql-password", `(?i)\b(?:old_)?password[ \t]*\([ \t]*'([^'\n]+)'`, []string{"password"}, nil, nil, nil},
	{"sql-password", `(?i)\b(?:master|primary|source)_password[ \t]*=[ \t]*'([^'\n]+)'`, []string{"_password"}, nil, nil, nil},
	// Password hashes: crypt(3) ($1$, $2b$, $5$, $6$, $y$, $gy$, $7$),
	// MySQL's native (*40 hex) and caching_sha2 ($A$005$…), PostgreSQL's
	// SCRAM and md5 secrets.
	{"password-hash", `(\$(?:1|2[abxy]?|5|6|7|y|gy|md5|sha1)\$[./A-Za-z0-9$=,]{16,})`, []string{"$"}, shaped, nil, nil},
	{"password-hash", `(?:^|[^0-9A-Za-z*])(\*[0-9A-F]{40})\b`, []string{"*"}, shaped, nil, nil},
	{"password-hash", `(\$A\$[0-9A-Fa-f]{3}\$[^\n]{20,63})`, []string{"$a$"}, shaped, nil, nil},
	{"password-hash", `(SCRAM-SHA-256\$[0-9]+:[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+)`, []string{"scram-sha-256$"}, shaped, nil, nil},
	{"password-hash", `\b(md5[0-9a-f]{32})\b`, []string{"md5"}, shaped, nil, nil},
	// An Erlang cookie as ~/.erlang.cookie holds it: a line of twenty
	// capital letters and nothing else.
	{"erlang-cookie", `(?m)^([A-Z]{20})\r?$`, nil, nil, nil, cookieLine},
}

// notPlaceholder is the keep of most rules: what was found is a secret
// unless it is plainly a placeholder.
func notPlaceholder(_, v string) bool { return !placeholder(v) }

// shaped is the keep of rules whose match is a secret by its shape (a
// password hash): a hash starts with "$", which would read as a variable.
func shaped(_, _ string) bool { return true }

// secretValue reports whether v, assigned to a name that says secret, is
// one: not a plain boolean or small number (token_ttl: 3600), not a path
// the value only points to (password_file=/run/secrets/db), and not the
// value of a name that only says something about the secret
// (secretName: db-creds, password_min_length=12, token_url=…).
func secretValue(match, v string) bool {
	name := strings.ToLower(strings.TrimRight(match[:strings.LastIndexAny(match[:len(match)-len(v)], "=:")], " \t'\""))
	for _, suffix := range aboutSecret {
		if strings.HasSuffix(name, suffix) {
			return false
		}
	}
	if placeholder(v) {
		return false
	}
	switch strings.ToLower(v) {
	case "true", "false", "yes", "no", "on", "off", "null", "none", "nil", "required", "optional", "disabled", "enabled":
		return false
	}
	if strings.Trim(v, "0123456789") == "" && len(v) < 10 {
		return false
	}
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "~/") {
		return false
	}
	return true
}

// New prepares the gitleaks default rule set (compiling nothing yet).
// Values in allow are let through even when a rule matches them (an
// operator's known test token, a public key id that looks like a secret);
// an empty value is an error, as it would name nothing.
func New(allow []string) (*Redactor, error) {
	main, generic := split(gitleaksRules, genericRule)
	for _, rule := range main {
		if len(rule.keywords) == 0 {
			// Every content rule of the set has keywords; one without
			// would have to see all the text, which windows cannot give.
			return nil, fmt.Errorf("gitleaks rule %s has no keywords; the redactor's windows cannot serve it", rule.id)
		}
	}
	r := &Redactor{
		det:      newDetector(main, gitleaksAllow),
		allow:    map[string]bool{},
		pemBegin: regexp.MustCompile(`(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`),
		pemEnd:   regexp.MustCompile(`(?i)-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`),
	}
	if len(generic) > 0 {
		r.generic = newDetector(generic, gitleaksAllow)
		g := r.generic.rules[0]
		g.submatch = func(s string) []string {
			return genericScanner().submatch(s, g.keywords, g.re.get().FindStringSubmatch)
		}
	}
	for _, e := range extraRules {
		x := extra{id: e.id, re: &lazyRegexp{src: e.re}, hints: e.hints, keep: e.keep, after: e.after, line: e.line}
		if e.after != nil && strings.HasPrefix(e.re, lineOrBoundary) {
			x.mid = &lazyRegexp{src: "(?:" + e.re[len("(?:^|"):]}
		}
		r.extras = append(r.extras, x)
	}
	for i, a := range allow {
		if a == "" {
			return nil, fmt.Errorf("allow entry #%d is empty; remove it or give the exact value that must pass", i+1)
		}
		r.allow[a] = true
	}
	return r, nil
}

// genericRule is the ID of gitleaks' generic assignment rule.
const genericRule = "generic-api-key"

// split returns rules without the rule id, and that rule alone.
func split(rules []rule, id string) (rest, alone []rule) {
	for _, r := range rules {
		if r.id == id {
			alone = append(alone, r)
		} else {
			rest = append(rest, r)
		}
	}
	return rest, alone
}

// Rules is the number of rules the scanner applies.
func (r *Redactor) Rules() int {
	n := len(r.det.rules)
	if r.generic != nil {
		n += len(r.generic.rules)
	}
	return n
}

// Redact returns s with every secret the rules find replaced by
// "[redacted: <rule id>]", and how many values it replaced. Text with no
// secret comes back unchanged (the same string). A nil Redactor changes
// nothing.
func (r *Redactor) Redact(s string) (string, int) {
	if r == nil || s == "" {
		return s, 0
	}
	lower := asciiLower(s)
	var spans []span
	seen := map[string]bool{} // rule and secret whose every place is a span
	for _, w := range windows(s, lower, r.det.words.get(), nil) {
		spans = append(spans, r.find(r.det, s, lower, w[0], w[1], seen)...)
	}
	if r.generic != nil {
		spans = append(spans, r.genericSpans(s, lower, seen)...)
	}
	spans = append(spans, r.encoded(s)...)
	spans = append(spans, r.extra(s, lower)...)
	if strings.Contains(lower, "private key") {
		spans = r.cutKeys(s, spans)
	}
	if len(spans) == 0 {
		return s, 0
	}
	spans = merge(spans)
	var b strings.Builder
	b.Grow(len(s))
	at := 0
	for _, sp := range spans {
		b.WriteString(s[at:sp.start])
		b.WriteString("[redacted: ")
		b.WriteString(sp.rule)
		b.WriteString("]")
		at = sp.end
	}
	b.WriteString(s[at:])
	return b.String(), len(spans)
}

// asciiLower lower-cases ASCII letters only, so that byte offsets in the
// result are those of s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// assigned reports whether the text after a keyword can be the rest of
// gitleaks' generic rule: within 24 bytes of name characters, blanks and
// quotes, an assignment (=, :, >, ||, ?=, a comma).
func assigned(rest string) bool {
	for i := 0; i < len(rest) && i < 24; i++ {
		switch c := rest[i]; {
		case c == '=' || c == ':' || c == '>' || c == '|' || c == '?' || c == ',':
			return true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\'' || c == '"' || c == '.' || c == '-' || c == '_' ||
			'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9':
		default:
			return false
		}
	}
	return false
}

// aboutSecret are the ends of names whose value is about a secret, not
// the secret: its name, where it is kept, its length or lifetime.
var aboutSecret = []string{"name", "names", "ref", "file", "path", "dir", "type", "length", "len", "ttl", "expiry",
	"expires", "expiration", "age", "policy", "url", "uri", "endpoint", "header", "prefix", "count", "min", "max",
	"required", "enabled", "kind", "algorithm", "mode", "format", "version", "id", "arn", "source", "provider"}

// extra applies the rules gitleaks lacks. A value that is plainly a
// placeholder ($VAR, ${VAR}, <password>, ***, xxx) is left alone.
func (r *Redactor) extra(s, lower string) []span {
	var out []span
	for _, e := range r.extras {
		if len(e.hints) > 0 && !containsAny(lower, e.hints) {
			continue
		}
		for _, m := range e.matches(s, lower) {
			start, end := -1, -1
			for g := 2; g+1 < len(m); g += 2 {
				if m[g] >= 0 {
					start, end = m[g], m[g+1]
					break
				}
			}
			if start < 0 {
				continue
			}
			v := s[start:end]
			keep := e.keep
			if keep == nil {
				keep = notPlaceholder
			}
			if r.allow[v] || !keep(s[m[0]:m[1]], v) {
				continue
			}
			out = append(out, span{start, end, e.id})
		}
	}
	return out
}

// matches returns the submatch indexes of e's expression in s. A rule with
// hints reads only the lines that hold one (every such rule is about one
// line); a rule with line reads only the lines it accepts: so
// that its cost follows what the text holds, not its length.
func (e extra) matches(s, lower string) [][]int {
	if e.mid != nil {
		return e.assignMatches(s, lower)
	}
	if len(e.hints) == 0 && e.line == nil {
		return e.re.get().FindAllStringSubmatchIndex(s, -1)
	}
	var out [][]int
	read := func(start, end int) {
		for _, m := range e.re.get().FindAllStringSubmatchIndex(s[start:end], -1) {
			for g := range m {
				if m[g] >= 0 {
					m[g] += start
				}
			}
			out = append(out, m)
		}
	}
	if len(e.hints) == 0 {
		for start := 0; start < len(s); {
			end := lineEnd(s, start)
			if e.line(s[start:end]) {
				read(start, end)
			}
			start = end + 1
		}
		return out
	}
	var lines []int // the starts of the lines to read
	for _, h := range e.hints {
		for i := 0; ; {
			j := strings.Index(lower[i:], h)
			if j < 0 {
				break
			}
			at := i + j
			if e.after != nil && !e.after(s[at+len(h):]) {
				i = at + len(h)
				continue
			}
			lines = append(lines, strings.LastIndexByte(s[:at], '\n')+1)
			i = lineEnd(s, at)
		}
	}
	slices.Sort(lines)
	for _, start := range slices.Compact(lines) {
		read(start, lineEnd(s, start))
	}
	return out
}

// lineEnd is the offset of the newline ending the line at i, or len(s).
func lineEnd(s string, i int) int {
	if k := strings.IndexByte(s[i:], '\n'); k >= 0 {
		return i + k
	}
	return len(s)
}

// nameAssigned reports whether rest, what follows a secret word, can end
// a key's name and assign it (password-assignment): name characters, a
// quote, blanks, then = or :.
func nameAssigned(rest string) bool {
	i := 0
	for i < len(rest) && (isName(rest[i])) {
		i++
	}
	if i < len(rest) && (rest[i] == '"' || rest[i] == '\'') {
		i++
	}
	for i < len(rest) && (rest[i] == ' ' || rest[i] == '\t') {
		i++
	}
	return i < len(rest) && (rest[i] == '=' || rest[i] == ':')
}

// userinfoPassword reports whether rest, what follows "://", starts as a
// URL's user information with a password does (url-password): a user, a
// colon, a password, an @.
func userinfoPassword(rest string) bool {
	i := strings.IndexAny(rest, " \t\n\r\f/:@'\"") // \s is [\t\n\f\r ]
	if i < 0 || rest[i] != ':' {
		return false
	}
	j := strings.IndexAny(rest[i+1:], " \t\n\r\f/@'\"")
	return j > 0 && rest[i+1+j] == '@'
}

// cookieLine reports whether a line can be an Erlang cookie's: twenty
// bytes, and a carriage return.
func cookieLine(l string) bool { return len(strings.TrimSuffix(l, "\r")) == 20 }

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// placeholder reports whether a value stands for a password rather than
// being one: a variable or template ($VAR, ${VAR}, <password>, {{ .pw }},
// %s), a mask (***, xxx), a word used in examples (password, secret,
// changeme), or too short to be a real one (pw).
func placeholder(v string) bool {
	if len(v) < 4 || strings.HasPrefix(v, "$") || strings.HasPrefix(v, "<") || strings.HasPrefix(v, "%") || strings.HasPrefix(v, "{{") {
		return true
	}
	switch strings.ToLower(v) {
	case "pass", "password", "passwd", "secret", "changeme", "example", "redacted":
		return true
	}
	return strings.Trim(v, "*xX•.") == ""
}

// find runs det over s[start:end] (lower is s in ASCII lower case) and
// returns the spans of what it found, in the whole of s.
func (r *Redactor) find(det *detector, s, lower string, start, end int, seen map[string]bool) []span {
	return r.spans(s, det.detect(s[start:end], lower[start:end]), start, end, seen)
}

// spans turns findings into byte ranges of s. A secret is hidden wherever
// it appears in s (so a value printed twice is hidden twice, and a key's
// name stays visible). A finding whose secret cannot be placed hides its
// whole window: better a missing line than a leaked value. seen holds the
// rule and secret pairs already spread over s in this call, and gains them.
func (r *Redactor) spans(s string, findings []finding, wstart, wend int, seen map[string]bool) []span {
	var out []span
	for _, f := range findings {
		secret := strings.Trim(f.secret, "\n")
		if r.allow[secret] || r.allow[strings.Trim(f.match, "\n")] {
			continue
		}
		if seen[f.rule+"\x00"+secret] {
			continue // every place of it is a span already
		}
		found := false
		for i := 0; secret != ""; {
			j := strings.Index(s[i:], secret)
			if j < 0 {
				break
			}
			out = append(out, span{i + j, i + j + len(secret), f.rule})
			i += j + len(secret)
			found = true
		}
		if !found {
			out = append(out, span{wstart, wend, f.rule})
		} else {
			seen[f.rule+"\x00"+secret] = true
		}
	}
	return out
}

// encoded finds runs of base64 (16 characters or more) whose decoded text
// holds a secret, and hides each run whole.
func (r *Redactor) encoded(s string) []span {
	var out []span
	for i := 0; i < len(s); {
		if !isB64(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isB64(s[j]) {
			j++
		}
		for k := 0; k < 2 && j < len(s) && s[j] == '='; k++ {
			j++
		}
		if j-i >= 16 {
			if rule := r.decodedSecret(s[i:j]); rule != "" {
				out = append(out, span{i, j, rule})
			}
		}
		i = j
	}
	return out
}

func isB64(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

// decodedSecret decodes a base64 run and names the rule of the first
// secret in it, or returns "".
func (r *Redactor) decodedSecret(run string) string {
	body := strings.TrimRight(run, "=")
	var dec []byte
	var err error
	if strings.ContainsAny(body, "-_") {
		dec, err = base64.RawURLEncoding.DecodeString(body)
	} else {
		dec, err = base64.RawStdEncoding.DecodeString(body)
	}
	if err != nil || !utf8.Valid(dec) {
		return ""
	}
	text := string(dec)
	lower := []byte(asciiLower(text))
	for _, d := range []*detector{r.det, r.generic} {
		if d == nil {
			continue
		}
		hit := false
		d.words.get().Walk(lower, func(int64, int64, int64) bool {
			hit = true
			return false
		})
		if !hit {
			continue
		}
		for _, f := range d.detect(text, string(lower)) {
			if !r.allow[strings.Trim(f.secret, "\n")] {
				return f.rule
			}
		}
	}
	return ""
}

// cutKeys adds the parts of private keys that a cut left unmatched: a
// header not followed by its end (the text was capped) is hidden to the
// end of the text, and an end with no header before it (the text is a
// tail) is hidden from the start of the text.
func (r *Redactor) cutKeys(s string, spans []span) []span {
	covered := func(i int) bool {
		for _, sp := range spans {
			if sp.start <= i && i < sp.end {
				return true
			}
		}
		return false
	}
	begins := r.pemBegin.FindAllStringIndex(s, -1)
	ends := r.pemEnd.FindAllStringIndex(s, -1)
	for _, b := range begins {
		if covered(b[0]) {
			continue
		}
		end := len(s)
		for _, e := range ends {
			if e[0] > b[1] {
				end = e[1]
				break
			}
		}
		spans = append(spans, span{b[0], end, "private-key"})
	}
	if len(ends) > 0 && !covered(ends[0][0]) && (len(begins) == 0 || begins[0][0] > ends[0][0]) {
		spans = append(spans, span{0, ends[0][1], "private-key"})
	}
	return spans
}

// span is a byte range of the text to replace.
type span struct {
	start, end int
	rule       string
}

// merge sorts spans and joins those that overlap: what any rule covers is
// hidden, under the first rule's name.
func merge(out []span) []span {
	slices.SortFunc(out, func(a, b span) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return b.end - a.end // the longer first
	})
	merged := out[:0]
	for _, sp := range out {
		if n := len(merged); n > 0 && sp.start < merged[n-1].end {
			merged[n-1].end = max(merged[n-1].end, sp.end)
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}
