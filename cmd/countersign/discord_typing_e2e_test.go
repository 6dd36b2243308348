package main

import (
	"testing"
	"time"

	"github.com/countersign/countersign/adapters/discord/discordtest"
	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/internal/testenv"
)

// TestDiscordTypesWhileTheModelWorks: while the model works on a
// message, the thread shows Discord's typing indicator (issue 21); a
// !cancel ends the turn.
func TestDiscordTypesWhileTheModelWorks(t *testing.T) {
	dir := discordFiles(t)
	fake := discordtest.New(t)
	model := agenttest.NewServer(t, agenttest.Reply{Content: "too late", Delay: time.Hour})
	startDiscord(t, dir, discordConfig(t, dir, ""),
		"OPENAI_BASE_URL", model.BaseURL(), "OPENAI_MODEL", "test-model",
		"DISCORD_BOT_TOKEN", discordtest.Token, "DISCORD_API_URL", fake.URL)
	ops := fake.AddChannel("ops")
	fake.WaitSessions(t, 1)

	th := fake.Say(t, dAlice, ops, "think about this for a long time", true)
	fake.Wait(t, "the typing indicator in the thread", func() bool { return len(fake.Typing(th)) > 0 })
	testenv.Eventually(t, 10*time.Second, func() bool { return len(model.Requests()) > 0 }, "the message at the model") // the model's fake does not wake fake.Wait
	for _, m := range fake.InChannel(th) {
		if m.AuthorID == discordtest.BotID {
			t.Errorf("the bot posted %q while the model worked; the typing indicator says it", text(m))
		}
	}
	fake.Say(t, dAlice, th, "!cancel", true)
	said(t, fake, th, "Cancelled the model's turn")
}
