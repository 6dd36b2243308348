package risk

import "testing"

// TestBuiltAtRunTime: a command name or verb the assessor cannot read (a
// variable, a script-defined function or alias, "$@") makes the model's
// low count as absent: the call is confirmed, and the card says why
// (issue 16). A literal look stays auto with or without the model.
func TestBuiltAtRunTime(t *testing.T) {
	p := mustPolicy(t, Config{})
	unvouched := want{decision: Confirm, risk: Medium, rule: RuleDefault, llm: Low}
	runCases(t, p, []policyCase{
		{name: "verb from a variable", tool: ToolCommand, args: `{"command":"kubectl $verb pods","risk_level":"low"}`, want: with(unvouched, "built at run time")},
		{name: "verb of a verb row from a variable", tool: ToolCommand, args: `{"command":"ceph osd $v 3","risk_level":"low"}`, want: with(unvouched, "built at run time")},
		{name: "name from a variable", tool: ToolCommand, args: `{"command":"k=kubectl; $k get pods","risk_level":"low"}`, want: with(unvouched, "built at run time")},
		{name: "function call", tool: ToolCommand, args: `{"command":"f() { ls; }; f","risk_level":"low"}`, want: with(unvouched, "function defined in the script")},
		{name: "alias call", tool: ToolCommand, args: `{"command":"alias k=kubectl; k get pods","risk_level":"low"}`, want: with(unvouched, "alias defined in the script")},
		{name: "the card says the assistant cannot vouch", tool: ToolCommand, args: `{"command":"f() { ls; }; f","risk_level":"low"}`, want: with(unvouched, "cannot vouch")},
		{name: "without the model: confirmed by default", tool: ToolCommand, args: `{"command":"f() { ls; }; f"}`, want: with(deflt, "function defined")},
		{name: "a literal look stays auto", tool: ToolCommand, args: `{"command":"kubectl get pods","risk_level":"low"}`, want: llm(want{decision: Auto, risk: Low, rule: RuleLLM}, Low)},
		{name: "a literal unknown is still lowered in smart mode", tool: ToolCommand, args: `{"command":"./deploy.sh status","risk_level":"low"}`, want: llm(want{decision: Auto, risk: Low, rule: RuleLLM}, Low)},
		{name: "absurd through a function is blocked", tool: ToolCommand, args: `{"command":"f() { \"$@\"; }; f rm -rf /","risk_level":"low"}`, want: llm(blockAbs, Low)},
		{name: "absurd through appends is blocked", tool: ToolCommand, args: `{"command":"c=r; c+=m; $c -rf /","risk_level":"low"}`, want: llm(blockAbs, Low)},
	})
}
