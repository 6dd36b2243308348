package bot_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
	"github.com/countersign/countersign/approval/oncall"
	"github.com/countersign/countersign/approval/oncall/oncalltest"
	"github.com/countersign/countersign/approval/rules"
	"github.com/countersign/countersign/bot"
)

// byEmail finds the fake platform's people by address.
type byEmail map[string]string

func (m byEmail) UserByEmail(_ context.Context, email string) (string, error) { return m[email], nil }

// TestEscalationPingsWhoeverIsOnCall: an escalation to an on-call
// schedule pings the person on call now by name; the entry itself pings
// nobody, and would leave the escalation silent.
func TestEscalationPingsWhoeverIsOnCall(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tmp_a"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	pd := oncalltest.NewPagerDuty(t, "tok")
	pd.SetOnCall("P123", oncalltest.Person{ID: "PDAVE", Name: "Dave", Email: "dave@example.com"})
	resolver := oncall.Build(map[string]oncall.Config{oncall.PagerDuty: {BaseURL: pd.URL()}},
		func(k string) string { return map[string]string{"PAGERDUTY_TOKEN": "tok"}[k] })
	f := adaptertest.NewFake("slack")
	f.SetExtras(adapters.Extras{Buttons: true, ByEmail: byEmail{"dave@example.com": "dave"}})
	s, _ := sharedStores()[0].pair(t)
	escalate := 300 * time.Millisecond
	cfg := bot.Config{SweepInterval: 100 * time.Millisecond, Default: bot.Policy{Approvers: []string{"bob"},
		Settings: rules.Settings{EscalateAfter: &escalate, EscalateTo: []string{"oncall:pagerduty:P123"}}}}
	startRulesBotOn(t, cfg, s, dir, f, resolver)
	place := adapters.Place{Channel: "C1", Thread: "T1"}
	f.Say(t, adaptertest.Alice, place, "!run rm -f ./tmp_a")
	_, c := waitState(t, f, "pending")
	waitFor(t, "the escalation", func() bool { return strings.Contains(flattenAll(f), "Escalated: approval "+c.ApprovalID) })
	_, contents := f.Messages()
	for _, m := range contents {
		if strings.HasPrefix(m.Text, "Escalated: ") && !slices.Contains(m.Mentions, "user:dave") {
			t.Errorf("the escalation mentions %q, want dave, who is on call", m.Mentions)
		}
	}
}
