package bot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/memstore"
	"github.com/countersign/countersign/approval/rules"
	"github.com/countersign/countersign/bot"
	"github.com/countersign/countersign/risk"
)

// TestReminderPastTheListing: with more cards pending than the reminder
// scan lists from the store (cardsMax, those that end first), a new card
// is still reminded: the scan reads the cards this process drew too.
func TestReminderPastTheListing(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tmp_a"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	store := memstore.New(memstore.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { _ = store.Close() })
	ctx := context.Background()
	now := time.Now()
	// They end before the new card does (its TTL is 15 minutes), so the
	// store lists them first.
	for i := range bot.CardsMax {
		if _, _, err := store.Create(ctx, &approval.Approval{
			ToolCallID: fmt.Sprint("old-", i), Tool: "execute_command", Args: json.RawMessage(`{"command":"true"}`),
			Verdict:      risk.Verdict{Decision: risk.Confirm, Risk: risk.Medium},
			Requester:    approval.User{ID: "bob"},
			Conversation: approval.Conversation{Platform: "fake", Channel: "C0", Thread: "T0"},
			CreatedAt:    now, ExpiresAt: now.Add(time.Minute),
		}); err != nil {
			t.Fatal(err)
		}
	}
	remind := 300 * time.Millisecond
	cfg := bot.Config{Default: bot.Policy{Approvers: []string{"bob", "carol"},
		Settings: rules.Settings{RemindAfter: &remind}}, SweepInterval: 100 * time.Millisecond}
	f, _ := startRulesBot(t, cfg, store, dir)
	f.Say(t, adaptertest.Alice, adapters.Place{Channel: "C1", Thread: "T1"}, "!run rm -f ./tmp_a")
	_, c := waitState(t, f, "pending")
	want := "Reminder: approval " + c.ApprovalID + " (rm -f ./tmp_a) still waits for a decision"
	waitFor(t, "the new card's reminder", func() bool {
		return strings.Contains(flattenAll(f), want)
	})
}
