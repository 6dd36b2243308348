package discord

import (
	"strings"

	"github.com/bwmarrin/discordgo"

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

// Edit before approve: the card's Edit button opens a dialog holding the
// operation; its submission is the typed words "!edit <id> <operation>".
const (
	idEdit      = "cs:e:" // the Edit button
	idEditModal = "cs:E:" // its dialog
	editKey     = "operation"
)

// editComponent is the Edit button of a card.
func editComponent(b adapters.Button) component {
	return component{Type: componentButton, Label: cut(orDefault(b.Label, "Edit"), maxLabel), Style: styleSecondary, CustomID: idEdit + b.Value}
}

// isOurModal reports whether a dialog's custom_id is one of countersign's.
func isOurModal(customID string) bool {
	return strings.HasPrefix(customID, idReason) || strings.HasPrefix(customID, idReasonApprove) || strings.HasPrefix(customID, idEditModal)
}

// editModal is the dialog of the Edit button, holding op.
func editModal(approvalID, op string) map[string]any {
	yes := true
	return map[string]any{
		"custom_id": idEditModal + approvalID,
		"title":     "Edit the operation",
		"components": []component{{Type: componentRow, Components: []component{{
			Type: componentTextInput, CustomID: editKey, Style: styleParagraph,
			Label: "The operation as it should run (a new card)", Required: &yes, MaxLength: 4000, Value: cut(op, 4000),
		}}}},
	}
}

// cardOperation reads the operation off a card message: the first code
// block of its text displays.
func cardOperation(m *discordgo.Message) string {
	if m == nil {
		return ""
	}
	var walk func(cs []discordgo.MessageComponent) string
	walk = func(cs []discordgo.MessageComponent) string {
		for _, c := range cs {
			switch v := c.(type) {
			case *discordgo.TextDisplay:
				if body, ok := strings.CutPrefix(v.Content, "```\n"); ok {
					if i := strings.Index(body, "\n```"); i >= 0 {
						return body[:i]
					}
				}
			case *discordgo.Container:
				if s := walk(v.Components); s != "" {
					return s
				}
			case *discordgo.ActionsRow:
				if s := walk(v.Components); s != "" {
					return s
				}
			}
		}
		return ""
	}
	return walk(m.Components)
}

// modalEvent fills e from a submitted dialog: an edit's words, or a
// decision with its reason.
func modalEvent(e *adapters.Event, customID string, cs []discordgo.MessageComponent, ref string) {
	if id, ok := strings.CutPrefix(customID, idEditModal); ok {
		e.Text = "!edit " + id + " " + strings.TrimSpace(modalValue(cs, editKey))
		return
	}
	e.Decision = reasonDecision(customID, strings.TrimSpace(modalValue(cs, reasonKey)), ref)
}
