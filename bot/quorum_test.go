package bot_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/oncall"
	"github.com/countersign/countersign/approval/rules"
	"github.com/countersign/countersign/bot"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
	"github.com/countersign/countersign/tools/shelltool"
)

// Carol and Dave are two more approvers.
var (
	carol = adapters.User{ID: "carol", Name: "carol"}
	dave  = adapters.User{ID: "dave", Name: "dave"}
)

// startRulesBot runs one bot process with cfg over one fake platform
// ("slack") and the shell tool in dir.
func startRulesBot(t *testing.T, cfg bot.Config, store approval.Store, dir string) (*adaptertest.Fake, *bot.Bot) {
	t.Helper()
	return startRulesBotOn(t, cfg, store, dir, adaptertest.NewFake("slack"), nil)
}

// startRulesBotOn is startRulesBot on the fake f, with onCall answering
// for on-call approvers (nil: none).
func startRulesBotOn(t *testing.T, cfg bot.Config, store approval.Store, dir string, f *adaptertest.Fake, onCall *oncall.Resolver) (*adaptertest.Fake, *bot.Bot) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg, pol := shellOnly(t, dir)
	b, err := bot.New(cfg, []adapters.Adapter{f}, agent.Config{}, bot.Deps{Tools: reg, Policy: pol, Store: store, Log: log, OnCall: onCall})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- b.Run(context.Background()) }()
	var once sync.Once
	end := func() {
		once.Do(func() {
			f.End(t)
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run = %v", err)
				}
			case <-time.After(waitLimit):
				t.Error("the bot did not return at the end of input")
			}
		})
	}
	t.Cleanup(end)
	ends[f] = end
	return f, b
}

// shellOnly is the command tool rooted at dir, alone in its registry,
// and the default policy: what most bot tests run calls with.
func shellOnly(t *testing.T, dir string) (*tools.Registry, *risk.Policy) {
	t.Helper()
	sh, err := shelltool.New(shelltool.Config{Root: dir})
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
	return reg, pol
}

// ends ends a rules bot's input and waits for its Run, by its fake.
var ends = map[*adaptertest.Fake]func(){}

func twoOf(approvers ...string) bot.Config {
	two := 2
	return bot.Config{Default: bot.Policy{Approvers: approvers, Settings: rules.Settings{ApprovalsRequired: &two}}}
}

// TestTwoOfThreeOnTwoReplicas: a call that needs two of three approvers,
// on two bot processes sharing one store (real Redis, and the shared
// memory store): the card says who and how many; the first approval is
// counted and shown in place, and nothing runs; the requester's approval
// and a repeat are refused privately with who can; then the two last
// approvers click at once, one on each replica: the call runs exactly
// once, and one of them is told it was already decided.
func TestTwoOfThreeOnTwoReplicas(t *testing.T) {
	for _, st := range sharedStores() {
		t.Run(st.name, func(t *testing.T) {
			s1, s2 := st.pair(t)
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "tmp_a"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := twoOf("bob", "carol", "dave")
			f1, _ := startRulesBot(t, cfg, s1, dir)
			f2, _ := startRulesBot(t, cfg, s2, dir)
			place := adapters.Place{Channel: "C1", Thread: "T1"}
			f1.Say(t, adaptertest.Alice, place, "!run rm -f ./tmp_a")
			ref, c := waitState(t, f1, "pending")
			if want := "Needs two approvals from @bob, @carol or @dave."; !strings.Contains(c.StateLine, want) {
				t.Errorf("the card's state line %q does not say %q", c.StateLine, want)
			}

			f1.Click(t, adaptertest.Alice, place, ref, c.Buttons[0], "")
			waitFor(t, "alice's refusal", func() bool {
				return strings.Contains(strings.Join(f1.Notices(adaptertest.Alice), "\n"), "You asked for this call, so your approval does not count: it needs two approvals from @bob, @carol or @dave.")
			})
			f1.Click(t, adaptertest.Bob, place, ref, c.Buttons[0], "")
			waitFor(t, "the count on the card", func() bool {
				m, _ := f1.Message(ref)
				return m.Card != nil && strings.Contains(m.Card.StateLine, "1 of 2: bob ✓ — one more from @bob, @carol or @dave")
			})
			f2.Click(t, adaptertest.Bob, place, ref, c.Buttons[0], "")
			waitFor(t, "bob's repeat refused", func() bool {
				return strings.Contains(strings.Join(f2.Notices(adaptertest.Bob), "\n"), "You have already approved this: 1 of 2: bob ✓")
			})
			if _, err := os.Stat(filepath.Join(dir, "tmp_a")); err != nil {
				t.Fatalf("the call ran after one approval of two: %v", err)
			}

			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); f1.Click(t, carol, place, ref, c.Buttons[0], "") }()
			go func() { defer wg.Done(); f2.Click(t, dave, place, ref, c.Buttons[0], "") }()
			wg.Wait()
			var a *approval.Approval
			waitFor(t, "the run", func() bool {
				var err error
				a, err = s1.Get(context.Background(), c.ApprovalID)
				return err == nil && a.State.Final()
			})
			if a.State != approval.Done {
				t.Fatalf("state = %s, want done", a.State)
			}
			waitFor(t, "the loser's notice", func() bool {
				n := strings.Join(append(f1.Notices(carol), f2.Notices(dave)...), "\n")
				return strings.Contains(n, "is already ")
			})
			p, err := s1.Progress(context.Background(), c.ApprovalID)
			if err != nil || p.Have() != 2 || p.Votes[0].By.ID != "bob" {
				t.Errorf("progress = %+v, %v; want bob and one of carol and dave", p, err)
			}
			ran := func() int {
				n := 0
				for _, f := range []*adaptertest.Fake{f1, f2} {
					n += strings.Count(flattenAll(f), "`rm -f ./tmp_a` exit code 0")
				}
				return n
			}
			waitFor(t, "the run's reply", func() bool { return ran() > 0 })
			ends[f1]()
			ends[f2]()
			if ran := ran(); ran != 1 {
				t.Errorf("the run's reply came %d times, want once", ran)
			}
		})
	}
}

// TestDirectMessageDeadEnd: a card in a direct conversation that needs a
// second person is not a dead end: it says that nobody else sees it and
// where it can be decided, and offers no Approve.
func TestDirectMessageDeadEnd(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tmp_a"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	mem := sharedStores()[0]
	s, _ := mem.pair(t)
	cfg := bot.Config{Default: bot.Policy{Settings: rules.Settings{ApprovalChannel: "C0456OPS"}}}
	f, b := startRulesBot(t, cfg, s, dir)
	place := adapters.Place{Channel: "D1", Thread: "D1"}
	f.Deliver(t, adapters.Event{ID: "dm-1", User: adaptertest.Alice, Place: place, Text: "!run rm -f ./tmp_a", Direct: true})
	var c adapters.Card
	waitFor(t, "the card in the direct message", func() bool {
		for r, cd := range cards(f) {
			if strings.HasPrefix(r, "D1/") && cd.State == "pending" {
				c = cd
				return true
			}
		}
		return false
	})
	if want := "Only you can see this conversation, and this call needs an approval from someone else: it can be decided in #C0456OPS."; !strings.Contains(c.StateLine, want) {
		t.Errorf("the DM card says %q; want %q", c.StateLine, want)
	}
	if len(c.Buttons) != 2 || c.Buttons[0].Approve || c.Buttons[1].Approve {
		t.Errorf("the DM card's buttons = %+v; want Cancel and Edit, no Approve", c.Buttons)
	}

	// The card is also in the approval channel, where an approver can
	// decide it; the direct message learns the outcome.
	var ref string
	var cp adapters.Card
	waitFor(t, "the card in the approval channel", func() bool {
		for r, cd := range cards(f) {
			if strings.HasPrefix(r, "C0456OPS/") {
				ref, cp = r, cd
				return true
			}
		}
		return false
	})
	if len(cp.Buttons) == 0 || !cp.Buttons[0].Approve || !strings.Contains(cp.StateLine, "asked in a direct message") {
		t.Fatalf("the approval channel's card: %q, buttons %+v", cp.StateLine, cp.Buttons)
	}
	ops := adapters.Place{Channel: "C0456OPS"}
	f.Click(t, adaptertest.Alice, ops, ref, cp.Buttons[0], "")
	waitFor(t, "alice's own approval refused", func() bool {
		return strings.Contains(strings.Join(f.Notices(adaptertest.Alice), "\n"), "your approval does not count")
	})
	f.Click(t, carol, adapters.Place{Channel: "C9"}, ref, cp.Buttons[0], "")
	waitFor(t, "a click from a third channel refused", func() bool {
		return strings.Contains(strings.Join(f.Notices(carol), "\n"), "That approval belongs to another channel")
	})
	f.Click(t, adaptertest.Bob, ops, ref, cp.Buttons[0], "")
	waitFor(t, "both cards done", func() bool {
		m, _ := f.Message(ref)
		return m.Card != nil && m.Card.State == "done" && c.ApprovalID == m.Card.ApprovalID
	})
	waitFor(t, "the direct message's card done", func() bool {
		for r, cd := range cards(f) {
			if strings.HasPrefix(r, "D1/") && cd.State == "done" {
				return true
			}
		}
		return false
	})
	if _, err := os.Stat(filepath.Join(dir, "tmp_a")); err == nil {
		t.Error("the call approved in the approval channel did not run")
	}
	// The copy is shown done: the process forgets it (issue 24: no map
	// grows without being freed).
	waitFor(t, "the finished copy forgotten", func() bool { return bot.Copies(b) == 0 })
}

// TestReminderAndEscalation: a waiting card's approvers are reminded once
// at remind_after, in its thread; at escalate_after escalate_to join the
// approvers and are told, and then one of them can approve it.
func TestReminderAndEscalation(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tmp_a"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := sharedStores()[0].pair(t)
	remind, escalate := 300*time.Millisecond, 900*time.Millisecond
	cfg := bot.Config{SweepInterval: 100 * time.Millisecond, Default: bot.Policy{Approvers: []string{"bob", "carol"},
		Settings: rules.Settings{RemindAfter: &remind, EscalateAfter: &escalate, EscalateTo: []string{"dave"}}}}
	f, _ := startRulesBot(t, cfg, s, dir)
	place := adapters.Place{Channel: "C1", Thread: "T1"}
	f.Say(t, adaptertest.Alice, place, "!run rm -f ./tmp_a")
	ref, c := waitState(t, f, "pending")
	waitFor(t, "the reminder", func() bool {
		return strings.Contains(flattenAll(f), "Reminder: approval "+c.ApprovalID+" (rm -f ./tmp_a) still waits for a decision (no approval yet, 1 needed): approve or cancel it.")
	})
	waitFor(t, "the escalation", func() bool {
		return strings.Contains(flattenAll(f), "Escalated: approval "+c.ApprovalID) && strings.Contains(flattenAll(f), "@dave may now decide it too (no approval yet, 1 needed).") &&
			strings.Contains(flattenAll(f), "Needs an approval from @bob, @carol or @dave.")
	})
	if n := strings.Count(flattenAll(f), "Reminder: approval "); n != 1 {
		t.Errorf("%d reminders, want one", n)
	}
	// The adapter is given whom to mention, apart from the text.
	_, contents := f.Messages()
	for _, m := range contents {
		switch {
		case strings.HasPrefix(m.Text, "Reminder: "):
			if want := []string{"bob", "carol"}; !slices.Equal(m.Mentions, want) {
				t.Errorf("the reminder mentions %q, want %q", m.Mentions, want)
			}
		case strings.HasPrefix(m.Text, "Escalated: "):
			if want := []string{"dave", "bob", "carol"}; !slices.Equal(m.Mentions, want) {
				t.Errorf("the escalation mentions %q, want %q", m.Mentions, want)
			}
		case len(m.Mentions) > 0:
			t.Errorf("%q mentions %q", m.Text, m.Mentions)
		}
	}
	f.Click(t, dave, place, ref, c.Buttons[0], "")
	waitState(t, f, "done")
}

// TestPendingPrivately: a private !pending (Discord's /countersign
// pending) lists, to the asker alone, the cards they may decide.
func TestPendingPrivately(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tmp_a"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := sharedStores()[0].pair(t)
	f, _ := startRulesBot(t, twoOf("bob", "carol"), s, dir)
	place := adapters.Place{Channel: "C1", Thread: "T1"}
	f.Say(t, adaptertest.Alice, place, "!run rm -f ./tmp_a")
	_, c := waitState(t, f, "pending")
	before := len(flattenAll(f))
	f.Deliver(t, adapters.Event{ID: "p-1", User: adaptertest.Bob, Place: place, Text: "!pending", Private: true, Reply: "p-1"})
	f.Deliver(t, adapters.Event{ID: "p-2", User: dave, Place: place, Text: "!pending", Private: true, Reply: "p-2"})
	waitFor(t, "bob's private list", func() bool {
		n := strings.Join(f.Notices(adaptertest.Bob), "\n")
		return strings.Contains(n, "1 card in this channel waits for your decision:\n  "+c.ApprovalID+"  rm -f ./tmp_a (asked by alice,") &&
			strings.Contains(n, "Needs two approvals from @bob or @carol.")
	})
	waitFor(t, "dave's private answer", func() bool {
		return strings.Contains(strings.Join(f.Notices(dave), "\n"), "No card in this channel waits for your decision.")
	})
	if len(flattenAll(f)) != before {
		t.Errorf("a private !pending posted in the channel:\n%s", flattenAll(f)[before:])
	}
}

// TestPreviewChangeResetsVotes: when the blast radius changes between two
// approvals, the later one is not counted, the approvals given before are
// forgotten (they approved another radius), and the card shows the new
// radius; the count then starts again.
func TestPreviewChangeResetsVotes(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tmp_a"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := sharedStores()[0].pair(t)
	f, _ := startRulesBot(t, twoOf("bob", "carol", "dave"), s, dir)
	place := adapters.Place{Channel: "C1", Thread: "T1"}
	f.Say(t, adaptertest.Alice, place, "!run rm -f ./tmp_*")
	ref, c := waitState(t, f, "pending")
	f.Click(t, adaptertest.Bob, place, ref, c.Buttons[0], "")
	waitFor(t, "bob's approval counted", func() bool {
		m, _ := f.Message(ref)
		return m.Card != nil && strings.Contains(m.Card.StateLine, "1 of 2: bob ✓")
	})
	if err := os.WriteFile(filepath.Join(dir, "tmp_b"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f.Click(t, carol, place, ref, c.Buttons[0], "")
	waitFor(t, "carol told the radius changed", func() bool {
		return strings.Contains(strings.Join(f.Notices(carol), "\n"), "The 1 approval given before no longer counts")
	})
	waitFor(t, "the card with the new radius and no count", func() bool {
		m, _ := f.Message(ref)
		return m.Card != nil && m.Card.Preview != nil && strings.Contains(strings.Join(m.Card.Preview.Items, " "), "tmp_b") &&
			strings.Contains(m.Card.StateLine, "Needs two approvals from")
	})
	p, err := s.Progress(context.Background(), c.ApprovalID)
	if err != nil || p.Have() != 0 {
		t.Errorf("progress after the radius changed = %+v, %v; want no votes", p, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "tmp_a")); err != nil {
		t.Error("the call ran although the radius changed under it")
	}
}

// TestReminderAfterRestart: a card drawn by one bot, which stops before its
// reminder is due, is reminded by another bot started afterwards on the
// same Redis store (the reminder times are read from the store).
func TestReminderAfterRestart(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tmp_a"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s1, s2 := sharedStores()[1].pair(t)
	remind := 300 * time.Millisecond
	cfg := bot.Config{Default: bot.Policy{Approvers: []string{"bob", "carol"},
		Settings: rules.Settings{RemindAfter: &remind}}}
	first := cfg
	first.SweepInterval = time.Hour // this one never sweeps: it stops before the reminder
	f1, _ := startRulesBot(t, first, s1, dir)
	place := adapters.Place{Channel: "C1", Thread: "T1"}
	f1.Say(t, adaptertest.Alice, place, "!run rm -f ./tmp_a")
	_, c := waitState(t, f1, "pending")
	ends[f1]()
	second := cfg
	second.SweepInterval = 100 * time.Millisecond
	f2, _ := startRulesBot(t, second, s2, dir)
	want := "Reminder: approval " + c.ApprovalID + " (rm -f ./tmp_a) still waits for a decision"
	waitFor(t, "the reminder from the second bot", func() bool {
		return strings.Contains(flattenAll(f2), want)
	})
	if strings.Contains(flattenAll(f1), "Reminder: approval ") {
		t.Error("the first bot, stopped, reminded")
	}
}
