package discord

import (
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
)

// TestRequiredReasonDialog: a card whose decisions need a reason gives its
// Approve and Cancel buttons ids of their own; a click on one opens a
// dialog whose reason is required, and the dialog's submission is the
// decision with its reason. Without a rule, Cancel's dialog stays
// optional and Approve decides at once.
func TestRequiredReasonDialog(t *testing.T) {
	a := &Adapter{now: time.Now, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	c := adaptertest.PendingCard("a1b2c3d4e5f6")
	c.Buttons[0].Reason, c.Buttons[1].Reason = true, true
	row := buttons(&c)
	if row == nil || row.Components[0].CustomID != idApproveReason+"a1b2c3d4e5f6" || row.Components[1].CustomID != idCancelReason+"a1b2c3d4e5f6" {
		t.Fatalf("buttons = %+v", row)
	}
	click := func(id string) map[string]any {
		ix := a.arrive(&discordgo.Interaction{ID: "1", Type: discordgo.InteractionMessageComponent, User: &discordgo.User{ID: "42"},
			Data: discordgo.MessageComponentInteractionData{CustomID: id, ComponentType: discordgo.ButtonComponent}}, true)
		return ix.response
	}
	for _, id := range []string{idApproveReason, idCancelReason} {
		resp := click(id + "a1b2c3d4e5f6")
		raw, _ := json.Marshal(resp)
		if resp["type"] != responseModal || !strings.Contains(string(raw), `"required":true`) || !strings.Contains(string(raw), "Why? (required)") {
			t.Errorf("click on %s: response %s; want a dialog whose reason is required", id, raw)
		}
	}
	resp := click(idCancel + "a1b2c3d4e5f6")
	if raw, _ := json.Marshal(resp); !strings.Contains(string(raw), `"required":false`) {
		t.Errorf("a plain Cancel: %s; want its optional dialog", raw)
	}
	if resp := click(idApprove + "a1b2c3d4e5f6"); resp["type"] != responseDeferredUpdate {
		t.Errorf("a plain Approve: %v; want it decided at once", resp)
	}

	d := reasonDecision(idReasonApprove+"a1b2c3d4e5f6", "backup checked", "m1")
	if *d != (adapters.Decision{ApprovalID: "a1b2c3d4e5f6", Approve: true, Reason: "backup checked", Ref: "m1"}) {
		t.Errorf("approve dialog's decision = %+v", d)
	}
	d = reasonDecision(idReason+"a1b2c3d4e5f6", "wrong folder", "m1")
	if *d != (adapters.Decision{ApprovalID: "a1b2c3d4e5f6", Reason: "wrong folder", Ref: "m1"}) {
		t.Errorf("cancel dialog's decision = %+v", d)
	}
}

// TestPendingIsPrivate: /countersign pending is deferred as an ephemeral
// answer and makes a private event; the other commands stay public.
func TestPendingIsPrivate(t *testing.T) {
	pending := discordgo.ApplicationCommandInteractionData{Name: "countersign", Options: []*discordgo.ApplicationCommandInteractionDataOption{{Name: "pending"}}}
	run := discordgo.ApplicationCommandInteractionData{Name: "countersign", Options: []*discordgo.ApplicationCommandInteractionDataOption{{Name: "run"}}}
	if !isPending(pending) || isPending(run) {
		t.Fatal("isPending does not tell pending from run")
	}
	if r := commandResponse(pending); r["type"] != responseDeferredMessage || r["data"].(map[string]any)["flags"] != flagEphemeral {
		t.Errorf("pending's first response = %v; want a deferred ephemeral message", r)
	}
	if r := commandResponse(run); r["data"] != nil {
		t.Errorf("run's first response = %v; want a public deferred message", r)
	}
}

// TestEditDialog: the Edit button opens a dialog holding the card's
// operation, read off the card message; its submission is the typed
// words of an edit.
func TestEditDialog(t *testing.T) {
	a := &Adapter{now: time.Now, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	c := adaptertest.PendingCard("a1b2c3d4e5f6")
	c.Buttons = append(c.Buttons, adapters.Button{Label: "Edit", Edit: true, Value: "a1b2c3d4e5f6"})
	m := render(adapters.Content{Card: &c})
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var msg discordgo.Message
	if err := json.Unmarshal(raw, &msg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), idEdit+"a1b2c3d4e5f6") {
		t.Fatalf("the card has no Edit button: %s", raw)
	}
	ix := a.arrive(&discordgo.Interaction{ID: "1", Type: discordgo.InteractionMessageComponent, User: &discordgo.User{ID: "42"}, Message: &msg,
		Data: discordgo.MessageComponentInteractionData{CustomID: idEdit + "a1b2c3d4e5f6", ComponentType: discordgo.ButtonComponent}}, true)
	resp, _ := json.Marshal(ix.response)
	if ix.response["type"] != responseModal || !strings.Contains(string(resp), `"value":"rm -rf ./tmp_*"`) {
		t.Errorf("Edit's response = %s; want a dialog holding the operation", resp)
	}
	var e adapters.Event
	modalEvent(&e, idEditModal+"a1b2c3d4e5f6", []discordgo.MessageComponent{&discordgo.ActionsRow{Components: []discordgo.MessageComponent{
		&discordgo.TextInput{CustomID: editKey, Value: "rm -f ./tmp_a"}}}}, "m1")
	if e.Text != "!edit a1b2c3d4e5f6 rm -f ./tmp_a" || e.Decision != nil {
		t.Errorf("the edit dialog's event = %+v", e)
	}
}
