package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// ArgError is a problem with one argument of a call, in words the LLM can
// act on: `argument "sql": must be a string, not a number`. Arg is empty when
// the problem is with the arguments as a whole (not JSON, not an object).
type ArgError struct {
	Arg     string
	Problem string
}

// Error names the argument and its problem.
func (e *ArgError) Error() string {
	if e.Arg == "" {
		return "arguments: " + e.Problem
	}
	return fmt.Sprintf("argument %q: %s", e.Arg, e.Problem)
}

// MissingArg is the error for a required argument that is absent or empty.
func MissingArg(name string) error {
	return &ArgError{Arg: name, Problem: "is required"}
}

// DecodeArgs decodes a call's JSON arguments into dst, a pointer to the
// tool's argument struct (flat: embedded structs are not looked into).
// Empty arguments and null count as {}. Fields unknown to dst are an error, except risk_level, which the registry adds to
// every schema and the assessor reads. Names must match exactly and appear
// once, so the assessor, the card and the tool all read the same values.
// Arguments double-encoded as a JSON string are refused for the same reason.
// Every problem is returned as an *ArgError naming the argument; DecodeArgs
// never panics on any input.
func DecodeArgs(raw json.RawMessage, dst any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if raw[0] != '{' {
		return &ArgError{Problem: "must be a JSON object, not " + jsonKind(raw[0])}
	}
	if err := decodeStrict(raw, dst); err != nil {
		return err
	}
	return checkKeys(raw, dst)
}

// decodeStrict decodes one JSON object and nothing after it; unknown names
// are left to checkKeys.
func decodeStrict(raw []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(dst); err != nil {
		return argError(err, dst)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &ArgError{Problem: "unexpected text after the JSON object"}
	}
	return nil
}

// argError turns an encoding/json error into an *ArgError.
func argError(err error, dst any) error {
	var (
		typeErr   *json.UnmarshalTypeError
		syntaxErr *json.SyntaxError
	)
	switch {
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return &ArgError{Problem: "must be a JSON object, not " + typeErr.Value}
		}
		return &ArgError{Arg: typeErr.Field, Problem: fmt.Sprintf("must be %s, not %s", jsonType(typeErr.Type), typeErr.Value)}
	case errors.As(err, &syntaxErr):
		return &ArgError{Problem: fmt.Sprintf("not valid JSON (at byte %d: %s)", syntaxErr.Offset, strings.TrimPrefix(syntaxErr.Error(), "json: "))}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return &ArgError{Problem: "not valid JSON (cut short)"}
	}
	return &ArgError{Problem: strings.TrimPrefix(err.Error(), "json: ")}
}

// knownArgs lists the JSON names of dst's fields: " (it takes: a, b; ...)".
func knownArgs(dst any) string {
	names := jsonNames(reflect.TypeOf(dst))
	if len(names) == 0 {
		return ""
	}
	return " (it takes: " + strings.Join(names, ", ") + "; names are case-sensitive)"
}

// jsonNames lists the JSON names of the fields of the struct t points to.
func jsonNames(t reflect.Type) []string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		names = append(names, name)
	}
	return names
}

// jsonType names the JSON type a Go type expects, with an article.
func jsonType(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return jsonType(t.Elem())
	}
	return "another type"
}

// jsonKind names the JSON value that starts with c.
func jsonKind(c byte) string {
	switch {
	case c == '[':
		return "an array"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == '-' || (c >= '0' && c <= '9'):
		return "a number"
	case c == '"':
		return "a string"
	}
	return "text that is not JSON"
}

// checkKeys refuses a top-level key that appears twice, or that is not
// exactly (case included) a field name of dst. encoding/json keeps the last
// of two values and matches names without regard to case ("SQL", even "ſql"
// fill the field "sql"); a reader that took the first value or the exact
// name would judge one operation while the tool ran another.
func checkKeys(raw []byte, dst any) error {
	names := fieldNames(dst)
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return &ArgError{Problem: "must be a JSON object"}
	}
	seen := make(map[string]struct{}, 4)
	var skip json.RawMessage
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return &ArgError{Problem: "not valid JSON"}
		}
		key, _ := t.(string)
		if _, dup := seen[key]; dup {
			return &ArgError{Arg: key, Problem: "is given twice"}
		}
		seen[key] = struct{}{}
		if _, ok := names[key]; !ok && names != nil && key != RiskLevelArg {
			return &ArgError{Arg: key, Problem: "is not an argument of this tool" + knownArgs(dst)}
		}
		if err := dec.Decode(&skip); err != nil {
			return &ArgError{Arg: key, Problem: "not valid JSON"}
		}
	}
	return nil
}

// fieldNames is the set of JSON names of dst's fields, cached per type.
func fieldNames(dst any) map[string]struct{} {
	t := reflect.TypeOf(dst)
	if cached, ok := fieldNameCache.Load(t); ok {
		return cached.(map[string]struct{})
	}
	var names map[string]struct{} // nil: dst is not a struct; any name goes
	for _, n := range jsonNames(t) {
		if names == nil {
			names = map[string]struct{}{}
		}
		names[n] = struct{}{}
	}
	fieldNameCache.Store(t, names)
	return names
}

var fieldNameCache sync.Map // reflect.Type → map[string]struct{}

// ArgLines writes the arguments of raw not named in shown (nor
// risk_level) as lines "(name: value)" in name order: the parts of a call
// that are not its main text, so that nothing that changes what runs is
// left off the card.
func ArgLines(raw json.RawMessage, shown ...string) string {
	var args map[string]any
	if err := decodeObject(raw, &args); err != nil {
		return ""
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		if k != RiskLevelArg && !slices.Contains(shown, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "\n(%s: %v)", k, args[k])
	}
	return b.String()
}

// decodeObject decodes a JSON object keeping numbers as written.
func decodeObject(raw json.RawMessage, into *map[string]any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(into); err != nil {
		return err
	}
	if *into == nil {
		return fmt.Errorf("not a JSON object")
	}
	return nil
}
