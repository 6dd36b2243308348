package risk

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzParseArgs checks the argument scanner against encoding/json: every
// field it returns is the value encoding/json sees under that key, and it
// accepts exactly the JSON objects encoding/json accepts.
func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{`{}`, `{"command":"ls"}`, `{"a":{"b":[1,"}"]},"c":null}`, `{"k\"ey":"v\\"}`,
		`{"command":"ls","COMMAND":"rm"}`, ` { "a" : 1 , "b" : [ ] } `, `[1]`, `{"a":"\u00e9"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, err := parseArgs(raw)
		var m map[string]json.RawMessage
		jerr := json.Unmarshal(raw, &m)
		trimmed := bytes.Trim(raw, " \t\r\n")
		if len(trimmed) == 0 || string(trimmed) == "null" {
			if err != nil || len(a.fields) != 0 {
				t.Fatalf("empty arguments: %v %v", a, err)
			}
			return
		}
		if err == errNotObject {
			if jerr == nil {
				t.Fatalf("parseArgs refused %q, encoding/json read it", raw)
			}
			return
		}
		if jerr != nil {
			t.Fatalf("parseArgs read %q, encoding/json refused it: %v", raw, jerr)
		}
		if err != nil {
			return // a duplicate key
		}
		if len(m) != len(a.fields) {
			t.Fatalf("%q: %d fields, encoding/json has %d", raw, len(a.fields), len(m))
		}
		for _, fl := range a.fields {
			if !bytes.Equal(m[fl.key], fl.raw) {
				t.Fatalf("%q: field %q = %q, encoding/json has %q", raw, fl.key, fl.raw, m[fl.key])
			}
		}
	})
}

// FuzzAssess checks that Assess never panics, always gives a complete
// verdict, and only the rules that may run or block a call do so.
func FuzzAssess(f *testing.F) {
	tools := []string{ToolCommand, ToolSQL, ToolFile, ToolHTTP, "other"}
	seeds := []struct {
		tool int
		args string
	}{
		{0, `{"command":"ls -la"}`}, {0, `{"command":"ls; rm -rf /","risk_level":"low"}`},
		{1, `{"sql":"SELECT 1"}`}, {1, `{"sql":"DROP TABLE t"}`},
		{2, `{"operation":"read","path":"../x"}`}, {2, `{"operation":"delete","path":"a","recursive":true}`},
		{3, `{"url":"http://0xa9fea9fe/"}`}, {3, `{"method":"POST","url":"https://example.com"}`},
		{4, `{"risk_level":"LOW"}`},
	}
	for _, s := range seeds {
		f.Add(uint8(s.tool), []byte(s.args), "")
	}
	f.Add(uint8(0), []byte(`{"command":"ls"}`), "strict")
	p := mustPolicy(f, Config{})
	f.Fuzz(func(t *testing.T, tool uint8, args []byte, mode string) {
		v := p.Assess(Call{Tool: tools[int(tool)%len(tools)], Args: args, Mode: Mode(mode)})
		if v.Decision == "" || v.Risk == "" || v.Rule == "" || len(v.Reasons) == 0 {
			t.Fatalf("incomplete verdict %+v", v)
		}
		switch v.Decision {
		case Auto:
			if v.Rule != RulePreauthorized && v.Rule != RuleLLM && v.Rule != RuleWhitelist || v.Risk != Low {
				t.Fatalf("auto from %s at %s", v.Rule, v.Risk)
			}
		case Block:
			if v.Rule != RuleAbsurd || v.Risk != High {
				t.Fatalf("block from %s at %s", v.Rule, v.Risk)
			}
		case Confirm:
			if v.Rule == RuleAbsurd || v.Rule == RulePreauthorized || v.Rule == RuleWhitelist {
				t.Fatalf("confirm from %s", v.Rule)
			}
		default:
			t.Fatalf("decision %q", v.Decision)
		}
	})
}
