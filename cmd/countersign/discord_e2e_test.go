package main

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters/discord/discordtest"
	"github.com/countersign/countersign/agent/agenttest"
)

var (
	dAlice = discordtest.User{ID: "100000000000000001", Name: "alice"}
	dBob   = discordtest.User{ID: "100000000000000002", Name: "bob", Roles: []string{"700000000000000007"}}
	dCarol = discordtest.User{ID: "100000000000000003", Name: "carol"}
)

// discordConfig is a configuration where only holders of bob's role
// approve, and nobody approves their own call.
func discordConfig(t testing.TB, dir, extra string) string {
	t.Helper()
	cfg := "bot:\n  default:\n    approvers: [\"role:" + dBob.Roles[0] + "\"]\n    require_second_person: true\n" + extra
	path := filepath.Join(dir, "countersign.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func discordFiles(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"tmp_a", "tmp_b", "keep.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// card waits for the approval card in channel and returns it.
func card(t testing.TB, fake *discordtest.Server, channel string) discordtest.Message {
	t.Helper()
	var c discordtest.Message
	fake.Wait(t, "an approval card in "+channel, func() bool {
		for _, m := range fake.InChannel(channel) {
			if buttonID(m, "cs:a:") != "" {
				c = m
				return true
			}
		}
		return false
	})
	return c
}

func buttonID(m discordtest.Message, prefix string) string {
	for _, b := range discordtest.Buttons(m) {
		if strings.HasPrefix(b.CustomID, prefix) {
			return b.CustomID
		}
	}
	return ""
}

func text(m discordtest.Message) string { return discordtest.Text(m) }

// said waits for a message in channel whose text has want.
func said(t *testing.T, fake *discordtest.Server, channel, want string) discordtest.Message {
	t.Helper()
	var got discordtest.Message
	fake.Wait(t, "a message saying "+want, func() bool {
		for _, m := range fake.InChannel(channel) {
			if strings.Contains(text(m), want) {
				got = m
				return true
			}
		}
		return false
	})
	return got
}

// startDiscord runs `countersign run` as startRun does, and stops it
// (cancelling its context, as SIGTERM does) when the test ends, waiting
// for it to return.
func startDiscord(t testing.TB, dir, config string, env ...string) {
	t.Helper()
	t.Chdir(dir)
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv(DefaultRedisURLEnv, "")
	for i := 0; i+1 < len(env); i += 2 {
		t.Setenv(env[i], env[i+1])
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, config, strings.NewReader(""), io.Discard, io.Discard) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("run did not return within 10s of its context's end")
		}
	})
}

// TestDiscordEndToEnd is issue 10's walk through `countersign run` against
// the fake Discord and the fake model.
func TestDiscordEndToEnd(t *testing.T) {
	dir := discordFiles(t)
	fake := discordtest.New(t)
	model := agenttest.NewServer(t,
		// 1: a read runs at once
		agenttest.Calls(agenttest.Call("c1", "execute_command", `{"command":"ls","risk_level":"low"}`)),
		agenttest.Text("I see keep.txt, tmp_a and tmp_b."),
		// 2: a delete waits for a card
		agenttest.Calls(agenttest.Call("c2", "execute_command", `{"command":"rm -rf ./tmp_*","risk_level":"high"}`)),
		agenttest.Text("Removed tmp_a and tmp_b; keep.txt is untouched."),
		// 3: a cancel reaches the model
		agenttest.Calls(agenttest.Call("c3", "execute_command", `{"command":"rm -f ./keep.txt","risk_level":"high"}`)),
		agenttest.Text("Understood: keep.txt stays."),
	)
	startDiscord(t, dir, discordConfig(t, dir, ""),
		"OPENAI_BASE_URL", model.BaseURL(), "OPENAI_MODEL", "test-model",
		"DISCORD_BOT_TOKEN", discordtest.Token, "DISCORD_API_URL", fake.URL)
	ops := fake.AddChannel("ops")
	fake.WaitSessions(t, 1)

	// 1. A mention: a thread, and a read that runs at once.
	m1 := fake.Say(t, dAlice, ops, "what is in this folder?", true)
	said(t, fake, m1, "I see keep.txt, tmp_a and tmp_b.")

	// 2. A delete: a card naming the matched files.
	m2 := fake.Say(t, dAlice, ops, "clean up the temp files", true)
	c := card(t, fake, m2)
	if v := text(c); !strings.Contains(v, "tmp_a") || !strings.Contains(v, "tmp_b") || !strings.Contains(v, "rm -rf ./tmp_*") {
		t.Fatalf("the card does not show the operation and the matched files:\n%s", v)
	}
	approve := buttonID(c, "cs:a:")
	// The requester's own click: refused, privately; the buttons stay.
	own := fake.Click(t, dAlice, c.ID, approve)
	if r := fake.WaitResponse(t, own); r.Type != 6 || r.After > time.Second {
		t.Errorf("first response to a click: type %d after %s", r.Type, r.After)
	}
	fake.Wait(t, "alice to be told why", func() bool { return len(fake.Notices(dAlice)) > 0 })
	if n := fake.Notices(dAlice); !strings.Contains(strings.ToLower(strings.Join(n, " ")), "approve") {
		t.Errorf("alice's notice does not say why: %q", n)
	}
	if m, _ := fake.Message(c.ID); buttonID(m, "cs:a:") == "" {
		t.Fatal("a refused click removed the buttons")
	}
	// Carol has no approver role: refused too.
	fake.Click(t, dCarol, c.ID, approve)
	fake.Wait(t, "carol to be told why", func() bool { return len(fake.Notices(dCarol)) > 0 })
	// The first edit is rate limited: the outcome still lands.
	fake.RateLimitEdits(1, 200*time.Millisecond)
	// Bob holds the role: one run, the buttons gone, the answer in the thread.
	fake.Click(t, dBob, c.ID, approve)
	said(t, fake, m2, "Removed tmp_a and tmp_b; keep.txt is untouched.")
	fake.Wait(t, "the card to show the outcome", func() bool {
		m, _ := fake.Message(c.ID)
		return len(discordtest.Buttons(m)) == 0 && strings.Contains(text(m), "bob")
	})
	for f, want := range map[string]bool{"tmp_a": false, "tmp_b": false, "keep.txt": true} {
		if _, err := os.Stat(filepath.Join(dir, f)); (err == nil) != want {
			t.Errorf("%s exists = %v, want %v", f, err == nil, want)
		}
	}
	if fake.RateLimitsLeft() != 0 {
		t.Error("the injected 429 was never hit")
	}

	// The same MESSAGE_CREATE again: no second turn (the model's script
	// would be out of step, and the next request would not match).
	fake.Redispatch(t)

	// 3. Cancel, with a reason that reaches the model.
	m3 := fake.Say(t, dAlice, ops, "delete keep.txt", true)
	c3 := card(t, fake, m3)
	click := fake.Click(t, dBob, c3.ID, buttonID(c3, "cs:c:"))
	fake.SubmitModal(t, dBob, click, map[string]string{"reason": "we still need it"})
	said(t, fake, m3, "Understood: keep.txt stays.")
	reqs := model.Requests()
	if len(reqs) != 6 {
		t.Fatalf("model requests = %d, want 6: one turn per message", len(reqs))
	}
	last := reqs[5].Messages[len(reqs[5].Messages)-1]
	if !strings.Contains(last.Content, "cancel") || !strings.Contains(last.Content, "we still need it") {
		t.Errorf("the model was not told of the cancel and its reason: %s", last.Content)
	}
	if _, err := os.Stat(filepath.Join(dir, "keep.txt")); err != nil {
		t.Errorf("keep.txt is gone after a cancel")
	}

	// 4. A slash command, and a run that outlives the interaction token.
	cmd := fake.Command(t, dAlice, ops, "countersign", "run", "command", "rm -f ./keep.txt")
	if r := fake.WaitResponse(t, cmd); r.Type != 5 {
		t.Errorf("slash command first response %d, want 5 (deferred)", r.Type)
	}
	var thread string
	fake.Wait(t, "the slash command's thread", func() bool {
		ix, _ := fake.Interaction(cmd)
		if _, ok := fake.Channel(ix.OriginalID); ok {
			thread = ix.OriginalID
			return true
		}
		return false
	})
	c4 := card(t, fake, thread)
	fake.ExpireTokensOnEdit(true)
	fake.Click(t, dBob, c4.ID, buttonID(c4, "cs:a:"))
	fake.Wait(t, "the run's final state on the card", func() bool {
		m, _ := fake.Message(c4.ID)
		return len(discordtest.Buttons(m)) == 0 && strings.Contains(strings.ToLower(text(m)), "exit code 0")
	})
	if _, err := os.Stat(filepath.Join(dir, "keep.txt")); err == nil {
		t.Error("keep.txt is still there after the approved slash command")
	}
	channelEdits := 0
	for _, r := range fake.Requests() {
		if strings.HasPrefix(r, "PATCH") && strings.Contains(r, "/messages/"+c4.ID) {
			channelEdits++
		}
	}
	if channelEdits == 0 {
		t.Error("after the token expired the card was never edited as the bot's own message")
	}
}

// TestDiscordHTTPInteractions: with interactions: http, a signed click
// runs the call and a forged one is refused before it is read.
func TestDiscordHTTPInteractions(t *testing.T) {
	dir := discordFiles(t)
	fake := discordtest.New(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	startDiscord(t, dir, discordConfig(t, dir, "discord:\n  interactions: http\n  listen: \""+addr+"\"\n"),
		"DISCORD_BOT_TOKEN", discordtest.Token, "DISCORD_API_URL", fake.URL, "DISCORD_PUBLIC_KEY", fake.PublicKey)
	ops := fake.AddChannel("ops")
	fake.WaitSessions(t, 1)
	fake.SetInteractionsURL("http://" + addr + "/interactions")
	m := fake.Say(t, dAlice, ops, "!run rm -rf ./tmp_*", true)
	c := card(t, fake, m)
	forged := []byte(`{"id":"1","application_id":"` + discordtest.AppID + `","type":3,"token":"x","version":1,"channel_id":"` + m + `","member":{"user":{"id":"` + dBob.ID + `"},"roles":["` + dBob.Roles[0] + `"]},"data":{"custom_id":"` + buttonID(c, "cs:a:") + `","component_type":2},"message":{"id":"` + c.ID + `"}}`)
	if status, _ := fake.PostInteraction(forged, false); status != 401 {
		t.Fatalf("a forged click = HTTP %d, want 401", status)
	}
	if _, err := os.Stat(filepath.Join(dir, "tmp_a")); err != nil {
		t.Fatal("a forged click ran the call")
	}
	click := fake.Click(t, dBob, c.ID, buttonID(c, "cs:a:"))
	if ix, _ := fake.Interaction(click); ix.HTTPStatus != 200 {
		t.Fatalf("a signed click = HTTP %d", ix.HTTPStatus)
	}
	fake.Wait(t, "the run to finish", func() bool {
		m, _ := fake.Message(c.ID)
		return len(discordtest.Buttons(m)) == 0 && strings.Contains(strings.ToLower(text(m)), "exit code 0")
	})
	if _, err := os.Stat(filepath.Join(dir, "tmp_a")); err == nil {
		t.Error("tmp_a is still there after the approved click")
	}
}
