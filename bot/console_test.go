package bot_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/memstore"
	"github.com/countersign/countersign/bot"
	"github.com/countersign/countersign/internal/testenv"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
	"github.com/countersign/countersign/tools/shelltool"
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
		{"a console", func(_ context.Context, who bot.ConsoleUser) (string, error) {
			return "https://cs.example/login?t=" + who.Platform + "-" + who.User.ID + "-" + who.Channel, nil
		}, "valid for 5 minutes and once: https://cs.example/login?t=fake-U1-C1", true},
		{"a console that fails", func(context.Context, bot.ConsoleUser) (string, error) {
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

// TestConsoleSeesOnlyKnownChannels: a channel whose policy lets anyone in
// it decide shows its cards in the console only to someone known to be in
// it (they typed !login there, or asked for the card); a channel that
// names its approvers shows them to those approvers from anywhere. A
// refused console decision changes nothing, and is audited.
func TestConsoleSeesOnlyKnownChannels(t *testing.T) {
	f := adaptertest.NewFake("fake")
	store := memstore.New(memstore.Options{})
	t.Cleanup(func() { _ = store.Close() })
	sh, err := shelltool.New(shelltool.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tools.NewRegistry(sh)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := risk.New(risk.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := bot.Config{Channels: map[string]bot.Policy{"CLISTED": {Approvers: []string{"bob"}}}}
	b, err := bot.New(cfg, []adapters.Adapter{f}, agent.Config{}, bot.Deps{
		Store: store, Tools: reg, Policy: pol, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	alice := adapters.User{ID: "alice"}
	f.Say(t, alice, adapters.Place{Channel: "COPEN", Thread: "T1"}, "!run rm -rf ./a")
	f.Say(t, alice, adapters.Place{Channel: "CLISTED", Thread: "T2"}, "!run rm -rf ./b")
	ids := map[string]string{} // channel → its card
	testenv.Within(10*time.Second, func() bool {
		list, err := b.ConsolePending(ctx, bot.ConsoleUser{Platform: "fake", User: alice})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range list {
			ids[c.Channel] = c.Card.ApprovalID
		}
		return len(ids) >= 2
	})
	if len(ids) != 2 {
		t.Fatalf("the requester's console lists %v; want her two cards", ids)
	}

	cases := []struct {
		name string
		who  bot.ConsoleUser
		want []string // the channels whose cards are listed
	}{
		{"bob, signed in elsewhere", bot.ConsoleUser{Platform: "fake", User: adapters.User{ID: "bob"}, Channel: "CELSE"}, []string{"CLISTED"}},
		{"bob, signed in the open channel", bot.ConsoleUser{Platform: "fake", User: adapters.User{ID: "bob"}, Channel: "COPEN"}, []string{"CLISTED", "COPEN"}},
		{"carol, through OIDC", bot.ConsoleUser{Platform: "fake", User: adapters.User{ID: "carol"}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			list, err := b.ConsolePending(ctx, c.who)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range list {
				got = append(got, p.Channel)
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("listed %v, want %v", got, c.want)
			}
		})
	}

	elsewhere := bot.ConsoleUser{Platform: "fake", User: adapters.User{ID: "bob"}, Channel: "CELSE"}
	ans, err := b.ConsoleDecide(ctx, elsewhere, adapters.Decision{ApprovalID: ids["COPEN"], Approve: true})
	if err != nil || len(ans.Notices) != 1 || !strings.Contains(ans.Notices[0], "the console does not know you are in it") {
		t.Fatalf("bob's approval of the open channel's card from elsewhere: %+v %v", ans, err)
	}
	if a, err := store.Get(ctx, ids["COPEN"]); err != nil || a.State != approval.Pending {
		t.Errorf("after the refused decision: %+v %v; want it pending", a, err)
	}
	log, err := store.AuditLog(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, e := range log {
		if e.Kind == approval.KindRefusedClick && e.ApprovalID == ids["COPEN"] && e.Actor == "bob" {
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("refused clicks audited: %d, want 1", refused)
	}
	ans, err = b.ConsoleDecide(ctx, elsewhere, adapters.Decision{ApprovalID: ids["CLISTED"], Approve: true})
	if err != nil {
		t.Fatal(err)
	}
	if a, err := store.Get(ctx, ids["CLISTED"]); err != nil || a.State == approval.Pending {
		t.Errorf("bob's approval of the listed channel's card: %+v, the record %+v %v; want it decided", ans, a, err)
	}
}
