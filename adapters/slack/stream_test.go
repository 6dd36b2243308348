package slack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/slack"
	"github.com/countersign/countersign/adapters/slack/slacktest"
)

// syncBuf is a log sink safe for the adapter's goroutines.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// turnSetup starts the adapter on the fake, has alice mention the bot,
// and returns the event that starts the turn.
func turnSetup(t *testing.T, cfg slack.Config, log *slog.Logger) (*slacktest.Server, *slack.Adapter, *running, adapters.Event) {
	t.Helper()
	fake := slacktest.New(t)
	env := fake.Env()
	if log == nil {
		log = testLog(t)
	}
	ad, err := slack.New(cfg, func(k string) string { return env[k] }, log)
	if err != nil {
		t.Fatal(err)
	}
	r := start(t, ad, nil)
	fake.Connected(t)
	fake.Mention(alice, channel, "", "why is /var full?")
	e := r.next(t)
	r.next(t) // the message event of the same mention
	return fake, ad, r, e
}

func vacuumCard(state string) *adapters.Card {
	c := stormCard("a1b2c3")
	c.Operation = "journalctl --vacuum-size=1G"
	c.State = state
	if state != "pending" {
		c.Buttons = nil
	}
	return c
}

// playTurn is the sample turn as the bot plays it once integrated: two
// reads without a card, one call that waits for approval and runs, the
// answer. It returns the card's ref.
func playTurn(t *testing.T, ctx context.Context, fake *slacktest.Server, ad *slack.Adapter, turn *adapters.Turn, place adapters.Place) string {
	t.Helper()
	must := func(what string, ok bool) {
		t.Helper()
		if !ok {
			t.Fatalf("%s was not shown", what)
		}
	}
	must("the thinking status", turn.Status(ctx, adapters.StatusThinking))
	if got := fake.Status(channel, place.Thread); got != adapters.StatusThinking {
		t.Fatalf("thread status = %q, want %q", got, adapters.StatusThinking)
	}
	must("task 1", turn.Task(ctx, adapters.Task{ID: "call_1", Title: "df -h", State: adapters.TaskInProgress, Details: "ran without a card: read-only"}))
	must("task 1 done", turn.Task(ctx, adapters.Task{ID: "call_1", Title: "df -h", State: adapters.TaskComplete, Details: "exit code 0 in 9ms"}))
	must("task 2", turn.Task(ctx, adapters.Task{ID: "call_2", Title: "du -sh /var/log", State: adapters.TaskInProgress, Details: "ran without a card: read-only"}))
	must("task 2 done", turn.Task(ctx, adapters.Task{ID: "call_2", Title: "du -sh /var/log", State: adapters.TaskComplete, Details: "exit code 0 in 31ms"}))
	must("words", turn.Text(ctx, "/var/log holds 9.1G; the oldest journal files can go."))
	// The card comes below what the turn said: the stream ends first,
	// with the words held back.
	must("the break before the card", turn.Break(ctx))
	ref, err := ad.Post(ctx, place, adapters.Content{Card: vacuumCard("pending")})
	if err != nil {
		t.Fatal(err)
	}
	turn.Posted()
	must("the waiting status (the card's post cleared it: no call)", turn.Status(ctx, adapters.StatusWaiting))
	// bob approves: the card changes state once, at the decision; the
	// card says it runs.
	if err := ad.Update(ctx, place, ref, adapters.Content{Card: vacuumCard("running")}); err != nil {
		t.Fatal(err)
	}
	// A long run's progress goes to its task in a new stream below the
	// card, at most every adapters.ProgressEvery; here the whole run
	// falls inside the time its start is held (adapters.TextEvery).
	for i := range 150 {
		must("a progress tick", turn.Task(ctx, adapters.Task{ID: "a1b2c3", Title: "journalctl --vacuum-size=1G", State: adapters.TaskInProgress, Details: fmt.Sprintf("running %ds: vacuuming", 2*(i+1)), CardRef: ref}))
	}
	must("the done task", turn.Task(ctx, adapters.Task{ID: "a1b2c3", Title: "journalctl --vacuum-size=1G", State: adapters.TaskComplete, Details: "exit code 0 in 2.4s", CardRef: ref}))
	if err := ad.Update(ctx, place, ref, adapters.Content{Card: vacuumCard("done")}); err != nil {
		t.Fatal(err)
	}
	must("the thinking status again", turn.Status(ctx, adapters.StatusThinking))
	must("the answer", turn.End(ctx, "Freed 8.1G: /var/log now holds 1.0G."))
	return ref
}

// TestStreamedTurn: a turn that runs two reads and asks for one approval
// shows a status at once, a streamed message with the reads' tasks and
// the words said before the card, the card as its own message below it,
// then a second stream with the approved run's task (linked to its card)
// and the answer; the status is cleared at the end. The request bodies
// are golden.
func TestStreamedTurn(t *testing.T) {
	fake, ad, _, e := turnSetup(t, slack.Config{}, nil)
	ctx := context.Background()
	turn := adapters.StartTurn(ad, e.Place, e.User, nil)
	if !turn.Streaming() {
		t.Fatal("Streaming() is false for the slack adapter")
	}
	ref := playTurn(t, ctx, fake, ad, turn, e.Place)

	streams := fake.Streams(channel, e.Place.Thread)
	if len(streams) != 2 {
		t.Fatalf("%d streams in the thread, want 2 (before the card, after it)", len(streams))
	}
	var states []string
	for _, st := range streams {
		if !st.Stopped || st.StoppedBy != "app" {
			t.Errorf("stream stopped=%v by %q, want stopped by the app", st.Stopped, st.StoppedBy)
		}
		if st.RecipientUser != alice.ID || st.RecipientTeam != slacktest.TeamID {
			t.Errorf("stream recipient = %s/%s, want %s/%s", st.RecipientTeam, st.RecipientUser, slacktest.TeamID, alice.ID)
		}
		for _, task := range st.Tasks {
			states = append(states, task.ID+"="+task.Status)
		}
		states = append(states, "|")
	}
	if want := []string{"call_1=complete", "call_2=complete", "|", "a1b2c3=complete", "|"}; !slices.Equal(states, want) {
		t.Errorf("tasks %v, want %v", states, want)
	}
	if !strings.Contains(streams[0].Text, "/var/log holds 9.1G") {
		t.Errorf("the words before the card = %q, want them in the first stream", streams[0].Text)
	}
	st := streams[1]
	if link := st.Tasks[0].Sources; len(link) != 1 || !strings.Contains(link[0], "/archives/"+channel+"/p"+strings.Replace(ref, ".", "", 1)) {
		t.Errorf("the approval's task links %v, want the card %s", link, ref)
	}
	if !strings.HasSuffix(st.Text, "Freed 8.1G: /var/log now holds 1.0G.") {
		t.Errorf("streamed text %q does not end with the answer", st.Text)
	}
	if got := fake.Status(channel, e.Place.Thread); got != "" {
		t.Errorf("status %q still shown after the answer", got)
	}
	card, _ := fake.Message(channel, ref)
	if card.Updates != 2 {
		t.Errorf("the card was updated %d times, want 2 (the decision, the end): progress belongs to the task", card.Updates)
	}
	golden(t, "streamed_turn.golden", streamBodies(fake, e.Place.Thread, ref))
}

// streamBodies is the golden text: each status and streaming call as
// sent, with the run's timestamps replaced by names.
func streamBodies(fake *slacktest.Server, thread, card string) string {
	var b strings.Builder
	names := map[string]string{thread: "<thread>", card: "<card>", strings.Replace(card, ".", "", 1): "<card-p>", strings.Replace(thread, ".", "", 1): "<thread-p>"}
	name := func(s string) string {
		for k, v := range names {
			s = strings.ReplaceAll(s, k, v)
		}
		return s
	}
	for _, c := range fake.StatusLog() {
		fmt.Fprintf(&b, "assistant.threads.setStatus channel_id=%s thread_ts=%s status=%q\n", c.Channel, name(c.Thread), c.Status)
	}
	for _, c := range fake.StreamCalls() {
		fmt.Fprintf(&b, "\n%s\n", c.Method)
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range c.Form {
				if !yield(k) {
					return
				}
			}
		}) {
			v := c.Form.Get(k)
			if k == "ts" {
				names[v] = "<stream>"
			}
			if k == "chunks" {
				var pretty bytes.Buffer
				_ = json.Indent(&pretty, []byte(v), "  ", "  ")
				v = pretty.String()
			}
			fmt.Fprintf(&b, "  %s: %s\n", k, name(v))
		}
	}
	return b.String()
}

var update = os.Getenv("UPDATE_GOLDEN") != ""

func golden(t *testing.T, file, got string) {
	t.Helper()
	path := filepath.Join("testdata", file)
	if update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (UPDATE_GOLDEN=1 go test writes it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", file, got, want)
	}
}

// TestStreamingRefused: a workspace that refuses chat.startStream gets
// the messages of old: the turn reports its tasks not shown (the bot
// posts them), the next turn does not ask again, and the log says so once.
func TestStreamingRefused(t *testing.T) {
	var logs syncBuf
	fake, ad, _, e := turnSetup(t, slack.Config{}, slog.New(slog.NewTextHandler(&logs, nil)))
	fake.Refuse("chat.startStream", "not_allowed")
	ctx := context.Background()
	for i := range 2 {
		turn := adapters.StartTurn(ad, e.Place, e.User, nil)
		if turn.Task(ctx, adapters.Task{ID: "call_1", Title: "df -h", State: adapters.TaskComplete}) {
			t.Fatalf("turn %d: a task reported shown in a workspace that refuses streaming", i+1)
		}
		if turn.Streaming() || turn.Text(ctx, "words") || turn.End(ctx, "the answer") {
			t.Fatalf("turn %d: the turn still streams after the refusal", i+1)
		}
	}
	if n := fake.Calls("chat.startStream"); n != 1 {
		t.Errorf("chat.startStream called %d times, want once: a refusal holds for the process", n)
	}
	if n := strings.Count(logs.String(), "slack refused streaming"); n != 1 {
		t.Errorf("the refusal was logged %d times, want once:\n%s", n, logs.String())
	}
	_, err := ad.StartStream(ctx, e.Place, e.User)
	if !errors.Is(err, adapters.ErrNoStream) {
		t.Errorf("StartStream after the refusal: %v, want ErrNoStream", err)
	}
}

// TestStreamingOff: slack.streaming: false streams nothing and calls
// nothing; the status still shows.
func TestStreamingOff(t *testing.T) {
	off := false
	fake, ad, _, e := turnSetup(t, slack.Config{Streaming: &off}, nil)
	ctx := context.Background()
	turn := adapters.StartTurn(ad, e.Place, e.User, nil)
	if turn.Streaming() {
		// Streaming reports "may still open" until the first try.
		_ = turn
	}
	if turn.Task(ctx, adapters.Task{ID: "x", Title: "df -h", State: adapters.TaskComplete}) {
		t.Error("a task reported shown with slack.streaming: false")
	}
	if !turn.Status(ctx, adapters.StatusThinking) {
		t.Error("no status with slack.streaming: false; only streaming is off")
	}
	if n := fake.Calls("chat.startStream"); n != 0 {
		t.Errorf("chat.startStream called %d times with streaming off", n)
	}
}

// TestStatusRefused: a workspace that refuses the thread status logs it
// once and is not asked again; the turn goes on.
func TestStatusRefused(t *testing.T) {
	var logs syncBuf
	fake, ad, _, e := turnSetup(t, slack.Config{}, slog.New(slog.NewTextHandler(&logs, nil)))
	fake.Refuse("assistant.threads.setStatus", "not_allowed")
	ctx := context.Background()
	for range 2 {
		turn := adapters.StartTurn(ad, e.Place, e.User, nil)
		if turn.Status(ctx, adapters.StatusThinking) {
			t.Fatal("a refused status reported shown")
		}
	}
	if n := fake.Calls("assistant.threads.setStatus"); n != 1 {
		t.Errorf("assistant.threads.setStatus called %d times, want once", n)
	}
	if n := strings.Count(logs.String(), "slack refused the thread status"); n != 1 {
		t.Errorf("the refusal was logged %d times, want once", n)
	}
}

// TestAgentStop: the person's Stop (agent_session_stopped) is an event
// with StopTurn for the thread, from that person; the stopped stream
// takes no more appends (no call is tried), and the turn falls back.
func TestAgentStop(t *testing.T) {
	fake, ad, r, e := turnSetup(t, slack.Config{}, nil)
	ctx := context.Background()
	turn := adapters.StartTurn(ad, e.Place, e.User, nil)
	// A read that ran starts the stream; a long call runs.
	if !turn.Task(ctx, adapters.Task{ID: "call_0", Title: "ls", State: adapters.TaskComplete}) ||
		!turn.Task(ctx, adapters.Task{ID: "call_1", Title: "sleep 600", State: adapters.TaskInProgress}) {
		t.Fatal("task not shown")
	}
	env := fake.AgentStop(alice, channel, e.Place.Thread)
	stop := r.next(t)
	if !stop.StopTurn || stop.Place != e.Place || stop.User.ID != alice.ID || stop.Decision != nil || stop.Text != "" {
		t.Fatalf("stop event = %+v, want StopTurn for %+v from alice", stop, e.Place)
	}
	if stop.ID == "" || stop.ID == e.ID {
		t.Errorf("stop event id %q", stop.ID)
	}
	fake.Acked(t, env)
	appends := fake.Calls("chat.appendStream")
	if turn.Task(ctx, adapters.Task{ID: "call_1", Title: "sleep 600", State: adapters.TaskError, Details: "stopped by alice"}) {
		t.Error("a task reported shown in a stream the person stopped")
	}
	if n := fake.Calls("chat.appendStream"); n != appends {
		t.Errorf("%d appends tried on a stopped stream", n-appends)
	}
	// Redelivered, it is the same event.
	fake.Redeliver()
	again := r.next(t)
	if again.ID != stop.ID || !again.Redelivered {
		t.Errorf("redelivered stop: id %q redelivered %v, want %q marked", again.ID, again.Redelivered, stop.ID)
	}
}

// TestCallsPerApproval counts the Web API calls of one approval and of
// the sample turn, as the bot makes them once it uses the turn: the card
// is posted once and updated at the decision and at the end (3 calls;
// today 4); the rest is the turn's stream.
func TestCallsPerApproval(t *testing.T) {
	fake, ad, _, e := turnSetup(t, slack.Config{}, nil)
	ctx := context.Background()
	turn := adapters.StartTurn(ad, e.Place, e.User, nil)
	methods := []string{"chat.postMessage", "chat.update", "assistant.threads.setStatus", "chat.startStream", "chat.appendStream", "chat.stopStream"}
	before := map[string]int{}
	for _, m := range methods {
		before[m] = fake.Calls(m)
	}
	playTurn(t, ctx, fake, ad, turn, e.Place)
	got := map[string]int{}
	total := 0
	for _, m := range methods {
		got[m] = fake.Calls(m) - before[m]
		total += got[m]
	}
	card := got["chat.postMessage"] + got["chat.update"]
	t.Logf("per approval (card): %d; per turn: %d %v", card, total, got)
	if card > 3 {
		t.Errorf("%d chat.postMessage/chat.update calls for one approval, want at most 3", card)
	}
	// 3 statuses (thinking, thinking again after the run, cleared: the
	// wait is the card's, whose post cleared the status); 2 streams
	// (before and below the card); 1 append (the second read: each call
	// that starts is held adapters.TextEvery and goes once, as it ended;
	// the first starts the stream). The run's 150 progress ticks cost
	// nothing more. Before the break at the card and the held starts: 17
	// calls, 4 of them statuses, 7 appends.
	want := map[string]int{"chat.postMessage": 1, "chat.update": 2, "assistant.threads.setStatus": 3, "chat.startStream": 2, "chat.appendStream": 1, "chat.stopStream": 2}
	for m, n := range want {
		if got[m] != n {
			t.Errorf("%s: %d calls, want %d", m, got[m], n)
		}
	}
	_ = time.Second
}

// TestStatusAfterPost: Slack clears the status when the bot posts in the
// thread; after Turn.Posted the same status is sent again.
func TestStatusAfterPost(t *testing.T) {
	fake, ad, _, e := turnSetup(t, slack.Config{}, nil)
	ctx := context.Background()
	turn := adapters.StartTurn(ad, e.Place, e.User, nil)
	turn.Status(ctx, adapters.StatusThinking)
	if _, err := ad.Post(ctx, e.Place, adapters.Content{Text: "a note"}); err != nil {
		t.Fatal(err)
	}
	if got := fake.Status(channel, e.Place.Thread); got != "" {
		t.Fatalf("the fake kept status %q after a post; Slack clears it", got)
	}
	turn.Posted()
	turn.Status(ctx, adapters.StatusThinking)
	if got := fake.Status(channel, e.Place.Thread); got != adapters.StatusThinking {
		t.Errorf("status %q after Posted and Status, want %q", got, adapters.StatusThinking)
	}
}

// TestStatusChangesOnlyWithTheTurn: a status costs a call only when what
// the thread shows changes: the same status again is none; after a post
// (which cleared it) the waiting status and the clear are none (the card
// says it waits); thinking again is one.
func TestStatusChangesOnlyWithTheTurn(t *testing.T) {
	fake, ad, _, e := turnSetup(t, slack.Config{}, nil)
	ctx := context.Background()
	turn := adapters.StartTurn(ad, e.Place, e.User, nil)
	steps := []struct {
		name  string
		do    func()
		calls int
	}{
		{"thinking", func() { turn.Status(ctx, adapters.StatusThinking) }, 1},
		{"thinking again", func() { turn.Status(ctx, adapters.StatusThinking) }, 0},
		{"a card posted", func() {
			if _, err := ad.Post(ctx, e.Place, adapters.Content{Card: vacuumCard("pending")}); err != nil {
				t.Fatal(err)
			}
			turn.Posted()
		}, 0},
		{"waiting, under the card", func() { turn.Status(ctx, adapters.StatusWaiting) }, 0},
		{"thinking after the outcome", func() { turn.Status(ctx, adapters.StatusThinking) }, 1},
		{"the answer posted", func() {
			if _, err := ad.Post(ctx, e.Place, adapters.Content{Text: "done"}); err != nil {
				t.Fatal(err)
			}
			turn.Posted()
		}, 0},
		{"the end, after the post", func() {
			if !turn.End(ctx, "") {
				t.Error("End with no answer reported false")
			}
		}, 0},
	}
	for _, s := range steps {
		before := fake.Calls("assistant.threads.setStatus")
		s.do()
		if got := fake.Calls("assistant.threads.setStatus") - before; got != s.calls {
			t.Errorf("%s: %d status calls, want %d", s.name, got, s.calls)
		}
	}
	if got := fake.Status(channel, e.Place.Thread); got != "" {
		t.Errorf("status %q after the answer", got)
	}
}

// TestBreakWithoutStream: words held back when a card comes and no stream
// is open are posted as one message before it; End with an answer and no
// stream leaves it to the bot to post (one call, not a stream's two).
func TestBreakWithoutStream(t *testing.T) {
	fake, ad, _, e := turnSetup(t, slack.Config{}, nil)
	ctx := context.Background()
	turn := adapters.StartTurn(ad, e.Place, e.User, nil)
	if !turn.Text(ctx, "I will remove tmp_a.") {
		t.Fatal("words not taken")
	}
	if !turn.Break(ctx) {
		t.Fatal("Break reported the words not shown")
	}
	var said []string
	for _, m := range fake.Thread(channel, e.Place.Thread) {
		if m.User == slacktest.BotUserID {
			said = append(said, m.Text)
		}
	}
	if len(said) != 1 || said[0] != "I will remove tmp_a." {
		t.Errorf("the bot said %q before the card, want the words held back", said)
	}
	if n := fake.Calls("chat.startStream"); n != 0 {
		t.Errorf("%d streams started for words before a card", n)
	}
	if turn.End(ctx, "Removed tmp_a.") {
		t.Error("End reported an answer shown with no stream open; the bot would not post it")
	}
	if n := fake.Calls("chat.startStream") + fake.Calls("chat.stopStream"); n != 0 {
		t.Errorf("%d stream calls for an answer with no stream open", n)
	}
}

// TestStartHeld: a call that starts is held adapters.TextEvery: a quick
// one is one call, as it ended; a long one is shown running once the
// time is up, and then as it ends.
func TestStartHeld(t *testing.T) {
	fake, ad, _, e := turnSetup(t, slack.Config{}, nil)
	ctx := context.Background()
	turn := adapters.StartTurn(ad, e.Place, e.User, nil)
	start := adapters.Task{ID: "call_1", Title: "ls", State: adapters.TaskInProgress, Details: "running"}
	if !turn.Task(ctx, start) || !turn.Task(ctx, adapters.Task{ID: "call_1", Title: "ls", State: adapters.TaskComplete, Details: "exit code 0"}) {
		t.Fatal("the quick call was not shown")
	}
	if n := fake.Calls("chat.startStream") + fake.Calls("chat.appendStream"); n != 1 {
		t.Errorf("a quick call cost %d stream calls, want 1", n)
	}
	long := adapters.Task{ID: "call_2", Title: "sleep 60", State: adapters.TaskInProgress, Details: "running"}
	if !turn.Task(ctx, long) {
		t.Fatal("the long call was not taken")
	}
	fake.Wait(t, "the long call shown running", func() bool {
		ss := fake.Streams(channel, e.Place.Thread)
		return len(ss) == 1 && len(ss[0].Tasks) == 2 && ss[0].Tasks[1].Status == "in_progress"
	})
	if !turn.Task(ctx, adapters.Task{ID: "call_2", Title: "sleep 60", State: adapters.TaskComplete, Details: "exit code 0"}) {
		t.Fatal("the long call's end was not shown")
	}
	if n := fake.Calls("chat.appendStream"); n != 2 {
		t.Errorf("%d appends, want 2 (the long call running, then done)", n)
	}
}

// TestTwoStartsHeld: a second call that starts while the first is held
// sends the first's start before it is held itself; neither is lost.
func TestTwoStartsHeld(t *testing.T) {
	fake, ad, _, e := turnSetup(t, slack.Config{}, nil)
	ctx := context.Background()
	turn := adapters.StartTurn(ad, e.Place, e.User, nil)
	for _, id := range []string{"call_1", "call_2"} {
		if !turn.Task(ctx, adapters.Task{ID: id, Title: id, State: adapters.TaskInProgress}) {
			t.Fatalf("%s not taken", id)
		}
	}
	if !turn.End(ctx, "") {
		t.Fatal("the end was not shown")
	}
	ss := fake.Streams(channel, e.Place.Thread)
	if len(ss) != 1 || len(ss[0].Tasks) != 2 || ss[0].Tasks[0].ID != "call_1" || ss[0].Tasks[1].ID != "call_2" {
		t.Errorf("streams %+v, want one with call_1 then call_2", ss)
	}
}
