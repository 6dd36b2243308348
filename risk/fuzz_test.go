package risk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
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

// linkLocalSpellings spells the link-local address 169.254.c.d (the
// metadata endpoints of AWS, GCP, Azure, ECS, OpenStack) in every form a
// resolver, an HTTP client or a wildcard-DNS service accepts.
func linkLocalSpellings(c, d byte) []string {
	ip := [4]byte{169, 254, c, d}
	n := uint32(ip[0])<<24 | uint32(ip[1])<<16 | uint32(ip[2])<<8 | uint32(ip[3])
	hex4 := fmt.Sprintf("%02x%02x:%02x%02x", ip[0], ip[1], ip[2], ip[3])
	dotted := fmt.Sprintf("%d.%d.%d.%d", ip[0], ip[1], ip[2], ip[3])
	fullWidth := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r - '0' + '０'
		}
		return '。'
	}, dotted)
	return []string{
		dotted,
		fmt.Sprint(n),
		fmt.Sprintf("0x%x", n),
		fmt.Sprintf("0X%X", n),
		fmt.Sprintf("0%o.0%o.0%o.0%o", ip[0], ip[1], ip[2], ip[3]),
		fmt.Sprintf("0x%x.0x%x.0x%x.0x%x", ip[0], ip[1], ip[2], ip[3]),
		fmt.Sprintf("%d.%d.%d", ip[0], ip[1], uint32(ip[2])<<8|uint32(ip[3])),
		fmt.Sprintf("%d.%d", ip[0], n&0xffffff),
		"[::ffff:" + dotted + "]",
		"[::ffff:" + hex4 + "]",
		"[0:0:0:0:0:ffff:" + hex4 + "]",
		"[::" + dotted + "]",
		"[64:ff9b::" + hex4 + "]",
		fmt.Sprintf("[2002:%02x%02x:%02x%02x::1]", ip[0], ip[1], ip[2], ip[3]),
		fmt.Sprintf("[2001:0:4136:e378:8000:63bf:%02x%02x:%02x%02x]", ^ip[0], ^ip[1], ^ip[2], ^ip[3]),
		"app." + dotted + ".nip.io",
		strings.ReplaceAll(dotted, ".", "-") + ".sslip.io",
		fmt.Sprintf("app-%08x.nip.io", n),
		fullWidth,
		dotted + ".",
		"%31" + dotted[1:],
		"user@" + dotted,
	}
}

func checkBlocked(t *testing.T, p *Policy, host string) {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"method": "GET", "url": "http://" + host + "/latest/meta-data/"})
	if v := p.Assess(Call{Tool: ToolHTTP, Args: args}); v.Decision != Block {
		t.Errorf("http://%s/ = %+v, want block", host, v)
	}
}

// TestLinkLocalSpellings checks every spelling of a few link-local
// addresses; FuzzLinkLocalSpellings tries the rest.
func TestLinkLocalSpellings(t *testing.T) {
	p := mustPolicy(t, Config{})
	for _, a := range [][2]byte{{169, 254}, {170, 2}, {0, 0}, {255, 255}, {1, 10}} {
		for _, host := range linkLocalSpellings(a[0], a[1]) {
			checkBlocked(t, p, host)
		}
	}
}

// FuzzLinkLocalSpellings: every spelling of every link-local address is
// blocked.
func FuzzLinkLocalSpellings(f *testing.F) {
	f.Add(byte(169), byte(254), uint8(0))
	f.Add(byte(170), byte(2), uint8(9))
	f.Add(byte(0), byte(0), uint8(17))
	p := mustPolicy(f, Config{})
	f.Fuzz(func(t *testing.T, c, d byte, form uint8) {
		hosts := linkLocalSpellings(c, d)
		checkBlocked(t, p, hosts[int(form)%len(hosts)])
	})
}
