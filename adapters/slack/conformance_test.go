package slack_test

import (
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
	"github.com/countersign/countersign/adapters/slack"
	"github.com/countersign/countersign/adapters/slack/slacktest"
)

const channel = "C0OPS"

// harness connects the real adapter, through the real slack-go client, to
// the fake Slack over HTTP and a websocket.
type harness struct {
	fake   *slacktest.Server
	ad     *slack.Adapter
	thread string
}

func testLog(t testing.TB) *slog.Logger {
	if os.Getenv("SLACK_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func newAdapter(t testing.TB, fake *slacktest.Server, cfg slack.Config) *slack.Adapter {
	t.Helper()
	env := fake.Env()
	ad, err := slack.New(cfg, func(k string) string { return env[k] }, testLog(t))
	if err != nil {
		t.Fatalf("slack.New: %v", err)
	}
	return ad
}

func newHarness(t *testing.T) adaptertest.Harness {
	fake := slacktest.New(t)
	h := &harness{fake: fake, ad: newAdapter(t, fake, slack.Config{})}
	// The conversation: a top-level message in #ops that mentioned the bot.
	h.thread = fake.Store(slacktest.User{ID: "carol", Name: "carol"}, channel, "", "the thread starts here")
	return h
}

func (h *harness) Adapter() adapters.Adapter { return h.ad }
func (h *harness) Place() adapters.Place {
	return adapters.Place{Channel: channel, Thread: h.thread}
}

func user(u adapters.User) slacktest.User { return slacktest.User{ID: u.ID, Name: u.Name} }

func (h *harness) Say(t testing.TB, u adapters.User, p adapters.Place, text string) {
	h.fake.MentionOnce(user(u), p.Channel, p.Thread, text)
}

func (h *harness) Decide(t testing.TB, u adapters.User, p adapters.Place, ref string, b adapters.Button, reason string) {
	switch {
	case b.Approve:
		h.fake.Click(user(u), p.Channel, ref, slack.ActionApprove, b.Value)
	case reason == "":
		h.fake.Click(user(u), p.Channel, ref, slack.ActionCancel, b.Value)
	default:
		// Buttons carry no reason: it is typed in the thread.
		h.fake.Say(user(u), p.Channel, p.Thread, "cancel "+b.Value+" "+reason)
	}
}

func (h *harness) View(t testing.TB, p adapters.Place, ref string) string {
	m, ok := h.fake.Message(p.Channel, ref)
	if !ok {
		t.Fatalf("no message %s in %s", ref, p.Channel)
	}
	return slacktest.View(m)
}

func (h *harness) Notices(t testing.TB, u adapters.User) []string {
	var out []string
	for _, e := range h.fake.Ephemerals(u.ID) {
		out = append(out, slacktest.View(slacktest.Message{Text: e.Text}))
	}
	return out
}

func (h *harness) End(t testing.TB) { h.fake.Uninstall() }

func (h *harness) Redeliver(t testing.TB) { h.fake.Redeliver() }

func TestConformance(t *testing.T) {
	adaptertest.Run(t, func(t *testing.T) adaptertest.Harness { return newHarness(t) })
}
