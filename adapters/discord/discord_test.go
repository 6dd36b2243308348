package discord

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
	"github.com/countersign/countersign/adapters/discord/discordtest"
)

// harness is the conformance suite's Discord: the adapter, with the real
// discordgo client inside it, talking to the fake over HTTP and a
// websocket.
type harness struct {
	fake    *discordtest.Server
	a       *Adapter
	channel string
}

var _ adaptertest.Redeliverer = (*harness)(nil)

func testEnv(fake *discordtest.Server) func(string) string {
	return func(k string) string {
		switch k {
		case DefaultTokenEnv:
			return discordtest.Token
		case APIURLEnv:
			return fake.URL
		case DefaultPublicKeyEnv:
			return fake.PublicKey
		}
		return ""
	}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newAdapter(t *testing.T, fake *discordtest.Server, cfg Config) *Adapter {
	t.Helper()
	a, err := New(cfg, testEnv(fake), quiet())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return a
}

func newHarness(t *testing.T) *harness {
	fake := discordtest.New(t)
	return &harness{fake: fake, a: newAdapter(t, fake, Config{}), channel: fake.AddChannel("ops")}
}

func fakeUser(u adapters.User) discordtest.User {
	return discordtest.User{ID: u.ID, Name: u.Name, Roles: u.Roles}
}

func (h *harness) Adapter() adapters.Adapter { return h.a }

func (h *harness) Place() adapters.Place { return adapters.Place{Channel: h.channel} }

func (h *harness) Say(t testing.TB, u adapters.User, p adapters.Place, text string) {
	t.Helper()
	h.fake.WaitSessions(t, 1)
	ch := p.Channel
	if p.Thread != "" {
		ch = p.Thread
	}
	h.fake.Say(t, fakeUser(u), ch, text, true)
}

func (h *harness) Decide(t testing.TB, u adapters.User, _ adapters.Place, ref string, b adapters.Button, reason string) {
	t.Helper()
	h.fake.WaitSessions(t, 1)
	id := idCancel + b.Value
	switch {
	case b.Stop:
		id = idStop + b.Value
	case b.Approve:
		id = idApprove + b.Value
	}
	m, ok := h.fake.Message(ref)
	if !ok || !hasButton(m, id) {
		t.Fatalf("message %s has no button %q", ref, id)
	}
	click := h.fake.Click(t, fakeUser(u), ref, id)
	if !b.Approve && !b.Stop {
		h.fake.SubmitModal(t, fakeUser(u), click, map[string]string{reasonKey: reason})
	}
}

func hasButton(m discordtest.Message, customID string) bool {
	for _, c := range discordtest.Buttons(m) {
		if c.CustomID == customID {
			return true
		}
	}
	return false
}

func (h *harness) View(t testing.TB, _ adapters.Place, ref string) string {
	t.Helper()
	m, ok := h.fake.Message(ref)
	if !ok {
		t.Fatalf("no message %s", ref)
	}
	return view(m)
}

// view is what a person sees of a message: its text (content, embeds,
// text displays), its buttons as the words they stand for.
func view(m discordtest.Message) string {
	var b strings.Builder
	b.WriteString(discordtest.Text(m))
	for _, c := range discordtest.Buttons(m) {
		var w string
		switch {
		case strings.HasPrefix(c.CustomID, idApprove):
			w = adapters.Button{Approve: true, Value: strings.TrimPrefix(c.CustomID, idApprove)}.Words()
		case strings.HasPrefix(c.CustomID, idStop):
			w = adapters.Button{Stop: true, Value: strings.TrimPrefix(c.CustomID, idStop)}.Words()
		case strings.HasPrefix(c.CustomID, idCancel):
			w = adapters.Button{Value: strings.TrimPrefix(c.CustomID, idCancel)}.Words()
		}
		if w != "" {
			b.WriteString(w + "\n")
		}
	}
	return b.String()
}

func (h *harness) Notices(_ testing.TB, u adapters.User) []string { return h.fake.Notices(fakeUser(u)) }

// End revokes the token once the adapter is connected: Discord closes
// the session for good.
func (h *harness) End(t testing.TB) {
	h.fake.WaitSessions(t, 1)
	h.fake.End()
}

func (h *harness) Redeliver(t testing.TB) { h.fake.Redispatch(t) }

func TestConformance(t *testing.T) {
	adaptertest.Run(t, func(t *testing.T) adaptertest.Harness { return newHarness(t) })
}

// run runs a until the test ends and returns its events.
func run(t *testing.T, a *Adapter) <-chan adapters.Event {
	t.Helper()
	events := make(chan adapters.Event, 64)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- a.Run(ctx, adapters.HandlerFunc(func(_ context.Context, e adapters.Event) { events <- e }))
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return events
}
