package agent

import (
	"encoding/json"

	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
)

// A call the kernel's fence stopped gets a card the next time (issue 25,
// mechanism 3): once a call that ran without a card came back with
// tools.Result.Fence set (the fence refused a write, the network, a
// set-user-ID gain), the same call (tool and operation text) asked for
// again in that turn is not run on its own again: it waits for a person,
// who may approve it to run unfenced. Like turnOutside, the turn is read
// back from its messages, so a turn resumed on any replica still knows.

// fencedCalls are the calls of a turn the fence stopped, by fencedKey.
type fencedCalls map[string]bool

func fencedKey(tool, operation string) string { return tool + "\x00" + operation }

// turnFenced returns the calls of the turn in msgs (what follows the last
// user message) whose results say the fence stopped them; operation is
// the agent's operation text of a call.
func (a *Agent) turnFenced(msgs []Message) fencedCalls {
	stopped := map[string]bool{} // tool call ids
	var calls []ToolCall
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role != RoleUser; i-- {
		switch msgs[i].Role {
		case RoleTool:
			var r tools.Result
			if json.Unmarshal([]byte(msgs[i].Content), &r) == nil && r.Fence != "" {
				stopped[msgs[i].ToolCallID] = true
			}
		case RoleAssistant:
			calls = append(calls, msgs[i].ToolCalls...)
		}
	}
	out := fencedCalls{}
	for _, c := range calls {
		if stopped[c.ID] {
			out[fencedKey(c.Name, a.operation(c.Name, json.RawMessage(c.Arguments)))] = true
		}
	}
	return out
}

// add records a call of this round whose result says the fence stopped it.
func (f fencedCalls) add(a *Agent, cs callState) {
	if f != nil && cs.Result != nil && cs.Result.Fence != "" {
		f[fencedKey(cs.Tool, a.operation(cs.Tool, cs.Args))] = true
	}
}

// refenced turns an auto verdict for a call the fence stopped earlier in
// the turn into a card.
func (a *Agent) refenced(f fencedCalls, tool string, args json.RawMessage, v risk.Verdict) risk.Verdict {
	if v.Decision != risk.Auto || !f[fencedKey(tool, a.operation(tool, args))] {
		return v
	}
	// The reasons it would have run without a card no longer hold.
	v.Decision, v.Risk, v.Rule = risk.Confirm, risk.Medium, risk.RuleDefault
	v.Reasons = []string{"the kernel's fence stopped this same call when it ran without a card earlier in this turn; it runs only with a person's approval"}
	return v
}

// unfenced makes an auto call of a tool this host cannot fence a card:
// what the fence would have bounded, a person approves instead. A call
// judged read-only is no exception: the fence is what holds a wrong
// judgement to no harm. A call on the model's low alone is also one when
// this host cannot keep it off the network.
func (a *Agent) unfenced(tool string, v risk.Verdict) risk.Verdict {
	why := a.cfg.Unfenced[tool]
	if why == "" && v.Rule == risk.RuleLLM {
		why = a.cfg.NotOffline[tool]
	}
	if v.Decision != risk.Auto || why == "" {
		return v
	}
	v.Decision, v.Rule = risk.Confirm, risk.RuleDefault
	v.Reasons = append(v.Reasons[:len(v.Reasons):len(v.Reasons)], why)
	return v
}
