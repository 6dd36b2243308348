package discord

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
	"github.com/countersign/countersign/adapters/discord/discordtest"
)

// TestNamesNotIDs: a role the bot's words name by id (approvers:
// ["role:777"], "@777") reads as the role's name in the guild, and a person
// named by id as their name, on a card, in a message and in a direct
// notice; an id Discord does not know stays; a ping stays a ping; the
// roles and each person are looked up once.
func TestNamesNotIDs(t *testing.T) {
	fake := discordtest.New(t)
	a := newAdapter(t, fake, Config{})
	ch := fake.AddChannel("ops")
	fake.AddRole("777", "dba")
	carol := discordtest.User{ID: "123456789012345678", Name: "carol"}
	fake.AddUser(carol)
	p := adapters.Place{Channel: ch, Thread: ch}
	card := adaptertest.PendingCard("a1b2c3")
	card.StateLine = "waiting for a decision · Needs an approval from @123456789012345678 or members of @777."
	gone := adaptertest.PendingCard("a1b2c3")
	gone.StateLine = "waiting for a decision · Needs an approval from @778 or @123456789012345679."
	tests := []struct {
		name    string
		content adapters.Content
		want    string
		notWant string
	}{
		{"a card", adapters.Content{Card: &card}, "Needs an approval from carol or members of @dba.", "@777"},
		{"unknown ids stay", adapters.Content{Card: &gone}, "Needs an approval from @778 or @123456789012345679.", "@dba"},
		{"a message with a ping", adapters.Content{Text: "Escalated: @777 may now decide it too.", Mentions: []string{"role:777"}}, "<@&777> Escalated: @dba may now decide it too.", "@777 may"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ref, err := a.Post(context.Background(), p, tc.content)
			if err != nil {
				t.Fatal(err)
			}
			m, _ := fake.Message(ref)
			v := view(m)
			if !strings.Contains(v, tc.want) || strings.Contains(v, tc.notWant) {
				t.Errorf("the message reads:\n%s\nwant %q and no %q", v, tc.want, tc.notWant)
			}
		})
	}
	t.Run("a direct notice", func(t *testing.T) {
		if err := a.Notify(context.Background(), adapters.Notice{Place: p, User: adapters.User{ID: alice.ID}, Text: "You cannot approve a1b2c3: it needs @777."}); err != nil {
			t.Fatal(err)
		}
		if n := fake.Notices(alice); len(n) != 1 || n[0] != "You cannot approve a1b2c3: it needs @dba." {
			t.Errorf("alice's notices %q; want the role by name", n)
		}
	})
	var roles, users int
	for _, r := range fake.Requests() {
		if strings.HasSuffix(r, "/roles") {
			roles++
		}
		if strings.Contains(r, "/users/1234") {
			users++
		}
	}
	if roles != 1 || users != 2 {
		t.Errorf("GET roles %d times, GET users %d times; want 1 and 2 (each id once): %q", roles, users, slices.Compact(fake.Requests()))
	}
}

// TestPermalink: a posted card's address is Discord's own message link,
// in its guild and thread (the gateway's card_url).
func TestPermalink(t *testing.T) {
	fake := discordtest.New(t)
	a := newAdapter(t, fake, Config{})
	ch := fake.AddChannel("ops")
	p := adapters.Place{Channel: ch, Thread: ch}
	card := adaptertest.PendingCard("a1b2c3")
	ref, err := a.Post(context.Background(), p, adapters.Content{Card: &card})
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.Extras().Permalink.Permalink(context.Background(), p, ref)
	if want := "https://discord.com/channels/" + discordtest.GuildID + "/" + ch + "/" + ref; err != nil || got != want {
		t.Errorf("Permalink = %q, %v; want %q", got, err, want)
	}
}
