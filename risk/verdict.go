// Package risk judges tool calls before they run. It owns the policy of
// SPEC §2: absurd calls are blocked, read-only calls run at once, and the rest
// wait for a person. A Policy is built and validated once from Config; after
// that Assess is pure and safe for concurrent use.
package risk

import "encoding/json"

// Decision is what happens to a tool call.
type Decision string

// The three decisions. The zero value is not a decision; code that meets it
// treats it as Confirm.
const (
	Auto    Decision = "auto"
	Confirm Decision = "confirm"
	Block   Decision = "block"
)

// Level is a risk level, both the one the assessor sets and the one the LLM
// may suggest through the risk_level argument.
type Level string

// The risk levels.
const (
	Low    Level = "low"
	Medium Level = "medium"
	High   Level = "high"
)

// Rule names the rule of SPEC §2 that decided.
type Rule string

// The rules, in the order they are tried.
const (
	RuleAbsurd        Rule = "absurd"
	RulePreauthorized Rule = "preauthorized"
	RuleMode          Rule = "mode"
	RuleDanger        Rule = "danger"
	RuleLLM           Rule = "llm"
	RuleWhitelist     Rule = "whitelist"
	RuleDefault       Rule = "default"
)

// Mode sets how far the LLM's own risk_level is trusted.
type Mode string

// The modes. Smart is the default.
const (
	Strict  Mode = "strict"
	Guarded Mode = "guarded"
	Smart   Mode = "smart"
)

// Tool names the policy knows. Any other tool is judged by the generic rules
// and confirmed unless pre-authorised or explicitly marked low in smart mode.
const (
	ToolSQL     = "execute_sql"
	ToolCommand = "execute_command"
	ToolFile    = "file_operations"
	ToolHTTP    = "http_request"
)

// Call is one tool call to judge.
type Call struct {
	// Tool is the tool's name: execute_command, or one added later.
	Tool string `json:"tool"`
	// Args are the call's JSON arguments, risk_level included, as the LLM
	// gave them.
	Args json.RawMessage `json:"args"`
	// Channel selects per-channel overrides; empty means none.
	Channel string `json:"channel,omitempty"`
	// Mode, when set, overrides every configured mode for this call.
	Mode Mode `json:"mode,omitempty"`
	// Outside, when set, names the public host whose HTTP response the
	// turn has read before this call: the assistant's low risk_level then
	// counts as absent (Config.Taint).
	Outside string `json:"outside,omitempty"`
}

// Verdict is the judgement of one call. Reasons are short sentences that an
// approval card shows as they are.
type Verdict struct {
	// Decision is what happens to the call: run, wait for a person, refuse.
	Decision Decision `json:"decision"`
	// Risk is the assessor's estimate: low when the call runs at once, high
	// for an absurd or dangerous call, otherwise the LLM's level or medium.
	Risk Level `json:"risk"`
	// Rule is the rule of SPEC §2 that decided.
	Rule Rule `json:"rule"`
	// Reasons say why, in the order the rules found them; never empty.
	Reasons []string `json:"reasons"`
	// LLMLevel is the risk_level the LLM gave, when it gave a valid one.
	LLMLevel Level `json:"llm_level,omitempty"`
}
