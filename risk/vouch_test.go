package risk

import (
	"encoding/json"
	"testing"
)

// TestTaint: after the turn read a public host (Call.Outside), the
// assistant's low counts as absent and the card says why (mechanism 8);
// plain reads still run; risk.taint: false turns it off.
func TestTaint(t *testing.T) {
	on := mustPolicy(t, Config{})
	off := false
	offPolicy := mustPolicy(t, Config{Taint: &off})
	const why = "read an HTTP response from pastebin.com, a public host"
	cases := []struct {
		name    string
		p       *Policy
		tool    string
		args    string
		outside string
		want    want
	}{
		{"low write after a public read", on, ToolCommand, `{"command":"touch ./marker","risk_level":"low"}`, "pastebin.com",
			llm(with(deflt, why), Low)},
		{"the card says the low does not count", on, ToolCommand, `{"command":"touch ./marker","risk_level":"low"}`, "pastebin.com",
			llm(with(deflt, "low risk_level does not count"), Low)},
		{"low sql write after a public read", on, ToolSQL, `{"sql":"UPDATE orders SET paid = 1 WHERE id = 4","risk_level":"low"}`, "pastebin.com",
			llm(with(deflt, why), Low)},
		{"plain reads still run", on, ToolCommand, `{"command":"df -h","risk_level":"low"}`, "pastebin.com", llm(autoWL, Low)},
		{"high is still high", on, ToolCommand, `{"command":"touch ./marker","risk_level":"high"}`, "pastebin.com",
			llm(want{decision: Confirm, risk: High, rule: RuleLLM}, High)},
		{"danger is still danger", on, ToolCommand, `{"command":"rm -rf ./data","risk_level":"low"}`, "pastebin.com", llm(danger, Low)},
		{"without an outside read low is trusted", on, ToolCommand, `{"command":"touch ./marker","risk_level":"low"}`, "",
			llm(want{decision: Auto, rule: RuleLLM}, Low)},
		{"taint off", offPolicy, ToolCommand, `{"command":"touch ./marker","risk_level":"low"}`, "pastebin.com",
			llm(want{decision: Auto, rule: RuleLLM}, Low)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.p.Assess(Call{Tool: tc.tool, Args: json.RawMessage(tc.args), Outside: tc.outside})
			checkVerdict(t, v, tc.want)
		})
	}
}

// TestSQLBuiltAtRunTime: the assistant cannot vouch for SQL nobody can
// read (mechanism 2): its low counts as absent, and the card says the SQL
// is built at run time.
func TestSQLBuiltAtRunTime(t *testing.T) {
	p := mustPolicy(t, Config{})
	runCases(t, p, []policyCase{
		{name: "execute with low", tool: ToolSQL, args: `{"sql":"EXECUTE s","risk_level":"low"}`, want: llm(with(deflt, "built at run time"), Low)},
		{name: "execute immediate of a variable with low", tool: ToolSQL, args: `{"sql":"EXECUTE IMMEDIATE @q","risk_level":"low"}`,
			want: llm(with(deflt, "built at run time"), Low)},
		{name: "execute without a level", tool: ToolSQL, args: `{"sql":"EXECUTE s"}`, want: with(deflt, "built at run time")},
		{name: "prepare from a variable", tool: ToolSQL, args: `{"sql":"PREPARE s FROM @q","risk_level":"low"}`, want: llm(with(danger, "built at run time"), Low)},
		{name: "call with low", tool: ToolSQL, args: `{"sql":"CALL report_daily()","risk_level":"low"}`, want: llm(with(deflt, "stored routine"), Low)},
		{name: "a plain update with low is trusted", tool: ToolSQL, args: `{"sql":"UPDATE t SET a = 1 WHERE id = 3","risk_level":"low"}`,
			want: llm(want{decision: Auto, rule: RuleLLM}, Low)},
	})
}
