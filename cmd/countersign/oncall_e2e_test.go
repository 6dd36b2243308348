package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters/slack"
	"github.com/countersign/countersign/adapters/slack/slacktest"
	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/approval/oncall/oncalltest"
	"github.com/countersign/countersign/internal/testenv"
)

// TestSlackOnCallApprovers tries issue 28's on-call approvers as a new
// user would, through the real Slack SDK against the fake Slack and a
// fake PagerDuty: a channel's approvers are a static person (dave) and
// oncall:pagerduty:P123. The person on call (bob, found by e-mail with
// users.lookupByEmail) may approve; once the schedule hands over to carol
// and the cache's age has passed, bob may not and carol may; with
// PagerDuty down the card says it fell back to the static list, carol may
// not, and dave still may.
func TestSlackOnCallApprovers(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a_1", "b_1", "c_1"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fake := slacktest.New(t)
	onBob := slacktest.User{ID: bob.ID, Name: bob.Name, Email: "bob@example.com"}
	onCarol := slacktest.User{ID: carol.ID, Name: carol.Name, Email: "Carol@Example.com"}
	dave := slacktest.User{ID: "U0DAVE", Name: "dave", Email: "dave@example.com"}
	for _, u := range []slacktest.User{alice, onBob, onCarol, dave} {
		fake.AddUser(u)
	}
	pd := oncalltest.NewPagerDuty(t, "pd-token")
	pd.SetOnCall("P123", oncalltest.Person{ID: "PBOB", Name: "Bob", Email: "bob@example.com"})
	t.Setenv("PAGERDUTY_TOKEN", "pd-token")
	clock := testenv.NewClock(time.Now())
	model := agenttest.NewServer(t,
		agenttest.Calls(agenttest.Call("call-1", "execute_command", `{"command":"rm -rf ./a_*","risk_level":"high"}`)),
		agenttest.Text("Removed a."),
	)
	slackRun(t, dir, `
bot:
  default:
    approvers: ["U0DAVE", "oncall:pagerduty:P123"]
pagerduty:
  base_url: `+pd.URL()+`
  cache_ttl: 1m
  timeout: 2s
`, fake, model, func(c *fileConfig) { c.PagerDuty.Now = clock.Now })

	refused := func(u slacktest.User, want string) {
		t.Helper()
		fake.Wait(t, u.Name+" told they cannot approve", func() bool {
			for _, e := range fake.Ephemerals(u.ID) {
				if strings.Contains(e.Text, "You cannot approve") && strings.Contains(e.Text, want) {
					return true
				}
			}
			return false
		})
	}
	exists := func(f string) bool {
		_, err := os.Stat(filepath.Join(dir, f))
		return err == nil
	}

	// Bob is on call: he may approve.
	thread := fake.Mention(alice, slackChannel, "", "clean up a")
	card := threadHas(t, fake, thread, "rm -rf ./a_*")
	if v := slacktest.View(card); !strings.Contains(v, "whoever is on call in PagerDuty schedule P123") {
		t.Errorf("the card does not say the on-call may decide:\n%s", v)
	}
	fake.Acked(t, fake.Click(onBob, slackChannel, card.TS, slack.ActionApprove, approvalID(t, card)))
	threadHas(t, fake, thread, "Removed a.")
	if exists("a_1") {
		t.Error("a_1 is still there after the on-call person approved")
	}

	// The schedule hands over to carol; within the cache's age nothing
	// changes, and once it has passed bob is off call and carol on.
	pd.SetOnCall("P123", oncalltest.Person{ID: "PCAROL", Name: "Carol", Email: "carol@example.com"})
	clock.Advance(time.Minute)
	model.Push(
		agenttest.Calls(agenttest.Call("call-2", "execute_command", `{"command":"rm -rf ./b_*","risk_level":"high"}`)),
		agenttest.Text("Removed b."),
	)
	fake.Say(alice, slackChannel, thread, "and b")
	card2 := threadHas(t, fake, thread, "rm -rf ./b_*")
	id2 := approvalID(t, card2)
	fake.Acked(t, fake.Click(onBob, slackChannel, card2.TS, slack.ActionApprove, id2))
	refused(onBob, "whoever is on call in PagerDuty schedule P123")
	if !exists("b_1") {
		t.Fatal("b_1 is gone: bob approved after he went off call")
	}
	fake.Acked(t, fake.Click(onCarol, slackChannel, card2.TS, slack.ActionApprove, id2))
	threadHas(t, fake, thread, "Removed b.")
	if exists("b_1") {
		t.Error("b_1 is still there after carol, newly on call, approved")
	}

	// PagerDuty is down: the card says the static approvers decide; carol
	// cannot approve, dave can.
	pd.Down(true)
	clock.Advance(time.Minute)
	model.Push(
		agenttest.Calls(agenttest.Call("call-3", "execute_command", `{"command":"rm -rf ./c_*","risk_level":"high"}`)),
		agenttest.Text("Removed c."),
	)
	fake.Say(alice, slackChannel, thread, "and c")
	card3 := threadHas(t, fake, thread, "rm -rf ./c_*")
	fellBack := "PagerDuty (schedule P123) could not say who is on call just now, so the other approvers listed decide until it answers."
	if v := slacktest.View(card3); !strings.Contains(v, fellBack) {
		t.Errorf("the card does not say it fell back to the static approvers:\n%s", v)
	}
	id3 := approvalID(t, card3)
	fake.Acked(t, fake.Click(onCarol, slackChannel, card3.TS, slack.ActionApprove, id3))
	refused(onCarol, fellBack)
	if !exists("c_1") {
		t.Fatal("c_1 is gone: carol approved while PagerDuty could not say she is on call")
	}
	fake.Acked(t, fake.Click(dave, slackChannel, card3.TS, slack.ActionApprove, id3))
	threadHas(t, fake, thread, "Removed c.")
	if exists("c_1") {
		t.Error("c_1 is still there after dave, a static approver, approved")
	}
	if n := fake.Calls("users.lookupByEmail"); n == 0 {
		t.Error("nobody was looked up by e-mail")
	}
}

// TestConfigCheckOnCallWithoutToken: an on-call entry whose service has no
// token is refused at start, naming the entry and the variable to set.
func TestConfigCheckOnCallWithoutToken(t *testing.T) {
	t.Setenv("PAGERDUTY_TOKEN", "")
	t.Setenv("OPSGENIE_API_KEY", "og")
	var cfg fileConfig
	if err := decodeConfig([]byte(`
bot:
  rules:
    - match: {tool: [execute_sql]}
      approvers: ["oncall:opsgenie:S1", "oncall:pagerduty:P123"]
`), &cfg); err != nil {
		t.Fatal(err)
	}
	err := validateConfig(cfg, os.Getenv)
	want := "bot.rules[0].approvers[1]: oncall:pagerduty:P123 needs a PagerDuty token, but $PAGERDUTY_TOKEN is empty"
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "opsgenie:S1 needs") {
		t.Errorf("config check: %v\nwant only %q", err, want)
	}
}
