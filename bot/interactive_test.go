package bot_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
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
)

// TestButtons drives the bot through an adapter with buttons: cards are
// updated in place, a redelivered click is handled once, and a refused
// click reaches only the person who clicked.
func TestButtons(t *testing.T) {
	dir, fake, store, done := startOnFake(t, []string{"tmp_a", "keep.txt"}, nil)

	alice, bob := adaptertest.Alice, adaptertest.Bob
	place := adapters.Place{Channel: "C1", Thread: "T1"}
	fake.Say(t, alice, place, "!help")
	fake.Say(t, alice, place, "!run rm -rf ./tmp_*")
	ref, c := waitCard(t, fake, "pending")
	if len(c.Buttons) != 3 || c.Buttons[0].Value != c.ApprovalID || !c.Buttons[2].Edit {
		t.Fatalf("the card's buttons are %+v; want approve, cancel and edit carrying %s", c.Buttons, c.ApprovalID)
	}

	// Alice's own click is refused: only she hears of it.
	fake.Click(t, alice, place, ref, c.Buttons[0], "")
	waitFor(t, "a private notice to alice", func() bool { return len(fake.Notices(alice)) == 1 })
	if n := fake.Notices(bob); len(n) != 0 {
		t.Errorf("bob received alice's notice: %q", n)
	}

	// Bob's click, delivered twice by a platform unsure it arrived, runs once.
	fake.Click(t, bob, place, ref, c.Buttons[0], "")
	fake.Redeliver(t)
	_, after := waitCard(t, fake, "done")
	fake.End(t)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("the bot did not return at the end of input")
	}

	if len(after.Buttons) != 0 {
		t.Errorf("the finished card still has buttons: %+v", after.Buttons)
	}
	if !strings.Contains(after.StateLine, "approved by bob") {
		t.Errorf("the finished card says %q; want who approved", after.StateLine)
	}
	if n := fake.Notices(bob); len(n) != 0 {
		t.Errorf("bob got notices %q: the redelivered click was handled twice", n)
	}
	refs, contents := fake.Messages()
	cards := 0
	for i, m := range contents {
		if m.Card != nil {
			cards++
			if refs[i] != ref {
				t.Errorf("a second card %s was posted instead of updating %s", refs[i], ref)
			}
		}
	}
	if cards != 1 {
		t.Errorf("%d cards posted, want 1 updated in place", cards)
	}
	if !slices.ContainsFunc(contents, func(m adapters.Content) bool { return strings.Contains(m.Text, "with its buttons") }) {
		t.Error("!help does not mention the buttons on a platform that has them")
	}
	log2, err := store.AuditLog(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	executions := 0
	for _, e := range log2 {
		if e.Kind == approval.KindExecution && e.ApprovalID == c.ApprovalID {
			executions++
		}
	}
	if executions != 1 {
		t.Errorf("%d executions audited, want 1", executions)
	}
	if _, err := os.Stat(filepath.Join(dir, "tmp_a")); err == nil {
		t.Error("tmp_a is still there")
	}
}

// startOnFake runs a bot on a fake adapter with buttons, with the shell
// tool in a new folder holding files, and returns the folder, the adapter,
// the memory store, and the channel Run's error arrives on. wrap, when not
// nil, wraps the store the bot uses (to make it fail).
func startOnFake(t *testing.T, files []string, wrap func(approval.Store) approval.Store) (string, *adaptertest.Fake, *memstore.Store, <-chan error) {
	t.Helper()
	return startOnFakeCfg(t, bot.Config{}, files, wrap)
}

// startOnFakeCfg is startOnFake with the bot's configuration.
func startOnFakeCfg(t *testing.T, cfg bot.Config, files []string, wrap func(approval.Store) approval.Store) (string, *adaptertest.Fake, *memstore.Store, <-chan error) {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reg, pol := shellOnly(t, dir)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store := memstore.New(memstore.Options{Logger: log})
	var used approval.Store = store
	if wrap != nil {
		used = wrap(store)
	}
	fake := adaptertest.NewFake("fake")
	b, err := bot.New(cfg, []adapters.Adapter{fake}, agent.Config{}, bot.Deps{Tools: reg, Policy: pol, Store: used, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- b.Run(context.Background()) }()
	return dir, fake, store, done
}

// waitCard waits until the first card is in the given state.
func waitCard(t *testing.T, f *adaptertest.Fake, state string) (string, adapters.Card) {
	t.Helper()
	var ref string
	var card adapters.Card
	waitFor(t, "a card in state "+state, func() bool {
		refs, contents := f.Messages()
		for i, m := range contents {
			if m.Card != nil {
				ref, card = refs[i], *m.Card
				return card.State == state
			}
		}
		return false
	})
	return ref, card
}

func waitFor(t testing.TB, what string, ok func() bool) {
	t.Helper()
	testenv.Eventually(t, waitLimit, ok, what)
}

// claimFails is a store that cannot claim approved calls, as when Redis
// goes away between the click and the run.
type claimFails struct{ approval.Store }

func (claimFails) Claim(context.Context, string, time.Time) (*approval.Approval, bool, error) {
	return nil, false, errors.New("claim: connection refused")
}

// TestApproverToldWhenTheRunCannotStart: the store fails after the approval
// is recorded; nothing runs and the approver is told so in plain words.
func TestApproverToldWhenTheRunCannotStart(t *testing.T) {
	dir, fake, _, done := startOnFake(t, []string{"tmp_a"}, func(s approval.Store) approval.Store { return claimFails{s} })

	place := adapters.Place{Channel: "C1", Thread: "T1"}
	fake.Say(t, adaptertest.Alice, place, "!run rm -rf ./tmp_*")
	ref, c := waitCard(t, fake, "pending")
	fake.Click(t, adaptertest.Bob, place, ref, c.Buttons[0], "")
	waitFor(t, "a notice to bob", func() bool { return len(fake.Notices(adaptertest.Bob)) == 1 })
	if n := fake.Notices(adaptertest.Bob)[0]; !strings.Contains(n, "could not start the operation just now, so it did not run") {
		t.Errorf("bob was told %q", n)
	}
	fake.End(t)
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "tmp_a")); err != nil {
		t.Errorf("tmp_a is gone: the call ran (%v)", err)
	}
}
