package discord

import (
	"strings"

	"github.com/countersign/countersign/adapters"
)

// A decision that needs a reason (a rule's reason_required, issue 19):
// its button carries a custom_id of its own, which opens a dialog whose
// reason is required; the dialog's submission is the decision. Cancel
// without a required reason keeps its optional dialog (reasonModal).
const (
	idApproveReason = "cs:A:" // an Approve button whose approval needs a reason
	idCancelReason  = "cs:C:" // a Cancel button whose cancel needs a reason
	idReasonApprove = "cs:R:" // the dialog of an approval with its reason
)

// reasonButton returns the custom_id of button b when its decision needs a
// reason, or id unchanged.
func reasonButton(b adapters.Button, id string) string {
	switch {
	case !b.Reason || b.Stop:
		return id
	case b.Approve:
		return idApproveReason + b.Value
	}
	return idCancelReason + b.Value
}

// isReasonButton reports whether a click's custom_id opens a required
// reason dialog.
func isReasonButton(customID string) bool {
	return strings.HasPrefix(customID, idApproveReason) || strings.HasPrefix(customID, idCancelReason)
}

// requiredReasonModal is the dialog of a decision that needs a reason.
func requiredReasonModal(customID string) map[string]any {
	yes := true
	if id, ok := strings.CutPrefix(customID, idApproveReason); ok {
		return map[string]any{
			"custom_id": idReasonApprove + id,
			"title":     "Approve this operation?",
			"components": []component{{Type: componentRow, Components: []component{{
				Type: componentTextInput, CustomID: reasonKey, Style: styleParagraph,
				Label: "Why? (required)", Required: &yes, MaxLength: 500,
			}}}},
		}
	}
	m := reasonModal(strings.TrimPrefix(customID, idCancelReason))
	m["components"] = []component{{Type: componentRow, Components: []component{{
		Type: componentTextInput, CustomID: reasonKey, Style: styleParagraph,
		Label: "Why? (required)", Required: &yes, MaxLength: 500,
	}}}}
	return m
}

// reasonDecision reads the decision of a submitted reason dialog.
func reasonDecision(customID, reason, ref string) *adapters.Decision {
	if id, ok := strings.CutPrefix(customID, idReasonApprove); ok {
		return &adapters.Decision{ApprovalID: id, Approve: true, Reason: reason, Ref: ref}
	}
	return &adapters.Decision{ApprovalID: strings.TrimPrefix(customID, idReason), Reason: reason, Ref: ref}
}
