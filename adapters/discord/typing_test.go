package discord

import (
	"context"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/discord/discordtest"
)

// TestTypingWhileTheTurnWorks: the turn's status is the typing
// indicator: sent at once, renewed while the model works, stopped (no
// renewal after) when the bot waits on a person and when the turn ends.
func TestTypingWhileTheTurnWorks(t *testing.T) {
	fake := discordtest.New(t)
	a := newAdapter(t, fake, Config{})
	a.typing.every = 20 * time.Millisecond
	events := run(t, a)
	ch := fake.AddChannel("ops")
	fake.WaitSessions(t, 1)
	fake.Say(t, alice, ch, "why is the disk full?", true)
	e := next(t, events)
	where := where(e.Place)
	ctx := context.Background()

	turn := adapters.StartTurn(a, e.Place, e.User, nil)
	if turn.Streaming() {
		t.Error("Discord reports a stream it does not have")
	}
	if !turn.Status(ctx, adapters.StatusThinking) {
		t.Fatal("the status was not shown")
	}
	if n := len(fake.Typing(where)); n != 1 {
		t.Fatalf("%d typing indicators when SetStatus returned, want 1 at once", n)
	}
	fake.Wait(t, "the typing indicator renewed twice", func() bool { return len(fake.Typing(where)) >= 3 })
	turn.Status(ctx, adapters.StatusRunning("df -h")) // already typing: no second loop
	turn.Status(ctx, adapters.StatusWaiting)
	// SetStatus returns once the loop that renews the indicator has
	// ended (typers.end waits for it): none is left to renew it, while a
	// witness in another channel is renewed three times.
	stopped := len(fake.Typing(where))
	if typing(a, where) {
		t.Error("the typing indicator is still renewed while the bot waits on a person")
	}
	threeRenewals(t, a, fake)
	if n := len(fake.Typing(where)); n != stopped {
		t.Errorf("typing renewed %d times while the bot waits on a person", n-stopped)
	}
	turn.Status(ctx, adapters.StatusRunning("journalctl --vacuum-size=1G"))
	fake.Wait(t, "typing again for the run", func() bool { return len(fake.Typing(where)) > stopped+1 })
	turn.End(ctx, "")
	ended := len(fake.Typing(where))
	if typing(a, where) {
		t.Error("the typing indicator is still renewed after the turn ended")
	}
	threeRenewals(t, a, fake)
	if n := len(fake.Typing(where)); n != ended {
		t.Errorf("typing renewed %d times after the turn ended", n-ended)
	}
}

// threeRenewals shows typing in a witness channel until it has been
// renewed three times: time enough for any other loop to renew too.
func threeRenewals(t *testing.T, a *Adapter, fake *discordtest.Server) {
	t.Helper()
	ctx := context.Background()
	witness := adapters.Place{Channel: fake.AddChannel("witness")}
	if err := a.SetStatus(ctx, witness, adapters.StatusThinking); err != nil {
		t.Fatal(err)
	}
	fake.Wait(t, "the witness's typing renewed three times", func() bool { return len(fake.Typing(witness.Channel)) >= 4 })
	_ = a.SetStatus(ctx, witness, "")
}

// typing reports whether a loop renews the typing indicator in ch.
func typing(a *Adapter, ch string) bool {
	a.typing.mu.Lock()
	defer a.typing.mu.Unlock()
	return a.typing.loops[ch] != nil
}

// TestTypingRefused: a channel Discord will not type in is an error, so
// the turn goes on without a status, and nothing keeps trying.
func TestTypingRefused(t *testing.T) {
	fake := discordtest.New(t)
	a := newAdapter(t, fake, Config{})
	run(t, a)
	fake.WaitSessions(t, 1)
	if err := a.SetStatus(context.Background(), adapters.Place{Channel: "404", Thread: "404"}, adapters.StatusThinking); err == nil {
		t.Fatal("typing in an unknown channel reported no error")
	}
	a.typing.mu.Lock()
	n := len(a.typing.loops)
	a.typing.mu.Unlock()
	if n != 0 {
		t.Errorf("%d typing loops left after a refusal", n)
	}
}
