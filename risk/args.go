package risk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// args are the top-level fields of a call's arguments, in the order given.
//
// Keys are looked up case-insensitively and a key given twice (in any case)
// makes the arguments malformed: encoding/json fills a struct field from any
// key that matches it case-insensitively, the last one winning, so
// {"command":"ls","COMMAND":"rm -rf /"} would run what the assessor did not
// read unless such arguments are refused.
type args struct {
	fields []field
}

type field struct {
	key string
	raw []byte
}

// errNotObject is returned for arguments that are not one JSON object.
var errNotObject = errors.New("the arguments are not a JSON object")

// parseArgs splits raw into its top-level fields. Empty and null arguments are
// an empty object.
func parseArgs(raw []byte) (args, error) {
	raw = bytes.Trim(raw, " \t\r\n") // JSON white space only
	if len(raw) == 0 || string(raw) == "null" {
		return args{}, nil
	}
	if raw[0] != '{' || !json.Valid(raw) {
		return args{}, errNotObject
	}
	var a args
	i := skipSpace(raw, 1)
	for i < len(raw) && raw[i] != '}' {
		if raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
		end := stringEnd(raw, i)
		key, err := decodeString(raw[i:end])
		if err != nil {
			return args{}, errNotObject
		}
		i = skipSpace(raw, end)
		i = skipSpace(raw, i+1) // the colon
		vend := valueEnd(raw, i)
		for _, f := range a.fields {
			if strings.EqualFold(f.key, key) {
				return args{}, fmt.Errorf("argument %q is given more than once", key)
			}
		}
		a.fields = append(a.fields, field{key: key, raw: raw[i:vend]})
		i = skipSpace(raw, vend)
	}
	return a, nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the JSON string starting at b[i].
// b is valid JSON.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// valueEnd returns the index just past the JSON value starting at b[i].
// b is valid JSON.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' &&
			b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
			j++
		}
		return j
	}
}

// decodeString decodes one JSON string exactly as encoding/json does
// (escapes, and invalid UTF-8 replaced), with a fast path for plain text.
func decodeString(raw []byte) (string, error) {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		body := raw[1 : len(raw)-1]
		if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
			return string(body), nil
		}
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// get returns the raw value of key, matched case-insensitively.
func (a args) get(key string) ([]byte, bool) {
	for _, f := range a.fields {
		if strings.EqualFold(f.key, key) {
			return f.raw, true
		}
	}
	return nil, false
}

// str returns the string argument key. A missing or null key is ok=false; a
// value of another type is an error that names the argument.
func (a args) str(key string) (s string, ok bool, err error) {
	raw, found := a.get(key)
	if !found || string(raw) == "null" {
		return "", false, nil
	}
	if raw[0] != '"' {
		return "", false, fmt.Errorf("argument %q is not a string", key)
	}
	s, err = decodeString(raw)
	if err != nil {
		return "", false, fmt.Errorf("argument %q is not a string", key)
	}
	return s, true, nil
}

// requiredStr is str for an argument the call cannot do without.
func (a args) requiredStr(key string) (string, error) {
	s, ok, err := a.str(key)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("argument %q is missing", key)
	}
	return s, nil
}

// requiredText is requiredStr for an argument that must hold more than
// white space: the command or statement to judge.
func (a args) requiredText(key string) (string, error) {
	s, err := a.requiredStr(key)
	if err == nil && strings.TrimSpace(s) == "" {
		err = fmt.Errorf("argument %q is empty", key)
	}
	return s, err
}

// boolean returns the optional boolean argument key.
func (a args) boolean(key string) (bool, error) {
	raw, found := a.get(key)
	if !found || string(raw) == "null" {
		return false, nil
	}
	switch string(raw) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("argument %q is not true or false", key)
}

// kind checks that the optional argument key, when present and not null,
// starts like a JSON value of the wanted kind: '"' string, '{' object, '0'
// number.
func (a args) kind(key string, want byte) error {
	raw, found := a.get(key)
	if !found || string(raw) == "null" {
		return nil
	}
	c := raw[0]
	switch want {
	case '0':
		if c == '-' || (c >= '0' && c <= '9') {
			return nil
		}
		return fmt.Errorf("argument %q is not a number", key)
	case '{':
		if c == '{' {
			return nil
		}
		return fmt.Errorf("argument %q is not an object", key)
	default:
		if c == '"' {
			return nil
		}
		return fmt.Errorf("argument %q is not a string", key)
	}
}

// riskLevelKey is the argument through which the LLM rates its own call.
const riskLevelKey = "risk_level"

// riskLevel reads risk_level: the level when it is valid, else a note that
// says why the value was ignored (empty when there was none).
func (a args) riskLevel() (Level, string) {
	raw, found := a.get(riskLevelKey)
	if !found || string(raw) == "null" {
		return "", ""
	}
	s, err := decodeString(raw)
	if raw[0] != '"' || err != nil {
		return "", fmt.Sprintf("risk_level %s is not low, medium or high; it was ignored", clip(string(raw)))
	}
	switch l := Level(strings.ToLower(strings.TrimSpace(s))); l {
	case Low, Medium, High:
		return l, ""
	}
	return "", fmt.Sprintf("risk_level %q is not low, medium or high; it was ignored", clip(s))
}

// compactWithout returns the arguments as compact JSON without risk_level:
// the operation text of a tool the policy has no rules for.
func (a args) compactWithout(skip string) string {
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	for _, f := range a.fields {
		if strings.EqualFold(f.key, skip) {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		k, _ := json.Marshal(f.key)
		b.Write(k)
		b.WriteByte(':')
		if err := json.Compact(&b, f.raw); err != nil {
			b.Write(f.raw)
		}
	}
	b.WriteByte('}')
	return b.String()
}

// clip shortens s for a reason shown on a card.
func clip(s string) string {
	const max = 60
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
