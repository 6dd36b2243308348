package bot_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval/memstore"
	"github.com/countersign/countersign/bot"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
)

// TestLoginCommand: !login answers privately with the console's link, or
// says there is no console, or that no link could be made; !help lists it
// only where a console is.
func TestLoginCommand(t *testing.T) {
	cases := []struct {
		name  string
		login bot.Login
		want  string
		help  bool
	}{
		{"no console", nil, "The web console is not configured here", false},
		{"a console", func(_ context.Context, platform string, u adapters.User) (string, error) {
			return "https://cs.example/login?t=" + platform + "-" + u.ID, nil
		}, "valid for 5 minutes and once: https://cs.example/login?t=fake-U1", true},
		{"a console that fails", func(context.Context, string, adapters.User) (string, error) {
			return "", errors.New("boom")
		}, "I could not make a sign-in link just now", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := adaptertest.NewFake("fake")
			store := memstore.New(memstore.Options{})
			t.Cleanup(func() { _ = store.Close() })
			reg, err := tools.NewRegistry()
			if err != nil {
				t.Fatal(err)
			}
			pol, err := risk.New(risk.Config{})
			if err != nil {
				t.Fatal(err)
			}
			b, err := bot.New(bot.Config{}, []adapters.Adapter{f}, agent.Config{}, bot.Deps{
				Store: store, Tools: reg, Policy: pol, Login: c.login, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- b.Run(context.Background()) }()
			u := adapters.User{ID: "U1", Name: "ann"}
			place := adapters.Place{Channel: "C1", Thread: "T1"}
			f.Say(t, u, place, "!login")
			f.Say(t, u, place, "!help")
			f.End(t)
			if err := <-done; err != nil {
				t.Fatalf("Run: %v", err)
			}
			notices := strings.Join(f.Notices(u), "\n")
			if !strings.Contains(notices, c.want) {
				t.Errorf("notices to ann: %q, want %q", notices, c.want)
			}
			_, msgs := f.Messages()
			var help string
			for _, m := range msgs {
				if strings.Contains(m.Text, "Direct commands") {
					help = m.Text
				}
			}
			if strings.Contains(help, "!login") != c.help {
				t.Errorf("!help lists !login: %v, want %v:\n%s", !c.help, c.help, help)
			}
		})
	}
}
