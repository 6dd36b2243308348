package agent

import (
	"encoding/json"

	"github.com/countersign/countersign/tools"
)

// Text from outside lowers trust (issue 16, mechanism 8): once a turn has
// read an HTTP response from a public host (tools.Result.Outside), every
// later call of the turn is assessed with risk.Call.Outside set, and the
// policy counts the model's low risk_level as absent (risk.taint).

// turnOutside returns the public host whose response the turn in msgs has
// read, or "". The turn is what follows the last user message; its tool
// results are read back from their JSON, so a turn resumed after an
// approval, on any replica, is still known to have read from outside.
func turnOutside(msgs []Message) string {
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role != RoleUser; i-- {
		if msgs[i].Role != RoleTool {
			continue
		}
		var r tools.Result
		if json.Unmarshal([]byte(msgs[i].Content), &r) == nil && r.Outside != "" {
			return r.Outside
		}
	}
	return ""
}

// outsideOf returns the public host a call's result came from, or "".
func outsideOf(cs callState) string {
	if cs.Result == nil {
		return ""
	}
	return cs.Result.Outside
}
