package slack_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
	"github.com/countersign/countersign/adapters/slack"
	"github.com/countersign/countersign/adapters/slack/slacktest"
	"github.com/countersign/countersign/internal/testenv"
)

var (
	alice = slacktest.User{ID: "U0ALICE", Name: "alice"}
	bob   = slacktest.User{ID: "U0BOB", Name: "bob"}
)

// running is an adapter's Run with its events collected.
type running struct {
	events chan adapters.Event
}

func start(t *testing.T, ad *slack.Adapter, h adapters.Handler) *running {
	t.Helper()
	r := &running{events: make(chan adapters.Event, 64)}
	if h == nil {
		h = adapters.HandlerFunc(func(_ context.Context, e adapters.Event) { r.events <- e })
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ad.Run(ctx, h) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return r
}

func (r *running) next(t *testing.T) adapters.Event {
	t.Helper()
	select {
	case e := <-r.events:
		return e
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5s")
		return adapters.Event{}
	}
}

func setup(t *testing.T) (*slacktest.Server, *slack.Adapter, *running) {
	fake := slacktest.New(t)
	ad := newAdapter(t, fake, slack.Config{})
	r := start(t, ad, nil)
	fake.Connected(t)
	return fake, ad, r
}

func TestMentionIsOneMessage(t *testing.T) {
	fake, _, r := setup(t)
	ts := fake.Mention(alice, channel, "", "how full is the disk?")
	first, second := r.next(t), r.next(t)
	if first.ID != second.ID {
		t.Errorf("app_mention and message for one message have ids %q and %q: the bot would start two turns", first.ID, second.ID)
	}
	if first.Redelivered || !second.Redelivered {
		t.Errorf("redelivered = %v, %v; want the message event (second) marked", first.Redelivered, second.Redelivered)
	}
	if first.Text != "how full is the disk?" || first.Place != (adapters.Place{Channel: channel, Thread: ts}) || first.Direct {
		t.Errorf("event = %+v; want the text without the mention, threaded under the message", first)
	}
}

// Messages not for the bot produce no event: the first event after them
// is the marker.
func TestIgnoredMessages(t *testing.T) {
	fake, ad, r := setup(t)
	thread := fake.Store(alice, channel, "", "people talking")
	ref, err := ad.Post(context.Background(), adapters.Place{Channel: "C0OTHER", Thread: ""}, adapters.Content{Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	fake.Say(alice, channel, "", "a top-level message without a mention")
	fake.Say(alice, channel, thread, "a reply in a thread the bot is not in")
	fake.Deliver(map[string]any{"type": "message", "subtype": "message_changed", "channel": channel, "ts": "1.2", "message": map[string]any{"text": "<@U0BOT> edited", "user": alice.ID, "ts": "1.1"}})
	fake.Deliver(map[string]any{"type": "message", "subtype": "channel_join", "channel": channel, "user": alice.ID, "ts": "1.3", "text": "<@U0ALICE> has joined"})
	fake.Deliver(map[string]any{"type": "message", "subtype": "bot_message", "bot_id": "B0OTHER", "channel": channel, "ts": "1.4", "text": "<@U0BOT> from a bot"})
	fake.Deliver(map[string]any{"type": "app_mention", "bot_id": "B0OTHER", "user": "U0OTHERBOT", "channel": channel, "ts": "1.5", "text": "<@U0BOT> from a bot"})
	fake.Deliver(map[string]any{"type": "message", "user": slacktest.BotUserID, "bot_id": slacktest.BotID, "channel": "C0OTHER", "ts": ref, "text": "hi"})
	fake.MentionOnce(alice, channel, "", "marker")
	if e := r.next(t); e.Text != "marker" {
		t.Errorf("first event = %q; want the marker, everything before it ignored", e.Text)
	}
}

// A thread the bot posted in (here, or on another replica) continues the
// conversation without a mention; a direct message is one of its own.
func TestThreadsAndDirectMessages(t *testing.T) {
	fake, ad, r := setup(t)
	ctx := context.Background()
	mine := fake.Store(alice, channel, "", "top")
	if _, err := ad.Post(ctx, adapters.Place{Channel: channel, Thread: mine}, adapters.Content{Text: "answer"}); err != nil {
		t.Fatal(err)
	}
	fake.Say(alice, channel, mine, "and then?")
	if e := r.next(t); e.Text != "and then?" || e.Place.Thread != mine {
		t.Errorf("reply in the bot's own thread = %+v", e)
	}
	// Another replica answered in this thread: the message in the fake
	// is the bot's, but this adapter never posted there.
	other := fake.Store(alice, channel, "", "top two")
	fake.Store(slacktest.User{ID: slacktest.BotUserID}, channel, other, "another replica's answer")
	fake.Say(bob, channel, other, "cat a &gt; b &amp; <https://example.com|example.com>")
	e := r.next(t)
	if e.Text != "cat a > b & https://example.com" || e.User.ID != bob.ID {
		t.Errorf("reply in a thread another replica answered = %+v; want bob's words as typed", e)
	}
	if fake.Calls("conversations.replies") == 0 {
		t.Error("the adapter did not look the thread up")
	}
	fake.Say(alice, "D0ALICE", "", "hello")
	if e := r.next(t); !e.Direct || e.Place.Channel != "D0ALICE" || e.Place.Thread == "" {
		t.Errorf("direct message = %+v; want Direct in D0ALICE with a thread", e)
	}
}

func TestTypedDecision(t *testing.T) {
	fake, _, r := setup(t)
	ts := fake.MentionOnce(alice, channel, "", "cancel a1b2c3 not now")
	e := r.next(t)
	if e.Decision == nil || e.Decision.ApprovalID != "a1b2c3" || e.Decision.Approve || e.Decision.Reason != "not now" || e.Place.Thread != ts {
		t.Errorf("typed cancel = %+v (decision %+v)", e, e.Decision)
	}
}

func TestUndecodableEnvelopeIsAcknowledged(t *testing.T) {
	fake, _, r := setup(t)
	bad := fake.DeliverRaw("events_api", `{"type":"event_callback","event":{"type":"message","ts":12}}`)
	fake.Acked(t, bad)
	fake.MentionOnce(alice, channel, "", "still working")
	if e := r.next(t); e.Text != "still working" {
		t.Errorf("after a bad envelope the next event is %q", e.Text)
	}
}

// The ack never waits for the handler (the store, the model, a tool).
func TestAckDoesNotWaitForTheHandler(t *testing.T) {
	fake := slacktest.New(t)
	ad := newAdapter(t, fake, slack.Config{})
	release := make(chan struct{})
	got := make(chan adapters.Event, 4)
	start(t, ad, adapters.HandlerFunc(func(_ context.Context, e adapters.Event) {
		got <- e
		<-release
	}))
	defer close(release)
	fake.Connected(t)
	fake.MentionOnce(alice, channel, "", "one")
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the first event did not reach the handler")
	}
	// The handler now holds the worker; the next envelope is acked anyway.
	second := fake.Click(bob, channel, "1.1", slack.ActionApprove, "a1b2c3")
	fake.Acked(t, second)
	if len(got) != 0 {
		t.Error("a second event reached a handler that had not returned")
	}
}

// A click from another workspace reaches the bot marked Outsider, for its
// one check to refuse with its one notice: the adapter sends none.
func TestClickFromAnotherWorkspaceIsMarked(t *testing.T) {
	fake, ad, r := setup(t)
	c := adaptertest.PendingCard("a1b2c3")
	ref, err := ad.Post(context.Background(), adapters.Place{Channel: channel, Thread: "1.1"}, adapters.Content{Card: &c})
	if err != nil {
		t.Fatal(err)
	}
	mallory := slacktest.User{ID: "U0MAL", Name: "mallory", Team: "T0OTHER"}
	fake.Click(mallory, channel, ref, slack.ActionApprove, "a1b2c3")
	if e := r.next(t); e.User.ID != mallory.ID || !e.User.Outsider || e.User.Team != "T0OTHER" {
		t.Errorf("mallory's click = %+v; want her, Outsider, team T0OTHER", e.User)
	}
	fake.Click(bob, channel, ref, slack.ActionApprove, "a1b2c3")
	if e := r.next(t); e.User.ID != bob.ID || e.User.Outsider {
		t.Errorf("bob's click = %+v; want him, not Outsider", e.User)
	}
	if n := fake.Ephemerals(mallory.ID); len(n) != 0 {
		t.Errorf("the adapter sent its own notice to mallory: %+v", n)
	}
}

func TestApproverGroups(t *testing.T) {
	fake := slacktest.New(t)
	fake.AddGroup("S0ONCALL", "oncall", bob.ID)
	fake.AddGroup("S0DBA", "dba", alice.ID)
	ad := newAdapter(t, fake, slack.Config{})
	ad.WatchGroups("group:@oncall", "S0DBA")
	r := start(t, ad, nil)
	fake.Connected(t)

	fake.Click(bob, channel, "1.1", slack.ActionApprove, "a1b2c3")
	e := r.next(t)
	if !slices.Contains(e.User.Groups, "@oncall") || !slices.Contains(e.User.Groups, "S0ONCALL") || slices.Contains(e.User.Groups, "S0DBA") {
		t.Errorf("bob's groups = %v; want @oncall and S0ONCALL only", e.User.Groups)
	}
	calls := fake.Calls("usergroups.users.list")
	fake.Click(bob, channel, "1.1", slack.ActionCancel, "a1b2c3")
	r.next(t)
	if fake.Calls("usergroups.users.list") != calls {
		t.Error("a second click inside the cache's lifetime asked Slack again")
	}

	// Slack cannot answer: fail closed, and say why.
	fake = slacktest.New(t)
	fake.AddGroup("S0ONCALL", "oncall", bob.ID)
	fake.FailGroups("internal_error")
	fresh := newAdapter(t, fake, slack.Config{})
	fresh.WatchGroups("S0ONCALL")
	r2 := start(t, fresh, nil)
	fake.Click(bob, channel, "1.1", slack.ActionApprove, "a1b2c3")
	e = r2.next(t)
	if slices.Contains(e.User.Groups, "S0ONCALL") || !slices.Contains(e.User.Groups, "!unchecked:S0ONCALL") {
		t.Errorf("groups after a failed lookup = %v; want only the unchecked marker", e.User.Groups)
	}
	if !slices.Equal(e.User.Unchecked, []string{"S0ONCALL"}) {
		t.Errorf("Unchecked = %v; want [S0ONCALL], for the bot's notice", e.User.Unchecked)
	}
	// The refusal is the bot's to say, once: the adapter says nothing.
	fake.FailGroups("")
	fake.Click(bob, channel, "1.1", slack.ActionCancel, "a1b2c3")
	r2.next(t)
	if n := fake.Ephemerals(bob.ID); len(n) != 0 {
		t.Errorf("the adapter sent its own notice about the unchecked group: %+v", n)
	}
}

// A typed decision carries the facts of a click and is checked the same
// way: a Slack Connect user of another organisation arrives marked
// Outsider, and a member of an approver group arrives with the group.
func TestTypedDecisionIsCheckedLikeAClick(t *testing.T) {
	fake := slacktest.New(t)
	fake.AddGroup("S0ONCALL", "oncall", bob.ID)
	ad := newAdapter(t, fake, slack.Config{})
	ad.WatchGroups("@oncall")
	r := start(t, ad, nil)
	fake.Connected(t)
	thread := fake.MentionOnce(alice, channel, "", "clean up")
	r.next(t)

	mallory := slacktest.User{ID: "U0MAL", Name: "mallory", Team: "T0OTHER"}
	fake.Say(mallory, channel, thread, "approve a1b2c3")
	if e := r.next(t); e.User.ID != mallory.ID || !e.User.Outsider || e.Decision == nil {
		t.Fatalf("mallory's typed decision = %+v; want a decision marked Outsider, as her click is", e)
	}
	fake.Say(bob, channel, thread, "approve a1b2c3")
	e := r.next(t)
	if e.User.ID != bob.ID || e.Decision == nil || !e.Decision.Approve {
		t.Fatalf("first event after mallory's is %+v", e)
	}
	if !slices.Contains(e.User.Groups, "@oncall") || e.User.Team != slacktest.TeamID || e.User.Outsider {
		t.Errorf("bob's typed decision: groups %v, team %q; want @oncall and %s, as a click has", e.User.Groups, e.User.Team, slacktest.TeamID)
	}
	fake.Say(bob, channel, thread, "!stop a1b2c3")
	if e := r.next(t); !slices.Contains(e.User.Groups, "@oncall") {
		t.Errorf("a typed !stop: groups %v; want @oncall", e.User.Groups)
	}
}

func TestLongOperationIsAttachedOnce(t *testing.T) {
	fake, ad, _ := setup(t)
	ctx := context.Background()
	c := adaptertest.PendingCard("a1b2c3")
	c.Operation = strings.Repeat("echo 0123456789abcdef; ", 400)
	p := adapters.Place{Channel: channel, Thread: "1.1"}
	ref, err := ad.Post(ctx, p, adapters.Content{Card: &c})
	if err != nil {
		t.Fatalf("Post: %v", err)
	}
	files := fake.Files()
	if len(files) != 1 || files[0].Content != c.Operation || files[0].Thread != "1.1" || files[0].Channel != channel {
		t.Fatalf("files = %+v; want the whole operation once, in the thread", files)
	}
	done := adaptertest.DoneCard("a1b2c3")
	done.Operation = c.Operation
	if err := ad.Update(ctx, p, ref, adapters.Content{Card: &done}); err != nil {
		t.Fatal(err)
	}
	if n := len(fake.Files()); n != 1 {
		t.Errorf("%d files after an update; the operation is attached once", n)
	}
	m, _ := fake.Message(channel, ref)
	if v := slacktest.View(m); !strings.Contains(v, "operation-a1b2c3.txt") {
		t.Errorf("the card does not point at the file:\n%s", v)
	}
}

func TestUpdateErrors(t *testing.T) {
	fake, ad, _ := setup(t)
	ctx := context.Background()
	p := adapters.Place{Channel: channel, Thread: "1.1"}
	if err := ad.Update(ctx, p, "1.999", adapters.Content{Text: "x"}); !errors.Is(err, adapters.ErrGone) {
		t.Errorf("update of a missing message = %v, want ErrGone", err)
	}
	ref, err := ad.Post(ctx, p, adapters.Content{Text: "x"})
	if err != nil {
		t.Fatal(err)
	}
	// A progress update (TryOnce) hears of the 429 at once.
	fake.FailUpdates(1, 7)
	err = ad.Update(adapters.TryOnce(ctx), p, ref, adapters.Content{Text: "y"})
	if d, ok := adapters.RetryAfter(err); !ok || d != 7*time.Second {
		t.Errorf("update under a 429 = %v; want a RateLimitError of 7s", err)
	}
	if err := ad.Update(ctx, p, ref, adapters.Content{Text: "y"}); err != nil {
		t.Errorf("update after the wait: %v", err)
	}
	// Any other update waits the 429s out and arrives.
	fake.FailUpdates(3, 0)
	if err := ad.Update(ctx, p, ref, adapters.Content{Text: "z"}); err != nil {
		t.Errorf("update through three 429s: %v", err)
	}
	if m, _ := fake.Message(channel, ref); m.Text != "z" || fake.Limited() != 4 {
		t.Errorf("after three 429s the message says %q (%d refused); want z, 4", m.Text, fake.Limited())
	}
}

// A refresh (disconnect) and a dropped socket lose nothing: what the
// client did not acknowledge comes again, with its id and marked.
func TestSocketReconnects(t *testing.T) {
	fake, ad, r := setup(t)
	fake.Disconnect()
	fake.MentionOnce(alice, channel, "", "after a refresh")
	fake.DropSocket()
	fake.MentionOnce(alice, channel, "", "after a drop")
	ids := map[string]string{}
	for len(ids) < 2 {
		e := r.next(t)
		if id, seen := ids[e.Text]; seen {
			if id != e.ID || !e.Redelivered {
				t.Errorf("%q came again as %q (redelivered %v), first as %q", e.Text, e.ID, e.Redelivered, id)
			}
			continue
		}
		ids[e.Text] = e.ID
	}
	if ids["after a refresh"] == "" || ids["after a drop"] == "" {
		t.Errorf("events = %v", ids)
	}
	if fake.Connections() < 2 {
		t.Errorf("connections = %d, want a reconnect", fake.Connections())
	}
	testenv.Eventually(t, 5*time.Second, ad.Connected, "the adapter to report itself connected after the reconnect")
}

func TestNewNamesTheProblem(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  slack.Config
		env  map[string]string
		want string
	}{
		{"no token", slack.Config{}, nil, "SLACK_BOT_TOKEN is not set"},
		{"app token as bot token", slack.Config{}, map[string]string{"SLACK_BOT_TOKEN": "xapp-1"}, "holds an app-level token (xapp-), not a bot token"},
		{"bot token as app token", slack.Config{}, map[string]string{"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xoxb-2"}, "SLACK_APP_TOKEN holds a bot token (xoxb-), not an app-level token"},
		{"socket without app token", slack.Config{Mode: "socket"}, map[string]string{"SLACK_BOT_TOKEN": "xoxb-1"}, "slack.mode: socket needs an app-level token"},
		{"http without secret", slack.Config{}, map[string]string{"SLACK_BOT_TOKEN": "xoxb-1"}, "SLACK_SIGNING_SECRET"},
		{"bad mode", slack.Config{Mode: "rtm"}, nil, "slack.mode:"},
		{"bad api url", slack.Config{APIURL: "ftp://x"}, nil, "slack.api_url:"},
		{"secret in the env key", slack.Config{BotTokenEnv: "xoxb-123-456"}, nil, "slack.bot_token_env:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := slack.New(tc.cfg, func(k string) string { return tc.env[k] }, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New = %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	fake := slacktest.New(t)
	ad := newAdapter(t, fake, slack.Config{})
	if s, err := ad.Check(context.Background()); err != nil || !strings.Contains(s, slacktest.BotUserID) {
		t.Errorf("Check = %q, %v", s, err)
	}
	fake.SetScopes("chat:write", "app_mentions:read")
	_, err := ad.Check(context.Background())
	if err == nil || !strings.Contains(err.Error(), "files:write") || !strings.Contains(err.Error(), "usergroups:read") {
		t.Errorf("Check with missing scopes = %v; want them named", err)
	}
}

func TestStopButton(t *testing.T) {
	fake, ad, r := setup(t)
	c := adaptertest.DoneCard("a1b2c3")
	c.State, c.StateLine, c.Output = "running", "approved by bob · running for 3s", "working"
	c.Buttons = []adapters.Button{{Label: "Stop", Stop: true, Value: "a1b2c3"}}
	ref, err := ad.Post(context.Background(), adapters.Place{Channel: channel, Thread: "1.1"}, adapters.Content{Card: &c})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := fake.Message(channel, ref)
	if v := slacktest.View(m); !strings.Contains(v, "[!stop a1b2c3]") || strings.Contains(v, "cancel a1b2c3") {
		t.Errorf("a running card shows:\n%s\nwant a Stop button and no cancel", v)
	}
	fake.Click(bob, channel, ref, slack.ActionStop, "a1b2c3")
	e := r.next(t)
	if e.Decision == nil || !e.Decision.Stop || e.Decision.Approve || e.Decision.ApprovalID != "a1b2c3" {
		t.Errorf("stop click = %+v", e.Decision)
	}
}

// An envelope is acknowledged once the bot has recorded its event (Event.
// Recorded), never before. (One never recorded is acknowledged anyway:
// TestAckDoesNotWaitForTheHandler.)
func TestAckWaitsForTheRecord(t *testing.T) {
	fake := slacktest.New(t)
	ad := newAdapter(t, fake, slack.Config{})
	slack.SetAckWithin(ad, time.Minute) // no fallback within the test
	got := make(chan adapters.Event, 4)
	start(t, ad, adapters.HandlerFunc(func(_ context.Context, e adapters.Event) { got <- e }))
	fake.Connected(t)

	click := fake.Click(bob, channel, "1.1", slack.ActionApprove, "a1b2c3")
	var e adapters.Event
	select {
	case e = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the click did not reach the handler")
	}
	if e.Recorded == nil {
		t.Fatal("the event has no Recorded to acknowledge it from")
	}
	// While the bot still writes the first record, a later click is
	// recorded at once and acknowledged: the first's acknowledgement, had
	// it not waited for its record, would have gone before it.
	later := fake.Click(bob, channel, "1.2", slack.ActionApprove, "d4e5f6")
	select {
	case e2 := <-got:
		e2.Recorded()
	case <-time.After(5 * time.Second):
		t.Fatal("the later click did not reach the handler")
	}
	fake.Acked(t, later)
	if acked(fake, click.ID) {
		t.Fatal("the envelope was acknowledged before the bot recorded its event")
	}
	recordedAt := time.Now()
	e.Recorded()
	fake.Acked(t, click)
	for _, x := range fake.Envelopes() {
		if x.ID == click.ID && x.AckedAt.Before(recordedAt) {
			t.Errorf("acknowledged at %v, before the record at %v", x.AckedAt, recordedAt)
		}
	}

}

func acked(fake *slacktest.Server, id string) bool {
	for _, x := range fake.Envelopes() {
		if x.ID == id {
			return !x.AckedAt.IsZero()
		}
	}
	return false
}

// TestMentions: a message's approver entries are Slack mentions ahead of
// its text (a user <@U…>, a user group <!subteam^S…>), while the same
// markup in the text stays escaped and no option turns names into pings.
func TestMentions(t *testing.T) {
	fake, ad, _ := setup(t)
	p := adapters.Place{Channel: channel, Thread: "1.1"}
	c := adapters.Content{Text: "Reminder: <!channel> <@U0EVE> @here waits", Mentions: []string{"user:U0BOB", "U0CAROL", "group:S0DBA", "role:R1", "channel:C1", "user:U1> <!channel"}}
	ref, err := ad.Post(context.Background(), p, c)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := fake.Message(channel, ref)
	want := "<@U0BOB> <@U0CAROL> <!subteam^S0DBA> Reminder: &lt;!channel&gt; &lt;@U0EVE&gt; @here waits"
	if m.Text != want {
		t.Errorf("text = %q\nwant %q", m.Text, want)
	}
	if m.Parse != "" || m.LinkNames != "" {
		t.Errorf("parse=%q link_names=%q sent; want neither", m.Parse, m.LinkNames)
	}
}

// TestCancelAsksForAReason: a card's Cancel always opens a form, its reason
// optional where no rule requires one; the form's submission is the cancel,
// with the reason or without.
func TestCancelAsksForAReason(t *testing.T) {
	fake, ad, r := setup(t)
	c := adaptertest.PendingCard("a1b2c3")
	ref, err := ad.Post(context.Background(), adapters.Place{Channel: channel, Thread: "1.1"}, adapters.Content{Card: &c})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := fake.Message(channel, ref)
	if !strings.Contains(string(m.Blocks), `"`+slack.ActionCancelAsk+`"`) || strings.Contains(string(m.Blocks), `"`+slack.ActionCancel+`"`) {
		t.Fatalf("the Cancel button does not open the form:\n%s", m.Blocks)
	}
	for i, reason := range []string{"", "still needed"} {
		fake.Acked(t, fake.Click(bob, channel, ref, slack.ActionCancelAsk, "a1b2c3"))
		var form slacktest.AppView
		fake.Wait(t, "the cancel form", func() bool {
			if v := fake.Views(); len(v) == i+1 {
				form = v[i]
				return true
			}
			return false
		})
		blocks, _ := json.Marshal(form.View["blocks"])
		if !strings.Contains(string(blocks), `"optional":true`) || !strings.Contains(string(blocks), "A reason is optional") {
			t.Errorf("the cancel form does not make the reason optional:\n%s", blocks)
		}
		fake.Acked(t, fake.Submit(bob, form, map[string]map[string]string{"countersign_reason_block": {"reason": reason}}))
		e := r.next(t)
		if e.Decision == nil || e.Decision.Approve || e.Decision.ApprovalID != "a1b2c3" || e.Decision.Reason != reason || e.User.ID != bob.ID {
			t.Errorf("the form's submission = %+v %+v; want bob's cancel of a1b2c3 with reason %q", e.User, e.Decision, reason)
		}
	}
}

// TestNamesNotIDs: a user group the bot's words name by its id
// (approvers: ["group:S0DBA"]) reads as its handle, and a person named by
// their id (approvers: ["U0BOB"]) by their name, on a card, in a message
// and in a private notice; an id the workspace does not know stays as it
// was; the pings (Mentions) are unchanged; each name is looked up once.
func TestNamesNotIDs(t *testing.T) {
	fake, ad, _ := setup(t)
	fake.AddGroup("S0DBA", "dba", "U0BOB")
	fake.AddGroup("S0ONCALL", "oncall", "U0BOB")
	fake.AddUser(bob)
	p := adapters.Place{Channel: channel, Thread: "1.1"}
	c := adaptertest.PendingCard("a1b2c3")
	c.StateLine = "waiting for a decision · Needs an approval from @S0DBA or @S0GONE."
	approvers := adaptertest.PendingCard("a1b2c3")
	approvers.StateLine = "waiting for a decision · Needs an approval from @U0BOB or members of @S0ONCALL."
	tests := []struct {
		name    string
		content adapters.Content
		want    string
		notWant string
	}{
		{"a card", adapters.Content{Card: &c}, "Needs an approval from @dba or @S0GONE.", "@S0DBA"},
		{"a card for a person and a group", adapters.Content{Card: &approvers}, "Needs an approval from bob or members of @oncall.", "U0BOB or"},
		{"a message", adapters.Content{Text: "Escalated: @S0DBA may now decide it too.", Mentions: []string{"group:S0DBA"}}, "<!subteam^S0DBA> Escalated: @dba may now decide it too.", "@S0DBA may"},
		{"a ping stays a ping", adapters.Content{Text: "Reminder: @U0BOB, @U0GONE may decide.", Mentions: []string{"U0BOB"}}, "<@U0BOB> Reminder: bob, @U0GONE may decide.", "@U0BOB,"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ref, err := ad.Post(context.Background(), p, tc.content)
			if err != nil {
				t.Fatal(err)
			}
			m, _ := fake.Message(channel, ref)
			v := m.Text + "\n" + slacktest.View(m)
			if !strings.Contains(v, tc.want) || strings.Contains(v, tc.notWant) {
				t.Errorf("the message reads:\n%s\nwant %q and no %q", v, tc.want, tc.notWant)
			}
		})
	}
	t.Run("a private notice", func(t *testing.T) {
		err := ad.Notify(context.Background(), adapters.Notice{Place: p, User: adapters.User{ID: alice.ID, Name: alice.Name}, Text: "You cannot approve a1b2c3: it needs @U0BOB."})
		if err != nil {
			t.Fatal(err)
		}
		es := fake.Ephemerals(alice.ID)
		if len(es) == 0 || es[len(es)-1].Text != "You cannot approve a1b2c3: it needs bob." {
			t.Errorf("the notices to alice: %+v; want the last to name bob", es)
		}
	})
	t.Run("the App Home", func(t *testing.T) {
		item := adapters.HomeItem{ApprovalID: "a1b2c3", Channel: channel, Operation: "rm -rf ./tmp_*", Requester: "alice", Asked: time.Now(), Needs: "Needs an approval from @U0BOB or @S0ONCALL."}
		if err := ad.PublishHome(context.Background(), adapters.User{ID: alice.ID}, []adapters.HomeItem{item}); err != nil {
			t.Fatal(err)
		}
		vs := fake.Views()
		if len(vs) == 0 {
			t.Fatal("no view was published")
		}
		v, _ := json.Marshal(vs[len(vs)-1].View)
		if !strings.Contains(string(v), "Needs an approval from bob or @oncall.") {
			t.Errorf("the App Home reads:\n%s\nwant bob and @oncall by name", v)
		}
	})
	if c.StateLine != "waiting for a decision · Needs an approval from @S0DBA or @S0GONE." {
		t.Errorf("the caller's card was changed: %q", c.StateLine)
	}
	if n := fake.Calls("users.info"); n != 2 {
		t.Errorf("users.info was called %d times; want 2 (U0BOB and U0GONE, each once)", n)
	}
}
