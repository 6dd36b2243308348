package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/countersign/countersign/tools"
)

// checkArgs checks the arguments the model wrote against the tool's JSON
// schema before anything judges or runs them: they must be one JSON object,
// every required argument must be there, and every argument the schema
// types must have that type. It checks no more of JSON Schema than that
// (enums and formats are the tool's business). The error names the problem
// in words the model can act on. Empty arguments mean {}.
func checkArgs(raw string, schema json.RawMessage) (json.RawMessage, error) {
	text := strings.TrimSpace(raw)
	if text == "" {
		text = "{}"
	}
	if !json.Valid([]byte(text)) {
		var v any
		err := json.Unmarshal([]byte(text), &v)
		return nil, fmt.Errorf("the arguments are not valid JSON (%v); send one JSON object", err)
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, fmt.Errorf("the arguments must be one JSON object, not %s", jsonKind([]byte(text)))
	}

	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		// The registry checked every schema; one it cannot read here
		// only loses the type checks, the tool still checks its input.
		return json.RawMessage(text), nil
	}
	for _, name := range s.Required {
		if _, ok := obj[name]; !ok {
			return nil, fmt.Errorf("missing required argument %q", name)
		}
	}
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p, ok := s.Properties[name]
		if !ok {
			continue
		}
		want := schemaTypes(p.Type)
		if len(want) == 0 {
			continue
		}
		got := valueType(obj[name])
		if !slices.ContainsFunc(want, func(w string) bool { return typeFits(w, got, obj[name]) }) {
			return nil, fmt.Errorf("argument %q must be %s, not %s", name, strings.Join(want, " or "), got)
		}
	}
	return json.RawMessage(text), nil
}

// schemaTypes reads a schema "type", a string or a list of strings.
func schemaTypes(t any) []string {
	switch t := t.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// valueType names the JSON type of a decoded value.
func valueType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "unknown"
}

// typeFits reports whether a value of type got fits schema type want.
func typeFits(want, got string, v any) bool {
	switch want {
	case "string":
		return got == "a string"
	case "boolean":
		return got == "a boolean"
	case "number":
		return got == "a number"
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		f, err := n.Float64()
		return err == nil && f == math.Trunc(f)
	case "array":
		return got == "an array"
	case "object":
		return got == "an object"
	case "null":
		return got == "null"
	}
	return true // a type this check does not know: leave it to the tool
}

func jsonKind(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '{':
		return "several values"
	}
	return "a number"
}

// operationCap caps the operation text the audit log and the log keep.
const operationCap = 1000

// operation is the text of a call for the audit log and the log, as the
// tool describes it (secrets masked), capped at operationCap bytes.
func (a *Agent) operation(tool string, args json.RawMessage) string {
	op := a.tools.Operation(tool, args).Text
	if shown, cut := tools.CapText(op, operationCap); cut {
		op = shown + "…"
	}
	return op
}
