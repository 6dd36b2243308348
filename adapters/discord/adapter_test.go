package discord

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
	"github.com/countersign/countersign/adapters/discord/discordtest"
	"github.com/countersign/countersign/internal/testenv"
)

var (
	alice = discordtest.User{ID: "111", Name: "alice"}
	bob   = discordtest.User{ID: "222", Name: "bob", Roles: []string{"555"}}
)

func next(t *testing.T, events <-chan adapters.Event) adapters.Event {
	t.Helper()
	select {
	case e := <-events:
		return e
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5s")
		return adapters.Event{}
	}
}

func none(t *testing.T, events <-chan adapters.Event, fake *discordtest.Server, ch string) {
	t.Helper()
	// A message the bot must ignore, then one it must take: the first
	// event to arrive must be the second.
	fake.Say(t, alice, ch, "marker", true)
	if e := next(t, events); e.Text != "marker" {
		t.Fatalf("got event %q before the marker: it should have been ignored", e.Text)
	}
}

// postCard posts a pending card into a fresh conversation and returns its
// place and message id.
func postCard(t *testing.T, fake *discordtest.Server, a *Adapter, events <-chan adapters.Event) (adapters.Place, string) {
	t.Helper()
	ch := fake.AddChannel("ops")
	fake.WaitSessions(t, 1)
	fake.Say(t, alice, ch, "clean up", true)
	e := next(t, events)
	c := adaptertest.PendingCard("a1b2c3")
	ref, err := a.Post(context.Background(), e.Place, adapters.Content{Card: &c})
	if err != nil {
		t.Fatalf("Post: %v", err)
	}
	return e.Place, ref
}

func TestMentionStartsThread(t *testing.T) {
	fake := discordtest.New(t)
	a := newAdapter(t, fake, Config{})
	events := run(t, a)
	ch := fake.AddChannel("ops")
	fake.WaitSessions(t, 1)
	id := fake.Say(t, bob, ch, "how full is the disk?", true)
	e := next(t, events)
	if e.Place.Channel != ch || e.Place.Thread != id || e.Text != "how full is the disk?" {
		t.Fatalf("event place %+v text %q; want channel %s, thread %s (started from the message)", e.Place, e.Text, ch, id)
	}
	if !slices.Equal(e.User.Roles, bob.Roles) {
		t.Errorf("roles = %v, want %v", e.User.Roles, bob.Roles)
	}
	if c, ok := fake.Channel(id); !ok || c.ParentID != ch || c.OwnerID != discordtest.BotID {
		t.Fatalf("no thread started from the message: %+v", c)
	}
	if _, err := a.Post(context.Background(), e.Place, adapters.Content{Text: "81%"}); err != nil {
		t.Fatal(err)
	}
	if got := fake.InChannel(id); len(got) != 1 || got[0].Content != "81%" {
		t.Errorf("the answer is not in the thread: %+v", got)
	}
	// A message in the bot's thread continues the conversation, with a
	// mention (no Message Content intent).
	fake.Say(t, bob, id, "and memory?", true)
	if e := next(t, events); e.Place != (adapters.Place{Channel: ch, Thread: id}) || e.Text != "and memory?" {
		t.Errorf("a reply in the thread arrived as %+v %q", e.Place, e.Text)
	}
	// Without a mention its text is withheld: the thread is told, once.
	fake.Say(t, bob, id, "and swap?", false)
	fake.Say(t, bob, id, "hello?", false)
	none(t, events, fake, ch)
	toldIn := func() int {
		n := 0
		for _, m := range fake.InChannel(id) {
			if strings.Contains(m.Content, "mention me") {
				n++
			}
		}
		return n
	}
	// The thread is told aside, so that a busy Discord holds no event.
	fake.Wait(t, "the thread told to mention the bot", func() bool { return toldIn() > 0 })
	if told := toldIn(); told != 1 {
		t.Errorf("the thread was told %d times to mention the bot, want 1", told)
	}
	// The same message again: one thread, the same event id, marked.
	fake.Redispatch(t)
	again := next(t, events)
	if again.Text != "marker" || !again.Redelivered {
		t.Errorf("redelivery = %+v", again)
	}
}

func TestMessageContentIntent(t *testing.T) {
	fake := discordtest.New(t)
	a := newAdapter(t, fake, Config{MessageContent: true})
	events := run(t, a)
	ch := fake.AddChannel("ops")
	fake.WaitSessions(t, 1)
	if fake.Intents()&(1<<15) == 0 {
		t.Fatalf("intents %b lack Message Content", fake.Intents())
	}
	fake.Say(t, alice, ch, "start", true)
	e := next(t, events)
	fake.Say(t, alice, e.Place.Thread, "no mention needed", false)
	if e := next(t, events); e.Text != "no mention needed" {
		t.Errorf("got %q", e.Text)
	}
	// Outside the bot's threads, talk without a mention is not for it.
	fake.Say(t, alice, ch, "chatter", false)
	none(t, events, fake, ch)
}

func TestDisallowedIntentIsExplained(t *testing.T) {
	fake := discordtest.New(t)
	fake.DisallowMessageContent()
	a := newAdapter(t, fake, Config{MessageContent: true})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := a.Run(ctx, adapters.HandlerFunc(func(context.Context, adapters.Event) {}))
	if err == nil || !strings.Contains(err.Error(), "Privileged Gateway Intents") {
		t.Fatalf("Run = %v; want an error saying to enable the intent", err)
	}
}

func TestDirectMessageAndBots(t *testing.T) {
	fake := discordtest.New(t)
	a := newAdapter(t, fake, Config{})
	events := run(t, a)
	fake.WaitSessions(t, 1)
	dm := fake.DM(alice)
	fake.Say(t, alice, dm, "hello", false)
	e := next(t, events)
	if !e.Direct || e.Place != (adapters.Place{Channel: dm, Thread: dm}) || e.Text != "hello" {
		t.Errorf("a DM arrived as %+v direct=%v %q", e.Place, e.Direct, e.Text)
	}
	// The bot's own answer comes back on the gateway: it starts nothing.
	if _, err := a.Post(context.Background(), e.Place, adapters.Content{Text: "<@" + discordtest.BotID + "> talking to myself"}); err != nil {
		t.Fatal(err)
	}
	fake.Wait(t, "the bot's message to be dispatched", func() bool { return len(fake.InChannel(dm)) == 2 })
	none(t, events, fake, fake.AddChannel("ops"))
}

func TestClickIsAnsweredBeforeTheHandlerReturns(t *testing.T) {
	fake := discordtest.New(t)
	a := newAdapter(t, fake, Config{})
	release := make(chan struct{})
	events := make(chan adapters.Event, 8)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- a.Run(ctx, adapters.HandlerFunc(func(_ context.Context, e adapters.Event) {
			events <- e
			if e.Decision != nil {
				e.Recorded() // recorded; then stuck on the store
				<-release
			}
		}))
	}()
	t.Cleanup(func() { cancel(); <-done })
	place, ref := postCard(t, fake, a, events)
	click := fake.Click(t, bob, ref, idApprove+"a1b2c3")
	r := fake.WaitResponse(t, click)
	close(release)
	if r.Type != responseDeferredUpdate || r.After > time.Second {
		t.Fatalf("first response type %d after %s; want a deferred update (6) at once", r.Type, r.After)
	}
	e := next(t, events)
	if e.Decision == nil || e.Decision.ApprovalID != "a1b2c3" || !e.Decision.Approve || e.Decision.Ref != ref || e.Place != place {
		t.Fatalf("click event = %+v", e)
	}
	if e.User.ID != bob.ID || !slices.Equal(e.User.Roles, bob.Roles) {
		t.Errorf("click by %+v, want bob with his roles", e.User)
	}
	// Refused: an ephemeral answer to that interaction; the card keeps
	// its buttons for the others.
	if err := a.Notify(context.Background(), adapters.Notice{Place: e.Place, User: e.User, Text: "you asked for this one: someone else must approve it", Reply: e.Reply}); err != nil {
		t.Fatal(err)
	}
	var eph []discordtest.Message
	for _, m := range fake.Messages() {
		if m.VisibleTo != "" {
			eph = append(eph, m)
		}
	}
	if len(eph) != 1 || eph[0].VisibleTo != bob.ID || eph[0].Flags&64 == 0 {
		t.Fatalf("ephemeral answers = %+v; want one to bob with flag 64", eph)
	}
	if m, _ := fake.Message(ref); m.Edits != 0 || !hasButton(m, idApprove+"a1b2c3") {
		t.Errorf("the refused click changed the card: %+v", m)
	}
}

func TestUpdateThroughTheTokenThenTheMessage(t *testing.T) {
	fake := discordtest.New(t)
	a := newAdapter(t, fake, Config{})
	var mu sync.Mutex
	now := time.Now()
	a.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	events := run(t, a)
	place, ref := postCard(t, fake, a, events)
	click := fake.Click(t, bob, ref, idApprove+"a1b2c3")
	next(t, events)
	fake.WaitResponse(t, click)
	edits := func(kind string) int {
		n := 0
		for _, r := range fake.Requests() {
			if strings.HasPrefix(r, "PATCH") && strings.Contains(r, kind) {
				n++
			}
		}
		return n
	}
	done := adaptertest.DoneCard("a1b2c3")
	if err := a.Update(context.Background(), place, ref, adapters.Content{Card: &done}); err != nil {
		t.Fatal(err)
	}
	if edits("/webhooks/") != 1 || edits("/channels/") != 0 {
		t.Fatalf("a fresh click's card was not edited through its token: %v", fake.Requests())
	}
	m, _ := fake.Message(ref)
	if len(discordtest.Buttons(m)) != 0 || !strings.Contains(view(m), "exit code 0") {
		t.Errorf("the card after the run: %s (components %v)", view(m), m.Components)
	}
	// 15 minutes later the token is not used any more.
	mu.Lock()
	now = now.Add(15 * time.Minute)
	mu.Unlock()
	if err := a.Update(context.Background(), place, ref, adapters.Content{Card: &done}); err != nil {
		t.Fatal(err)
	}
	if edits("/channels/") != 1 {
		t.Fatalf("after the token's lifetime the card was not edited as the bot's message: %v", fake.Requests())
	}
	// A token the server let expire early: the edit falls back.
	mu.Lock()
	now = time.Now()
	mu.Unlock()
	click2 := fake.Click(t, bob, ref, idApprove+"a1b2c3")
	next(t, events)
	fake.WaitResponse(t, click2)
	fake.ExpireToken(click2)
	if err := a.Update(context.Background(), place, ref, adapters.Content{Card: &done}); err != nil {
		t.Fatalf("Update with an expired token: %v", err)
	}
	if edits("/channels/") != 2 {
		t.Errorf("an expired token did not fall back to the message edit: %v", fake.Requests())
	}
}

func TestStopButton(t *testing.T) {
	fake := discordtest.New(t)
	a := newAdapter(t, fake, Config{})
	events := run(t, a)
	place, ref := postCard(t, fake, a, events)
	c := adaptertest.PendingCard("a1b2c3")
	c.State, c.Buttons = "running", []adapters.Button{{Label: "Stop", Stop: true, Value: "a1b2c3"}}
	if err := a.Update(context.Background(), place, ref, adapters.Content{Card: &c}); err != nil {
		t.Fatal(err)
	}
	click := fake.Click(t, bob, ref, idStop+"a1b2c3")
	if r := fake.WaitResponse(t, click); r.Type != responseDeferredUpdate {
		t.Errorf("first response %d, want 6", r.Type)
	}
	e := next(t, events)
	if e.Decision == nil || !e.Decision.Stop || e.Decision.Approve || e.Decision.ApprovalID != "a1b2c3" || e.Decision.Ref != ref {
		t.Errorf("a Stop click arrived as %+v", e.Decision)
	}
}

func TestUpdateErrors(t *testing.T) {
	fake := discordtest.New(t)
	a := newAdapter(t, fake, Config{})
	events := run(t, a)
	place, ref := postCard(t, fake, a, events)
	fake.RateLimitEdits(1, 1500*time.Millisecond)
	err := a.Update(adapters.TryOnce(context.Background()), place, ref, adapters.Content{Text: "x"})
	if d, ok := adapters.RetryAfter(err); !ok || d != 1500*time.Millisecond {
		t.Fatalf("Update on a 429 = %v; want a RateLimitError of 1.5s", err)
	}
	if err := a.Update(context.Background(), place, ref, adapters.Content{Text: "x"}); err != nil {
		t.Fatalf("Update after the wait: %v", err)
	}
	if err := a.Update(context.Background(), place, "123456", adapters.Content{Text: "x"}); !errors.Is(err, adapters.ErrGone) {
		t.Errorf("Update of a deleted message = %v, want ErrGone", err)
	}
}

func TestResumeLosesNothing(t *testing.T) {
	fake := discordtest.New(t)
	a := newAdapter(t, fake, Config{})
	events := run(t, a)
	ch := fake.AddChannel("ops")
	fake.WaitSessions(t, 1)
	fake.Drop()
	fake.Say(t, alice, ch, "sent while the bot was away", true)
	if e := next(t, events); e.Text != "sent while the bot was away" {
		t.Fatalf("got %q", e.Text)
	}
	if fake.Resumes() != 1 {
		t.Errorf("resumes = %d, want 1", fake.Resumes())
	}
	fake.AskReconnect()
	fake.Say(t, alice, ch, "after op 7", true)
	if e := next(t, events); e.Text != "after op 7" {
		t.Fatalf("got %q", e.Text)
	}
	if fake.Resumes() != 2 {
		t.Errorf("resumes after op 7 = %d, want 2", fake.Resumes())
	}
	// The adapter's own state, which the fake does not see change (the
	// resumed handler may run after the message's): polled.
	testenv.Eventually(t, 5*time.Second, a.Connected, "the session to report itself connected")
}

func TestSlashCommands(t *testing.T) {
	fake := discordtest.New(t)
	a := newAdapter(t, fake, Config{Guilds: []string{discordtest.GuildID}})
	events := run(t, a)
	ch := fake.AddChannel("ops")
	fake.WaitSessions(t, 1)
	fake.Wait(t, "the commands to be registered", func() bool { return len(fake.Commands()) > 0 })
	cmds := fake.Commands()
	raw, ok := cmds["/applications/"+discordtest.AppID+"/guilds/"+discordtest.GuildID+"/commands"]
	if !ok {
		t.Fatalf("no guild commands registered: %v", cmds)
	}
	var got []struct {
		Name    string `json:"name"`
		Options []struct {
			Name string `json:"name"`
		} `json:"options"`
	}
	_ = json.Unmarshal(raw, &got)
	if len(got) != 1 || got[0].Name != "countersign" || len(got[0].Options) != 4 {
		t.Fatalf("commands = %s", raw)
	}
	for _, tc := range []struct{ sub, opt, val, want string }{
		{"run", "command", "df -h", "!run df -h"},
		{"sql", "statement", "SELECT 1", "!sql SELECT 1"},
		{"ask", "text", "why is it slow?", "why is it slow?"},
		{"pending", "", "", "!pending"},
	} {
		id := fake.Command(t, alice, ch, "countersign", tc.sub, tc.opt, tc.val)
		e := next(t, events)
		if tc.sub == "pending" {
			// Answered privately, where it was asked: no thread (issue 19).
			if e.Text != tc.want || !e.Private || e.Place.Channel != ch {
				t.Errorf("/countersign pending = %q private %v at %+v; want a private %q in the channel", e.Text, e.Private, e.Place, tc.want)
			}
			if r := fake.WaitResponse(t, id); r.Type != responseDeferredMessage {
				t.Errorf("first response %d, want 5", r.Type)
			}
			continue
		}
		if e.Text != tc.want || e.Place.Channel != ch || e.Place.Thread == ch || e.Place.Thread == "" {
			t.Errorf("/countersign %s = %q at %+v; want %q in a new thread", tc.sub, e.Text, e.Place, tc.want)
		}
		if r := fake.WaitResponse(t, id); r.Type != responseDeferredMessage {
			t.Errorf("first response %d, want 5", r.Type)
		}
		if th, ok := fake.Channel(e.Place.Thread); !ok || th.ParentID != ch {
			t.Errorf("no thread %s in %s", e.Place.Thread, ch)
		}
	}
}

func TestHTTPInteractions(t *testing.T) {
	fake := discordtest.New(t)
	a := newAdapter(t, fake, Config{Interactions: "http", Listen: "127.0.0.1:0", MaxBodyBytes: 4096})
	events := run(t, a)
	place, ref := postCard(t, fake, a, events)
	fake.SetInteractionsURL("http://" + a.Addr() + InteractionsPath)

	click := fake.Click(t, bob, ref, idApprove+"a1b2c3")
	if ix, _ := fake.Interaction(click); ix.HTTPStatus != http.StatusOK || len(ix.Responses) != 1 || ix.Responses[0].Type != responseDeferredUpdate {
		t.Fatalf("a signed click: status %d, responses %+v", ix.HTTPStatus, ix.Responses)
	}
	e := next(t, events)
	if e.Decision == nil || e.Redelivered || e.Place != place {
		t.Fatalf("event %+v", e)
	}
	if err := a.Notify(context.Background(), adapters.Notice{User: e.User, Text: "not you", Reply: e.Reply}); err != nil {
		t.Fatal(err)
	}
	if n := fake.Notices(bob); len(n) != 1 || n[0] != "not you" {
		t.Errorf("bob's notices %q", n)
	}

	ping := []byte(`{"id":"1","application_id":"` + discordtest.AppID + `","type":1,"token":"t","version":1}`)
	if status, body := fake.PostInteraction(ping, true); status != 200 || !strings.Contains(string(body), `"type":1`) {
		t.Errorf("PING = %d %s; want 200 PONG", status, body)
	}
	if status, _ := fake.PostInteraction(ping, false); status != http.StatusUnauthorized {
		t.Errorf("a forged signature = %d, want 401", status)
	}
	if status, _ := fake.ReplayInteraction(ping, time.Now().Add(-time.Hour)); status != http.StatusUnauthorized {
		t.Errorf("a validly signed request an hour old = %d, want 401", status)
	}
	if status, _ := fake.PostInteraction([]byte("not json"), false); status != http.StatusUnauthorized {
		t.Errorf("a forged non-JSON body = %d, want 401 before parsing", status)
	}
	big := append(append([]byte(`{"type":1,"x":"`), []byte(strings.Repeat("a", 5000))...), '"', '}')
	if status, _ := fake.PostInteraction(big, true); status != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over the cap = %d, want 413", status)
	}
	none(t, events, fake, place.Channel)
}

func TestConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		key  string
	}{
		{"interactions", Config{Interactions: "websocket"}, "discord.interactions"},
		{"listen", Config{Interactions: "http"}, "discord.listen"},
		{"guild", Config{Guilds: []string{"ops"}}, "discord.guilds"},
		{"api url", Config{APIURL: "ftp://x"}, "discord.api_url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.WithDefaults().Validate()
			if err == nil || !strings.HasPrefix(err.Error(), tc.key) {
				t.Errorf("Validate = %v, want an error naming %s", err, tc.key)
			}
		})
	}
	if _, err := New(Config{}, func(string) string { return "" }, nil); err == nil || !strings.Contains(err.Error(), "DISCORD_BOT_TOKEN") {
		t.Errorf("New without a token = %v", err)
	}
	u, err := parseAPIURL("http://127.0.0.1:9/api/v10/")
	if err != nil || u.String() != "http://127.0.0.1:9" {
		t.Errorf("parseAPIURL = %v, %v", u, err)
	}
	if token("abc") != "Bot abc" || token("Bot abc") != "Bot abc" {
		t.Error("token prefix")
	}
}

// A click's first response waits until the bot has recorded its event
// (Event.Recorded), so that a crash cannot lose a click Discord was told
// was taken.
func TestClickIsAnsweredOnceRecorded(t *testing.T) {
	fake := discordtest.New(t)
	a := newAdapter(t, fake, Config{})
	a.recordWithin = time.Minute // no fallback within the test
	events := make(chan adapters.Event, 8)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- a.Run(ctx, adapters.HandlerFunc(func(_ context.Context, e adapters.Event) { events <- e }))
	}()
	t.Cleanup(func() { cancel(); <-done })
	_, ref := postCard(t, fake, a, events)
	click := fake.Click(t, bob, ref, idApprove+"a1b2c3")
	created := time.Now() // the interaction was created before this
	e := next(t, events)
	if e.Recorded == nil {
		t.Fatal("the click's event has no Recorded")
	}
	// While the bot still writes the first record, a later click is
	// recorded at once and answered: the first, had it not waited for its
	// record, would have been answered before it.
	later := fake.Click(t, alice, ref, idApprove+"a1b2c3")
	next(t, events).Recorded()
	fake.WaitResponse(t, later)
	recorded := time.Now()
	e.Recorded()
	if r := fake.WaitResponse(t, click); created.Add(r.After).Before(recorded) {
		t.Errorf("the click was answered %s after it was made, before the bot recorded it (%s)", r.After, recorded.Sub(created))
	}
}

// A click whose event the bot never records (a stalled store) is answered
// anyway, within Discord's 3 seconds.
func TestUnrecordedClickIsAnsweredAnyway(t *testing.T) {
	fake := discordtest.New(t)
	a := newAdapter(t, fake, Config{})
	events := make(chan adapters.Event, 8)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- a.Run(ctx, adapters.HandlerFunc(func(_ context.Context, e adapters.Event) { events <- e }))
	}()
	t.Cleanup(func() { cancel(); <-done })
	_, ref := postCard(t, fake, a, events)
	click := fake.Click(t, bob, ref, idApprove+"a1b2c3")
	next(t, events)
	if r := fake.WaitResponse(t, click); r.Type != responseDeferredUpdate {
		t.Errorf("an unrecorded click got response type %d, want a deferred update", r.Type)
	}
}

// TestMentions: a message's approver entries are Discord mentions ahead of
// its text (a user <@id>, a role <@&id>), and allowed_mentions lets
// exactly those ping: a mention or @everyone in the text itself notifies
// no one.
func TestMentions(t *testing.T) {
	fake := discordtest.New(t)
	a := newAdapter(t, fake, Config{})
	run(t, a)
	fake.WaitSessions(t, 1)
	ch := fake.AddChannel("ops")
	c := adapters.Content{Text: "Reminder: <@666> <@&777> @everyone waits", Mentions: []string{"user:111", "222", "role:333", "group:S1", "channel:C1", "user:1> <@&9"}}
	if _, err := a.Post(context.Background(), adapters.Place{Channel: ch}, c); err != nil {
		t.Fatal(err)
	}
	got := fake.InChannel(ch)
	if len(got) != 1 {
		t.Fatalf("%d messages, want one", len(got))
	}
	if want := "<@111> <@222> <@&333> Reminder: <@666> <@&777> @everyone waits"; got[0].Content != want {
		t.Errorf("content = %q\nwant %q", got[0].Content, want)
	}
	if want := []string{"<@111>", "<@222>", "<@&333>"}; !slices.Equal(got[0].Pinged, want) {
		t.Errorf("pinged %v, want %v", got[0].Pinged, want)
	}
}
