package tools_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/countersign/countersign/tools"
	"github.com/google/go-cmp/cmp"
)

// shellArgs stands in for a tool's argument struct.
type shellArgs struct {
	Command string            `json:"command"`
	Timeout int               `json:"timeout_seconds"`
	Verbose bool              `json:"verbose"`
	Headers map[string]string `json:"headers"`
	Ignored string            `json:"-"`
}

func TestDecodeArgs(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		want    shellArgs
		wantErr string // "" means success
	}{
		{"all fields", `{"command":"ls","timeout_seconds":5,"verbose":true,"headers":{"a":"b"}}`,
			shellArgs{Command: "ls", Timeout: 5, Verbose: true, Headers: map[string]string{"a": "b"}}, ""},
		{"empty is {}", ``, shellArgs{}, ""},
		{"null is {}", `null`, shellArgs{}, ""},
		{"whitespace around", " \n{\"command\":\"ls\"}\n ", shellArgs{Command: "ls"}, ""},
		{"risk_level ignored", `{"command":"ls","risk_level":"low"}`, shellArgs{Command: "ls"}, ""},
		{"double-encoded object", `"{\"command\":\"ls\"}"`, shellArgs{}, `arguments: must be a JSON object, not a string`},
		{"wrong type string for int", `{"timeout_seconds":"30"}`, shellArgs{},
			`argument "timeout_seconds": must be a whole number, not string`},
		{"fraction for int", `{"timeout_seconds":1.5}`, shellArgs{},
			`argument "timeout_seconds": must be a whole number, not number 1.5`},
		{"number for string", `{"command":42}`, shellArgs{}, `argument "command": must be a string, not number`},
		{"array for object", `{"headers":["a"]}`, shellArgs{}, `argument "headers": must be an object, not array`},
		{"nested wrong type", `{"headers":{"a":1}}`, shellArgs{}, `argument "headers": must be a string, not number`},
		{"unknown field", `{"command":"ls","cwd":"/"}`, shellArgs{},
			`argument "cwd": is not an argument of this tool (it takes: command, timeout_seconds, verbose, headers;`},
		{"unknown field besides risk_level", `{"risk_level":"low","cwd":"/"}`, shellArgs{}, `argument "cwd": is not an argument`},
		{"name in other case", `{"COMMAND":"rm -rf /"}`, shellArgs{}, `argument "COMMAND": is not an argument of this tool (it takes: command, timeout_seconds, verbose, headers; names are case-sensitive)`},
		{"name folded by unicode", `{"ſerbose":true}`, shellArgs{}, `argument "ſerbose": is not an argument`},
		{"given twice", `{"command":"ls","command":"rm -rf /"}`, shellArgs{}, `argument "command": is given twice`},
		{"given twice with risk_level", `{"risk_level":"low","command":"ls","command":"rm"}`, shellArgs{}, `argument "command": is given twice`},
		{"same field in two cases", `{"command":"ls","Command":"rm"}`, shellArgs{}, `argument "Command": is not an argument`},
		{"json- field", `{"Ignored":"x"}`, shellArgs{}, `argument "Ignored": is not an argument`},
		{"not JSON", `{command: ls}`, shellArgs{}, `arguments: not valid JSON`},
		{"cut short", `{"command":"ls"`, shellArgs{}, `arguments: not valid JSON`},
		{"array", `["ls"]`, shellArgs{}, `arguments: must be a JSON object, not an array`},
		{"number", `42`, shellArgs{}, `arguments: must be a JSON object, not a number`},
		{"bare word", `ls -l`, shellArgs{}, `arguments: must be a JSON object, not text that is not JSON`},
		{"trailing text", `{"command":"ls"} {"command":"rm"}`, shellArgs{}, `arguments: unexpected text after the JSON object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got shellArgs
			err := tools.DecodeArgs(json.RawMessage(tt.raw), &got)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("DecodeArgs: %v", err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("decoded (-want +got):\n%s", diff)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("DecodeArgs error = %v, want one containing %q", err, tt.wantErr)
			}
			var ae *tools.ArgError
			if !errors.As(err, &ae) {
				t.Errorf("error %T is not an *ArgError", err)
			}
		})
	}
}

func TestInvalidArgsResultNamesTheArgument(t *testing.T) {
	var a shellArgs
	r := tools.InvalidArgs(tools.DecodeArgs(json.RawMessage(`{"timeout_seconds":"x"}`), &a))
	js := r.JSON()
	for _, want := range []string{`"status":"error"`, `"executed":false`, `timeout_seconds`} {
		if !strings.Contains(js, want) {
			t.Errorf("%s lacks %s", js, want)
		}
	}
}

// FuzzDecodeArgs: any input decodes or gives an *ArgError; it never panics,
// and what decodes re-encodes to arguments that decode to the same value.
func FuzzDecodeArgs(f *testing.F) {
	for _, s := range []string{
		`{"command":"ls","timeout_seconds":5}`, `{"risk_level":"high","command":"x"}`,
		`"{\"command\":\"ls\"}"`, `{"command":"a","command":"b"}`, `{"headers":{"a":"b"}}`,
		`[]`, `null`, `{`, `{"ſerbose":true}`, `{"timeout_seconds":1e400}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var got shellArgs
		err := tools.DecodeArgs(raw, &got)
		if err != nil {
			var ae *tools.ArgError
			if !errors.As(err, &ae) {
				t.Fatalf("error %T %v is not an *ArgError", err, err)
			}
			if ae.Error() == "" {
				t.Fatal("empty error text")
			}
			return
		}
		again, merr := json.Marshal(got)
		if merr != nil {
			t.Fatalf("re-encode: %v", merr)
		}
		var back shellArgs
		if err := tools.DecodeArgs(again, &back); err != nil {
			t.Fatalf("re-decode of %s: %v", again, err)
		}
		if diff := cmp.Diff(got, back); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}
