package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/countersign/countersign/adapters/slack"
	"github.com/countersign/countersign/adapters/slack/slacktest"
	"github.com/countersign/countersign/agent/agenttest"
)

const slackChannel = "C0OPS"

var (
	alice = slacktest.User{ID: "U0ALICE", Name: "alice"}
	bob   = slacktest.User{ID: "U0BOB", Name: "bob"}
	carol = slacktest.User{ID: "U0CAROL", Name: "carol"}
)

// slackRun runs `countersign run` against the fake Slack (Socket Mode, at
// SLACK_API_URL) and the fake model, in dir, with the config text.
func slackRun(t testing.TB, dir, config string, fake *slacktest.Server, model *agenttest.Server, opts ...option) <-chan error {
	t.Helper()
	t.Chdir(dir)
	path := filepath.Join(t.TempDir(), "countersign.yaml")
	writeFile(t, path, config)
	slackEnv(t, fake, model.BaseURL(), "")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, path, strings.NewReader(""), io.Discard, io.Discard, opts...) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	fake.Connected(t)
	return done
}

// slackEnv is the environment of a run against the fake Slack: its
// tokens and API URL, the fake model at modelURL ("" for none), and the
// store at redisURL ("" for memory); no key, no signing secret.
func slackEnv(t testing.TB, fake *slacktest.Server, modelURL, redisURL string) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", modelURL)
	if modelURL != "" {
		t.Setenv("OPENAI_MODEL", "test-model")
	}
	t.Setenv(DefaultRedisURLEnv, redisURL)
	t.Setenv("SLACK_SIGNING_SECRET", "")
	for k, v := range fake.Env() {
		t.Setenv(k, v)
	}
}

// threadHas waits for a bot message in the thread whose view holds want,
// and returns it.
func threadHas(t *testing.T, fake *slacktest.Server, thread, want string) slacktest.Message {
	t.Helper()
	var got slacktest.Message
	fake.Wait(t, "a bot message in the thread saying "+want, func() bool {
		for _, m := range fake.Thread(slackChannel, thread) {
			if m.User == slacktest.BotUserID && strings.Contains(slacktest.View(m), want) {
				got = m
				return true
			}
		}
		return false
	})
	return got
}

// cards returns the bot's cards in the thread.
func cards(fake *slacktest.Server, thread string) []slacktest.Message {
	var out []slacktest.Message
	for _, m := range fake.Thread(slackChannel, thread) {
		if m.User == slacktest.BotUserID && strings.Contains(string(m.Blocks), `"header"`) {
			out = append(out, m)
		}
	}
	return out
}

// approvalID reads the approval id off a pending card's Approve button.
func approvalID(t testing.TB, m slacktest.Message) string {
	t.Helper()
	var bs []struct {
		Type     string `json:"type"`
		Elements []struct {
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(m.Blocks, &bs); err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		for _, e := range b.Elements {
			if e.ActionID == slack.ActionApprove {
				return e.Value
			}
		}
	}
	t.Fatalf("the card has no Approve button:\n%s", slacktest.View(m))
	return ""
}

// TestSlackEndToEnd is issue 9's end-to-end test: countersign run, the
// real slack-go client against the fake Slack, the fake model.
func TestSlackEndToEnd(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"tmp_a", "tmp_b", "keep.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fake := slacktest.New(t)
	fake.AddGroup("S0ONCALL", "oncall", bob.ID)
	model := agenttest.NewServer(t,
		agenttest.Calls(agenttest.Call("call-1", "execute_command", `{"command":"ls","risk_level":"low"}`)),
		agenttest.Text("The folder holds keep.txt, tmp_a and tmp_b."),
	)
	slackRun(t, dir, `
bot:
  default:
    approvers: ["group:@oncall"]
    require_second_person: true
`, fake, model)

	// A mention: Slack delivers app_mention and message; one turn, and the
	// model's read runs at once.
	thread := fake.Mention(alice, slackChannel, "", "what is in the folder?")
	threadHas(t, fake, thread, "The folder holds keep.txt")
	if n := len(model.Requests()); n != 2 {
		t.Fatalf("model requests = %d after one mention, want 2 (one turn: the call, then the answer)", n)
	}
	if c := cards(fake, thread); len(c) != 0 {
		t.Errorf("a read-only ls got a card:\n%s", slacktest.View(c[0]))
	}

	// "clean up the temp files", in the thread without a mention: a card
	// naming the matched files.
	model.Push(
		agenttest.Calls(agenttest.Call("call-2", "execute_command", `{"command":"rm -rf ./tmp_*","risk_level":"high"}`)),
		agenttest.Text("Removed tmp_a and tmp_b; keep.txt is untouched."),
	)
	fake.Say(alice, slackChannel, thread, "clean up the temp files")
	card := threadHas(t, fake, thread, "rm -rf ./tmp_*")
	view := slacktest.View(card)
	for _, w := range []string{"tmp_a", "tmp_b", "high"} {
		if !strings.Contains(view, w) {
			t.Errorf("the card does not show %q:\n%s", w, view)
		}
	}
	id := approvalID(t, card)

	// The requester's own click: refused, privately, nothing changes.
	click := fake.Click(alice, slackChannel, card.TS, slack.ActionApprove, id)
	fake.Acked(t, click)
	fake.Wait(t, "a private notice to alice", func() bool { return len(fake.Ephemerals(alice.ID)) > 0 })
	if e := fake.Ephemerals(alice.ID)[0]; e.Via != "response_url" || !strings.Contains(e.Text, "your approval does not count") {
		t.Errorf("alice's notice = %+v; want an answer to her click through its response_url saying she cannot approve her own call", e)
	}
	if m, _ := fake.Message(slackChannel, card.TS); !strings.Contains(string(m.Blocks), slack.ActionApprove) {
		t.Errorf("alice's own click changed the card:\n%s", slacktest.View(m))
	}
	for _, f := range []string{"tmp_a", "tmp_b"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("%s is gone after a refused click", f)
		}
	}

	// Bob, in the @oncall user group, approves while Slack answers the
	// first chat.update with 429: one run, one card, the final state shown,
	// the model's answer in the thread.
	fake.FailUpdates(1, 1)
	bobClick := fake.Click(bob, slackChannel, card.TS, slack.ActionApprove, id)
	fake.Acked(t, bobClick)
	threadHas(t, fake, thread, "keep.txt is untouched")
	fake.Wait(t, "the card's final state", func() bool {
		m, _ := fake.Message(slackChannel, card.TS)
		v := slacktest.View(m)
		return strings.Contains(v, "approved") && strings.Contains(v, "exit code 0") && !strings.Contains(string(m.Blocks), slack.ActionApprove)
	})
	if fake.Limited() != 1 {
		t.Errorf("chat.update answered 429 %d times, want 1: the test did not exercise the rate limit", fake.Limited())
	}
	if n := len(cards(fake, thread)); n != 1 {
		t.Errorf("%d cards in the thread after a 429, want 1", n)
	}
	for f, want := range map[string]bool{"tmp_a": false, "tmp_b": false, "keep.txt": true} {
		_, err := os.Stat(filepath.Join(dir, f))
		if got := err == nil; got != want {
			t.Errorf("%s exists = %v, want %v", f, got, want)
		}
	}

	// The same envelope again (Slack thought the ack late): nothing twice.
	before := len(fake.Thread(slackChannel, thread))
	bobNotices := len(fake.Ephemerals(bob.ID))
	requests := len(model.Requests())
	again := fake.Redeliver()
	fake.Acked(t, again)
	// A direct command after it: once it is answered, the redelivery has
	// been through the bot (the adapter hands events over in order).
	fake.Say(alice, slackChannel, thread, "!pending")
	threadHas(t, fake, thread, "No approvals are waiting")
	if n := len(fake.Thread(slackChannel, thread)); n != before+2 { // alice's !pending and the answer
		t.Errorf("thread grew by %d messages after a redelivered click and !pending, want 2", n-before)
	}
	if n := len(fake.Ephemerals(bob.ID)); n != bobNotices {
		t.Errorf("bob got %d more notices after a redelivered click, want none", n-bobNotices)
	}
	if n := len(model.Requests()); n != requests {
		t.Errorf("the model was asked %d more times after a redelivered click", n-requests)
	}

	// Cancel with a reason, typed in the thread: the reason reaches the model.
	model.Push(
		agenttest.Calls(agenttest.Call("call-3", "execute_command", `{"command":"rm -f ./keep.txt","risk_level":"high"}`)),
		agenttest.Text("Understood, keep.txt stays."),
	)
	fake.Say(alice, slackChannel, thread, "delete keep.txt too")
	card2 := threadHas(t, fake, thread, "rm -f ./keep.txt")
	id2 := approvalID(t, card2)
	fake.Say(alice, slackChannel, thread, "cancel "+id2+" wrong file, we need it")
	threadHas(t, fake, thread, "keep.txt stays")
	reqs := model.Requests()
	last := reqs[len(reqs)-1].Messages[len(reqs[len(reqs)-1].Messages)-1]
	if last.Role != "tool" || !strings.Contains(last.Content, "cancelled") || !strings.Contains(last.Content, "wrong file, we need it") {
		t.Errorf("the model got %+v after the cancel, want a cancelled tool result with the reason", last)
	}
	if _, err := os.Stat(filepath.Join(dir, "keep.txt")); err != nil {
		t.Error("keep.txt is gone after a cancel")
	}

	// The socket drops; what is sent meanwhile arrives after the reconnect.
	conns := fake.Connections()
	fake.DropSocket()
	model.Push(agenttest.Text("Still here."))
	fake.Say(carol, slackChannel, thread, "are you still there?")
	threadHas(t, fake, thread, "Still here.")
	if fake.Connections() <= conns {
		t.Errorf("connections = %d, want a reconnect after %d", fake.Connections(), conns)
	}

	// A direct message is a conversation of its own.
	model.Push(agenttest.Text("Hello in private."))
	fake.Say(alice, "D0ALICE", "", "hello")
	fake.Wait(t, "an answer in the direct message", func() bool {
		return slices.ContainsFunc(fake.BotMessages("D0ALICE"), func(m slacktest.Message) bool {
			return strings.Contains(m.Text, "Hello in private.")
		})
	})
}

// TestSlackConfigCheck: config check asks Slack, and names a missing scope
// or a token of the wrong kind.
func TestSlackConfigCheck(t *testing.T) {
	fake := slacktest.New(t)
	slackEnv(t, fake, "", "")
	check := func() (int, string) {
		var out, errs strings.Builder
		code := configMain([]string{"check"}, &out, &errs)
		return code, out.String() + errs.String()
	}
	if code, out := check(); code != 0 || !strings.Contains(out, "slack: socket mode, bot user "+slacktest.BotUserID) {
		t.Errorf("config check = %d:\n%s", code, out)
	}
	fake.SetScopes("app_mentions:read", "chat:write")
	if code, out := check(); code != 1 || !strings.Contains(out, "files:write") || !strings.Contains(out, "usergroups:read") {
		t.Errorf("config check with missing scopes = %d:\n%s", code, out)
	}
	fake.SetScopes(slacktest.Scopes...)
	t.Setenv("SLACK_APP_TOKEN", slacktest.BotToken)
	if code, out := check(); code != 1 || !strings.Contains(out, "SLACK_APP_TOKEN holds a bot token (xoxb-), not an app-level token") {
		t.Errorf("config check with the bot token as app token = %d:\n%s", code, out)
	}
	t.Setenv("SLACK_APP_TOKEN", slacktest.AppToken)
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-revoked")
	if code, out := check(); code != 1 || !strings.Contains(out, "invalid_auth") || !strings.Contains(out, "SLACK_BOT_TOKEN") {
		t.Errorf("config check with a bad bot token = %d:\n%s", code, out)
	}
}
