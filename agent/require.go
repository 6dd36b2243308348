package agent

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/rules"
	"github.com/countersign/countersign/risk"
)

// requirement resolves what a call that waits for a person needs, from
// the call's facts (tool, channel, the policy's verdict, its SQL statement
// kinds and command names).
func (a *Agent) requirement(conv approval.Conversation, tool string, args json.RawMessage, v risk.Verdict) rules.Requirement {
	if a.require == nil {
		return rules.Requirement{Need: 1}
	}
	req := a.require(rules.Facts{
		Tool: tool, Platform: conv.Platform, Channel: conv.Channel, Verdict: v,
		Call: a.policy.Facts(risk.Call{Tool: tool, Args: args, Channel: conv.Channel}),
	})
	req.Need = max(req.Need, 1)
	return req
}

// needs is what the audit record of a card adds about its requirement:
// "; rule prod-ddl: 2 of group:dba".
func needs(req rules.Requirement) string {
	if req.Rule == "" && req.Need <= 1 && len(req.Approvers) == 0 {
		return ""
	}
	s := "; "
	if req.Rule != "" {
		s += "rule " + req.Rule + ": "
	}
	who := "anyone"
	if len(req.Approvers) > 0 {
		who = strings.Join(req.Approvers, ", ")
	}
	return s + strconv.Itoa(req.Need) + " of " + who
}
