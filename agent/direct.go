package agent

import (
	"context"
	"encoding/json"

	"github.com/countersign/countersign/approval"
)

// Direct runs a direct command (!run, !sql, !http, !file) through the same
// assessment and approvals, with no model: auto → runs and replies with the
// result; block → replies why; confirm → a card, and the result is replied
// into the conversation once the call is decided. Errors are handled as in
// Handle: an error means the user could not be told.
func (a *Agent) Direct(ctx context.Context, conv approval.Conversation, user approval.User, tool string, args json.RawMessage) error {
	a.busy.add()
	defer a.busy.done()
	tc := ToolCall{ID: "direct_" + randomHex(12), Name: tool, Arguments: string(args)}
	turnID := approval.NewID()
	cs := a.admit(ctx, conv, user, tc, turnID, "", nil, nil)
	if cs.approval == nil {
		return a.replyResult(ctx, a.sink, conv, a.withWhy(cs), *cs.Result)
	}
	st := turnState{Kind: kindDirect, Requester: user, Calls: []callState{cs}}
	return a.suspend(ctx, nil, conv, turnID, st, []*approval.Approval{cs.approval})
}
