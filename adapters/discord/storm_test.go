package discord

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
	"github.com/countersign/countersign/adapters/discord/discordtest"
)

// A storm of 429s and 5xx on message creation delays cards, never deletes
// them: every card posted through it arrives, once.
func TestStormDelaysCardsNeverDeletes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
	}{
		{"429", http.StatusTooManyRequests},
		{"502", http.StatusBadGateway},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := discordtest.New(t)
			a := newAdapter(t, fake, Config{})
			a.send.Base, a.send.Max = 4*time.Millisecond, 20*time.Millisecond
			events := run(t, a)
			place, _ := postCard(t, fake, a, events)
			const cards = 20
			fake.Storm(http.MethodPost, "/messages", 60, tc.status, 10*time.Millisecond)
			var wg sync.WaitGroup
			errs := make([]error, cards)
			for i := range cards {
				wg.Go(func() {
					c := adaptertest.PendingCard(fmt.Sprintf("card%02d", i))
					c.ExpiresAt = time.Now().Add(time.Minute)
					_, errs[i] = a.Post(context.Background(), place, adapters.Content{Card: &c})
				})
			}
			wg.Wait()
			lost := 0
			for i, err := range errs {
				if err != nil {
					lost++
					t.Errorf("card%02d: %v", i, err)
				}
			}
			seen := map[string]int{}
			for _, m := range fake.InChannel(place.Thread) {
				for _, c := range m.Components {
					js := fmt.Sprint(c)
					for i := range cards {
						if id := fmt.Sprintf("card%02d", i); strings.Contains(js, id) {
							seen[id]++
						}
					}
				}
			}
			for i := range cards {
				if id := fmt.Sprintf("card%02d", i); seen[id] == 0 {
					t.Errorf("%s never shown", id)
				}
			}
			t.Logf("storm of %d refusals (%s): %d of %d cards lost", fake.Stormed(), tc.name, lost, cards)
			if a.Undelivered() != 0 {
				t.Errorf("Undelivered = %d; want 0", a.Undelivered())
			}
		})
	}
}

// What cannot be delivered by its deadline is counted, and said in its
// thread once Discord answers again.
func TestUndeliveredIsCountedAndTold(t *testing.T) {
	fake := discordtest.New(t)
	a := newAdapter(t, fake, Config{})
	a.send.Base, a.send.Max = 4*time.Millisecond, 20*time.Millisecond
	events := run(t, a)
	place, _ := postCard(t, fake, a, events)
	fake.Storm("*", "", -1, http.StatusServiceUnavailable, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	_, err := a.Post(ctx, place, adapters.Content{Text: "the answer is 42"})
	cancel()
	if err == nil {
		t.Fatal("a post through an endless outage succeeded")
	}
	var _ adapters.Undeliverable = a
	if a.Undelivered() != 1 {
		t.Errorf("Undelivered = %d; want 1", a.Undelivered())
	}
	fake.Calm()
	if _, err := a.Post(context.Background(), place, adapters.Content{Text: "back"}); err != nil {
		t.Fatal(err)
	}
	fake.Wait(t, "the apology in the thread", func() bool {
		for _, m := range fake.InChannel(place.Thread) {
			if strings.Contains(m.Content, "could not deliver") && strings.Contains(m.Content, "the answer is 42") {
				return true
			}
		}
		return false
	})
}

// The long output behind a cut reply reaches Discord whole, as
// output.txt beside the message, which says so.
func TestFullOutputIsAttached(t *testing.T) {
	fake := discordtest.New(t)
	a := newAdapter(t, fake, Config{})
	events := run(t, a)
	place, _ := postCard(t, fake, a, events)
	full := strings.Repeat("line of output\n", 5000)
	id, err := a.Post(context.Background(), place, adapters.Content{Text: "exit 0\n```\n…the last lines\n```", Full: full})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := fake.Message(id)
	if len(m.Attachments) != 1 || m.Attachments[0].Filename != "output.txt" || m.Attachments[0].Content != full {
		t.Fatalf("attachments %+v; want output.txt with the whole output", len(m.Attachments))
	}
	if !strings.Contains(m.Content, "output.txt") {
		t.Errorf("the message does not say the output is attached: %q", m.Content)
	}
}
