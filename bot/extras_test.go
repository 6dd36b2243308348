package bot_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval/memstore"
	"github.com/countersign/countersign/bot"
)

// TestExtrasDeclared: the bot reads what an adapter declares (Extras) at
// start and logs once what it has and lacks; without buttons, !help says
// to type the decision, and a typed "approve <id>" runs the call (the
// fallback), as a click does with them.
func TestExtrasDeclared(t *testing.T) {
	tests := []struct {
		name      string
		extras    adapters.Extras
		help      string
		has, lack string
	}{
		{"no extras", adapters.Extras{}, "Decide on a card by typing: approve <id>", "has=[]", "buttons (cards show the words to type"},
		{"buttons", adapters.Extras{Buttons: true}, "Decide on a card with its buttons, or type", "has=[buttons]", "forms ("},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "tmp_a"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			reg, pol := shellOnly(t, dir)
			var logged syncBuffer
			log := slog.New(slog.NewTextHandler(&logged, nil))
			store := memstore.New(memstore.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			fake := adaptertest.NewFake("fake")
			fake.SetExtras(tc.extras)
			b, err := bot.New(bot.Config{}, []adapters.Adapter{fake}, agent.Config{}, bot.Deps{Tools: reg, Policy: pol, Store: store, Log: log})
			if err != nil {
				t.Fatal(err)
			}
			var said []string
			for _, line := range strings.Split(logged.String(), "\n") {
				if strings.Contains(line, `msg="adapter extras"`) {
					said = append(said, line)
				}
			}
			if len(said) != 1 || !strings.Contains(said[0], "platform=fake") || !strings.Contains(said[0], tc.has) || !strings.Contains(said[0], tc.lack) {
				t.Errorf("the start log says %q; want one line for fake with %s, lacking %s", said, tc.has, tc.lack)
			}
			done := make(chan error, 1)
			go func() { done <- b.Run(context.Background()) }()

			alice, bob := adaptertest.Alice, adaptertest.Bob
			place := adapters.Place{Channel: "C1", Thread: "T1"}
			fake.Say(t, alice, place, "!help")
			waitFor(t, "the help", func() bool {
				_, contents := fake.Messages()
				for _, c := range contents {
					if strings.Contains(c.Text, "Direct commands") {
						if !strings.Contains(c.Text, tc.help) {
							t.Fatalf("!help says:\n%s\nwant %q", c.Text, tc.help)
						}
						return true
					}
				}
				return false
			})
			fake.Say(t, alice, place, "!run rm -f ./tmp_a")
			_, c := waitCard(t, fake, "pending")
			fake.Say(t, bob, place, "approve "+c.ApprovalID)
			_, after := waitCard(t, fake, "done")
			if !strings.Contains(after.StateLine, "approved by bob") {
				t.Errorf("the card says %q; want bob's typed approval", after.StateLine)
			}
			if _, err := os.Stat(filepath.Join(dir, "tmp_a")); !os.IsNotExist(err) {
				t.Errorf("tmp_a is still there after the typed approval (%v)", err)
			}
			fake.End(t)
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("Run = %v", err)
				}
			case <-time.After(waitLimit):
				t.Fatal("the bot did not return at the end of input")
			}
		})
	}
}
