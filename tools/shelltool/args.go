package shelltool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// args are the arguments of execute_command (SPEC §1). RiskLevel is the
// LLM's own judgement: the assessor reads it, the tool accepts and ignores it.
type args struct {
	Command        string          `json:"command"`
	Workdir        string          `json:"workdir"`
	TimeoutSeconds *float64        `json:"timeout_seconds"`
	RiskLevel      json.RawMessage `json:"risk_level"`
}

// decodeArgs reads one JSON object into v, refusing unknown fields, wrong
// types and trailing data, with errors that name the argument.
func decodeArgs(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return errors.New("the arguments are missing: expected a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return argError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("the arguments must be one JSON object, with nothing after it")
	}
	return nil
}

func argError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return fmt.Errorf("the arguments must be a JSON object, not %s", te.Value)
		}
		return fmt.Errorf("argument %q must be %s, not %s", te.Field, kindName(te.Type), te.Value)
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Errorf("unknown argument %s", name)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("the arguments are not valid JSON: %w", err)
	}
	return fmt.Errorf("reading the arguments: %w", err)
}

func kindName(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "another type"
}
