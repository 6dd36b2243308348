package slack_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/slack"
)

func stormCard(id string) *adapters.Card {
	return &adapters.Card{ApprovalID: id, Title: "Run a command", Tool: "shell", Operation: "echo " + id,
		Risk: "medium", State: "pending", ExpiresAt: time.Now().Add(time.Minute),
		Buttons: []adapters.Button{{Label: "Approve", Approve: true, Value: id}, {Label: "Cancel", Value: id}}}
}

// A storm of 429s and 5xx on chat.postMessage delays cards, never
// deletes them: every card posted through it arrives, once, in order.
func TestStormDelaysCardsNeverDeletes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
	}{
		{"429", http.StatusTooManyRequests},
		{"503", http.StatusServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake, ad, _ := setup(t)
			slack.SetRetryPauses(ad, 4*time.Millisecond, 20*time.Millisecond)
			p := adapters.Place{Channel: channel, Thread: fake.Store(alice, channel, "", "start")}
			const cards = 20
			fake.Storm("chat.postMessage", 60, tc.status, 0)
			var wg sync.WaitGroup
			errs := make([]error, cards)
			for i := range cards {
				wg.Go(func() {
					_, errs[i] = ad.Post(context.Background(), p, adapters.Content{Card: stormCard(fmt.Sprintf("card%02d", i))})
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
			// The lane sends them one at a time: the first card alone
			// meets all the refusals, in a row, and still arrives.
			seen := map[string]int{}
			for _, m := range fake.BotMessages(channel) {
				for i := range cards {
					if id := fmt.Sprintf("card%02d", i); strings.Contains(string(m.Blocks), "echo "+id) {
						seen[id]++
					}
				}
			}
			for i := range cards {
				if id := fmt.Sprintf("card%02d", i); seen[id] != 1 {
					t.Errorf("%s shown %d times; want once", id, seen[id])
				}
			}
			t.Logf("storm of %d refusals (%s): %d of %d cards lost, %d undelivered", fake.Stormed(), tc.name, lost, cards, ad.Undelivered())
			if ad.Undelivered() != 0 {
				t.Errorf("Undelivered = %d; want 0", ad.Undelivered())
			}
		})
	}
}

// A notice and an update wait out a storm too.
func TestStormDelaysNoticesAndUpdates(t *testing.T) {
	fake, ad, _ := setup(t)
	slack.SetRetryPauses(ad, 4*time.Millisecond, 20*time.Millisecond)
	p := adapters.Place{Channel: channel, Thread: fake.Store(alice, channel, "", "start")}
	ref, err := ad.Post(context.Background(), p, adapters.Content{Card: stormCard("upd1")})
	if err != nil {
		t.Fatal(err)
	}
	fake.Storm("chat.update", 4, http.StatusBadGateway, 0)
	c := stormCard("upd1")
	c.State, c.StateLine, c.Buttons = "done", "exit code 0", nil
	if err := ad.Update(context.Background(), p, ref, adapters.Content{Card: c}); err != nil {
		t.Errorf("update through four 502s: %v", err)
	}
	fake.Storm("chat.postEphemeral", 5, http.StatusTooManyRequests, 0)
	if err := ad.Notify(context.Background(), adapters.Notice{Place: p, User: adapters.User{ID: alice.ID}, Text: "only you"}); err != nil {
		t.Errorf("notice through five 429s: %v", err)
	}
	if got := fake.Ephemerals(alice.ID); len(got) != 1 || got[0].Text != "only you" {
		t.Errorf("ephemerals = %+v; want the one notice", got)
	}
}

// What cannot be delivered by its deadline is counted, and said in its
// thread once Slack answers again.
func TestUndeliveredIsCountedAndTold(t *testing.T) {
	fake, ad, _ := setup(t)
	slack.SetRetryPauses(ad, 4*time.Millisecond, 20*time.Millisecond)
	p := adapters.Place{Channel: channel, Thread: fake.Store(alice, channel, "", "start")}
	fake.Storm("*", -1, http.StatusServiceUnavailable, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	_, err := ad.Post(ctx, p, adapters.Content{Text: "the answer is 42"})
	cancel()
	if err == nil {
		t.Fatal("a post through an endless outage succeeded")
	}
	var _ adapters.Undeliverable = ad
	if ad.Undelivered() != 1 {
		t.Errorf("Undelivered = %d; want 1", ad.Undelivered())
	}
	fake.Calm()
	if _, err := ad.Post(context.Background(), p, adapters.Content{Text: "back"}); err != nil {
		t.Fatal(err)
	}
	fake.Wait(t, "the apology in the thread", func() bool {
		for _, m := range fake.Thread(channel, p.Thread) {
			if strings.Contains(m.Text, "could not deliver") && strings.Contains(m.Text, "the answer is 42") {
				return true
			}
		}
		return false
	})
}

// A thread follow-up is never dropped because conversations.replies
// failed: a passing storm is waited out, and one that outlasts the lookup
// still delivers the message, as a follow-up.
func TestThreadFollowUpSurvivesAFailedLookup(t *testing.T) {
	fake, ad, r := setup(t)
	slack.SetRetryPauses(ad, 4*time.Millisecond, 20*time.Millisecond)
	// A thread the bot posted in from another replica: this process has
	// never seen it, and must look it up.
	root := fake.Store(alice, channel, "", "a thread")
	other := newAdapter(t, fake, slack.Config{})
	if _, err := other.Post(context.Background(), adapters.Place{Channel: channel, Thread: root}, adapters.Content{Text: "on it"}); err != nil {
		t.Fatal(err)
	}
	fake.Storm("conversations.replies", 3, http.StatusServiceUnavailable, 0)
	fake.Say(alice, channel, root, "and the logs too")
	if e := r.next(t); e.Text != "and the logs too" {
		t.Errorf("after three 503s the follow-up arrived as %q", e.Text)
	}
	root2 := fake.Store(alice, channel, "", "another thread")
	if _, err := other.Post(context.Background(), adapters.Place{Channel: channel, Thread: root2}, adapters.Content{Text: "on it"}); err != nil {
		t.Fatal(err)
	}
	fake.Storm("conversations.replies", -1, http.StatusTooManyRequests, 30)
	fake.Say(alice, channel, root2, "still there?")
	if e := r.next(t); e.Text != "still there?" {
		t.Errorf("through an endless 429 the follow-up arrived as %q", e.Text)
	}
}
