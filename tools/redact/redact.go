// Package redact owns the secret scanner that every tool's output passes
// through before the model, a card, the chat or the audit log sees it
// (issue 16, mechanism 7). It is built on the rule set of gitleaks v8
// (about two hundred maintained rules: cloud keys, chat and forge tokens,
// private keys, generic "password = …" assignments with an entropy test).
//
// Building the detector compiles every rule's regular expression, which is
// costly, so a Redactor is built once at start (in cmd) and shared: Redact
// only reads it and is safe for concurrent use.
package redact

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/report"
)

// Redactor replaces secrets in text by "[redacted: <rule>]".
type Redactor struct {
	det   *detect.Detector
	allow map[string]bool
	// pemBegin and pemEnd find the parts of a private key block that a
	// cap or a tail cut in two, which no gitleaks rule matches: a
	// header with no end after it, or an end with no header before it.
	pemBegin, pemEnd *regexp.Regexp
}

// New compiles the gitleaks default rule set. Values in allow are let
// through even when a rule matches them (an operator's known test token, a
// public key id that looks like a secret); an empty value is an error, as
// it would name nothing.
func New(allow []string) (*Redactor, error) {
	v := viper.New() // not the package-level viper gitleaks' own helper uses
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		return nil, fmt.Errorf("read the gitleaks rule set: %w", err)
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return nil, fmt.Errorf("decode the gitleaks rule set: %w", err)
	}
	cfg, err := vc.Translate()
	if err != nil {
		return nil, fmt.Errorf("compile the gitleaks rule set: %w", err)
	}
	r := &Redactor{
		det:      detect.NewDetector(cfg),
		allow:    map[string]bool{},
		pemBegin: regexp.MustCompile(`(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`),
		pemEnd:   regexp.MustCompile(`(?i)-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`),
	}
	// Values hidden in base64 or percent-encoding are decoded once and
	// scanned again (a Kubernetes secret printed as YAML).
	r.det.MaxDecodeDepth = 1
	// Output cannot vouch for itself: a "gitleaks:allow" comment in a file
	// the model reads does not let its secret through.
	r.det.IgnoreGitleaksAllow = true
	for i, a := range allow {
		if a == "" {
			return nil, fmt.Errorf("allow entry #%d is empty; remove it or give the exact value that must pass", i+1)
		}
		r.allow[a] = true
	}
	return r, nil
}

// Rules is the number of rules the scanner applies.
func (r *Redactor) Rules() int { return len(r.det.Config.Rules) }

// Redact returns s with every secret the rules find replaced by
// "[redacted: <rule id>]", and how many values it replaced. Text with no
// secret comes back unchanged (the same string). A nil Redactor changes
// nothing.
func (r *Redactor) Redact(s string) (string, int) {
	if r == nil || s == "" {
		return s, 0
	}
	findings := r.det.DetectString(s)
	if len(findings) == 0 && !strings.Contains(s, "-----") {
		return s, 0
	}
	spans := r.spans(s, findings)
	spans = r.cutKeys(s, spans)
	if len(spans) == 0 {
		return s, 0
	}
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
	var extra []span
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
		extra = append(extra, span{b[0], end, "private-key"})
	}
	if len(ends) > 0 && !covered(ends[0][0]) && (len(begins) == 0 || begins[0][0] > ends[0][0]) {
		extra = append(extra, span{0, ends[0][1], "private-key"})
	}
	if len(extra) == 0 {
		return spans
	}
	return merge(append(spans, extra...))
}

// span is a byte range of the text to replace.
type span struct {
	start, end int
	rule       string
}

// spans turns findings into sorted, non-overlapping byte ranges. A finding
// whose secret is in the text covers every occurrence of it (so a value
// printed twice is hidden twice, and a key's name stays visible); a secret
// found only after decoding covers the encoded text, placed by the
// finding's line and columns.
func (r *Redactor) spans(s string, findings []report.Finding) []span {
	var out []span
	for _, f := range findings {
		secret := strings.Trim(f.Secret, "\n")
		if secret == "" || r.allow[secret] || r.allow[f.Match] {
			continue
		}
		if strings.Contains(s, secret) {
			for i := 0; ; {
				j := strings.Index(s[i:], secret)
				if j < 0 {
					break
				}
				out = append(out, span{i + j, i + j + len(secret), f.RuleID})
				i += j + len(secret)
			}
			continue
		}
		sp, ok := located(s, f)
		if !ok {
			// A finding that cannot be placed hides the whole text:
			// better an empty answer than a leaked secret.
			sp = span{0, len(s), f.RuleID}
		}
		out = append(out, sp)
	}
	return merge(out)
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

// located places a finding by its lines and columns, as gitleaks computes
// them: lines count from 0; on line 0 a column is the byte offset plus one,
// on a later line it is the offset from that line's newline. When the
// position does not fit the text, the whole lines are covered.
func located(s string, f report.Finding) (span, bool) {
	lineStart := func(n int) (int, bool) {
		at := 0
		for range n {
			i := strings.IndexByte(s[at:], '\n')
			if i < 0 {
				return 0, false
			}
			at += i + 1
		}
		return at, true
	}
	ls, ok1 := lineStart(f.StartLine)
	le, ok2 := lineStart(f.EndLine)
	if !ok1 || !ok2 {
		return span{}, false
	}
	// gitleaks counts a later line's columns from its newline byte.
	base := func(line, start int) int {
		if line == 0 {
			return 0
		}
		return start - 1
	}
	start := base(f.StartLine, ls) + f.StartColumn - 1
	end := base(f.EndLine, le) + f.EndColumn
	if start >= 0 && start < end && end <= len(s) {
		return span{start, end, f.RuleID}, true
	}
	// Cover the lines whole rather than let the value through.
	lineEnd := len(s)
	if i := strings.IndexByte(s[le:], '\n'); i >= 0 {
		lineEnd = le + i
	}
	if ls >= lineEnd {
		return span{}, false
	}
	return span{ls, lineEnd, f.RuleID}, true
}
