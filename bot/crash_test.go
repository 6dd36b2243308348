package bot_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/redisstore"
	"github.com/countersign/countersign/bot"
	"github.com/countersign/countersign/internal/testenv"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
	"github.com/countersign/countersign/tools/shelltool"
)

// crashMessages is how many !run messages the crashed replica has
// acknowledged and not finished.
const crashMessages = 120

// crashCommand is what each message runs: slow, read-only (it runs at
// once, without a card), and with a duration no other process uses, so
// that the test can find the processes the crashed replica left.
const crashCommand = "sleep 37.123"

// crashBot builds a bot over the Redis store at prefix, on a fake Slack.
func crashBot(t *testing.T, prefix string, p adapters.Adapter) *bot.Bot {
	t.Helper()
	opt, err := redis.ParseURL(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store := redisstore.New(redis.NewClient(opt), redisstore.Options{Prefix: prefix, Logger: log})
	t.Cleanup(func() { _ = store.Close() })
	sh, err := shelltool.New(shelltool.Config{Root: t.TempDir()})
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
	cfg := bot.Config{InboxLease: 2 * time.Second, SweepInterval: 200 * time.Millisecond, QueueSize: crashMessages}
	b, err := bot.New(cfg, []adapters.Adapter{p}, agent.Config{}, bot.Deps{Tools: reg, Policy: pol, Store: store, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCrashHelper is the replica that crashes: it runs only when
// TestCrashWithQueuedMessages starts it as a process of its own.
func TestCrashHelper(t *testing.T) {
	prefix := os.Getenv("COUNTERSIGN_CRASH_PREFIX")
	if prefix == "" {
		t.Skip("started only by TestCrashWithQueuedMessages")
	}
	p := newStalledPlatform()
	p.unstall() // this platform answers at once
	p.ackOnRecord = true
	b := crashBot(t, prefix, p)
	go func() { _ = b.Run(context.Background()) }()
	for i := range crashMessages {
		p.events <- adapters.Event{ID: fmt.Sprint("Ev", i), User: adaptertest.Alice,
			Place: adapters.Place{Channel: "C1", Thread: fmt.Sprint("T", i)}, Text: "!run " + crashCommand}
	}
	testenv.Eventually(t, time.Minute, func() bool { return p.acked.Load() >= crashMessages }, "every message acknowledged")
	fmt.Println("crash-helper: acknowledged", crashMessages)
	select {} // until killed
}

// TestCrashWithQueuedMessages: a replica is killed (SIGKILL) the moment
// it has acknowledged 120 !run messages to the platform, none finished. Another
// replica on the same Redis finds every one of them and tells its sender,
// by name, that it was not acted on: none is lost in silence, and none is
// run again blind.
func TestCrashWithQueuedMessages(t *testing.T) {
	url := testenv.RedisURL(t)
	prefix := "cst-crash-" + fmt.Sprint(time.Now().UnixNano())
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "COUNTERSIGN_CRASH_PREFIX="+prefix, "COUNTERSIGN_TEST_REDIS_URL="+url)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	acked := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "crash-helper: acknowledged") {
				close(acked)
			}
		}
	}()
	select {
	case <-acked:
	case <-time.After(waitLimit):
		t.Fatal("the replica to crash did not acknowledge its messages")
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rc := redis.NewClient(opt)
	t.Cleanup(func() { _ = rc.Close() })
	// Killed the moment the last message is acknowledged: the platform
	// acknowledges when the bot says the event is recorded
	// (Event.Recorded), so nothing acknowledged is unrecorded.
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	orphans := processesRunning(crashCommand)
	t.Logf("after the kill, %d of the crashed replica's commands still run (pids %v)", len(orphans), orphans)
	for _, pid := range orphans {
		_ = syscall.Kill(pid, syscall.SIGKILL) // started by this test's child
	}

	p := newStalledPlatform()
	p.unstall()
	b := crashBot(t, prefix, p)
	done := make(chan error, 1)
	go func() { done <- b.Run(context.Background()) }()
	told := func() int {
		n := 0
		for _, s := range p.Notices(adaptertest.Alice) {
			if strings.Contains(s, "I stopped") && strings.Contains(s, crashCommand) {
				n++
			}
		}
		return n
	}
	waitFor(t, "alice told of every message", func() bool { return told() == crashMessages })
	waitFor(t, "the inbox empty", func() bool {
		n, err := rc.HLen(context.Background(), prefix+":{inbox}:e").Result()
		return err == nil && n == 0
	})
	close(p.events)
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	lost := crashMessages - told()
	t.Logf("crash trial: %d messages acknowledged, %d told to send again, %d lost silently", crashMessages, told(), lost)
	if n := told(); n != crashMessages {
		t.Errorf("alice was told of %d messages, want %d", n, crashMessages)
	}
	if s := flattenAll(p.Fake); strings.Contains(s, "exit code 0") {
		t.Errorf("a message of the dead replica was run again blind: %q", s)
	}
	if n := len(p.Notices(adaptertest.Alice)); n != crashMessages {
		t.Errorf("alice got %d notices, want %d (one per message)", n, crashMessages)
	}
}

// processesRunning returns the pids of the processes whose command line
// is exactly "/bin/sh -c <command>" or contains the command's words.
func processesRunning(command string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	want := strings.ReplaceAll(command, " ", "\x00")
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(b), want) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestRecoveredClickIsCarriedOut: a process accepted a click and died
// before acting on it. A replica takes the click from the inbox and
// carries it out once: the approved call runs, exactly once, and a
// second replica sweeping at the same time finds nothing to do.
func TestRecoveredClickIsCarriedOut(t *testing.T) {
	prefix := "cst-crash-" + fmt.Sprint(time.Now().UnixNano())
	p1, p2 := newStalledPlatform(), newStalledPlatform()
	p1.unstall()
	p2.unstall()
	b1 := crashBot(t, prefix, p1)
	opt, err := redis.ParseURL(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store := redisstore.New(redis.NewClient(opt), redisstore.Options{Prefix: prefix, Logger: log})
	t.Cleanup(func() { _ = store.Close() })
	place := adapters.Place{Channel: "C1", Thread: "T1"}
	a, _, err := store.Create(context.Background(), &approval.Approval{
		ToolCallID: "call-1", Tool: "execute_command", Args: []byte(`{"command":"echo recovered"}`),
		Verdict:      risk.Verdict{Decision: risk.Confirm, Risk: risk.Medium},
		Requester:    approval.User{ID: adaptertest.Alice.ID},
		Conversation: approval.Conversation{Platform: "slack", Channel: place.Channel, Thread: place.Thread},
		CreatedAt:    time.Now(), ExpiresAt: time.Now().Add(time.Hour),
	})
	if err != nil {
		t.Fatal(err)
	}
	click := adapters.Event{ID: "act:1", User: adaptertest.Bob, Place: place, Decision: &adapters.Decision{ApprovalID: a.ID, Approve: true}}
	dead := time.Now().Add(-time.Hour)
	if err := store.Accept(context.Background(), "a-dead-process", dead,
		approval.InboxEntry{ID: "slack:act:1", Data: bot.JournalEntry("slack", click), AcceptedAt: dead}); err != nil {
		t.Fatal(err)
	}
	b2 := crashBot(t, prefix, p2)
	done1, done2 := make(chan error, 1), make(chan error, 1)
	go func() { done1 <- b1.Run(context.Background()) }()
	go func() { done2 <- b2.Run(context.Background()) }()
	waitFor(t, "the recovered click carried out", func() bool {
		got, err := store.Get(context.Background(), a.ID)
		return err == nil && got.State == approval.Done
	})
	close(p1.events)
	close(p2.events)
	for _, d := range []chan error{done1, done2} {
		if err := <-d; err != nil {
			t.Fatalf("Run: %v", err)
		}
	}
	got, err := store.Get(context.Background(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.DecidedBy == nil || got.DecidedBy.ID != adaptertest.Bob.ID || got.Result == nil || !strings.Contains(got.Result.Stdout, "recovered") {
		t.Errorf("the approval is %+v; want approved by bob and run", got)
	}
	log2, err := store.AuditLog(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	for _, e := range log2 {
		if e.Kind == approval.KindExecution && e.ApprovalID == a.ID {
			runs++
		}
	}
	if runs != 1 {
		t.Errorf("%d executions recorded, want 1", runs)
	}
}

// TestInboxEmptyAfterACleanEnd: every kind of event a bot answers is
// cleared from the inbox once answered, so that a clean end leaves
// nothing for a replica to tell its sender about falsely.
func TestInboxEmptyAfterACleanEnd(t *testing.T) {
	prefix := "cst-inbox-" + fmt.Sprint(time.Now().UnixNano())
	p := newStalledPlatform()
	p.unstall()
	b := crashBot(t, prefix, p)
	done := make(chan error, 1)
	go func() { done <- b.Run(context.Background()) }()
	place := adapters.Place{Channel: "C1", Thread: "T1"}
	msg := func(id, text string) adapters.Event {
		return adapters.Event{ID: id, User: adaptertest.Alice, Place: place, Text: text}
	}
	for _, e := range []adapters.Event{
		msg("e1", "!help"), msg("e2", "!pending"), msg("e3", "!run ls"), msg("e4", "!run rm -f ./x"),
		msg("e5", "how full is the disk?"), msg("e6", "approve abcd"), msg("e7", "!stop"), msg("e8", "!cancel"),
		msg("e9", "   "), msg("e3", "!run ls"),
		{ID: "e10", User: adaptertest.Bob, Place: place, Decision: &adapters.Decision{ApprovalID: "abcd1234abcd1234abcd1234ab", Approve: true}},
	} {
		p.events <- e
	}
	waitFor(t, "the card", func() bool { return strings.Contains(flattenAll(p.Fake), "rm -f ./x") })
	close(p.events)
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	opt, err := redis.ParseURL(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	rc := redis.NewClient(opt)
	t.Cleanup(func() { _ = rc.Close() })
	left, err := rc.HKeys(context.Background(), prefix+":{inbox}:e").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("the inbox still holds %q after a clean end", left)
	}
	owners, err := rc.ZCard(context.Background(), prefix+":{inbox}:b").Result()
	if err != nil {
		t.Fatal(err)
	}
	if owners != 0 {
		t.Errorf("%d owners left in the inbox after a clean end, want 0", owners)
	}
}

// TestRecoveredClickOfADecidedCall: a process accepted a click and died;
// meanwhile the call was decided and ended elsewhere (recovery on another
// replica). The replica that takes the click over tells its sender once
// that it is already decided, and removes it from the inbox, so that no
// later replica takes it over and tells them again.
func TestRecoveredClickOfADecidedCall(t *testing.T) {
	prefix := "cst-crash-" + fmt.Sprint(time.Now().UnixNano())
	opt, err := redis.ParseURL(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store := redisstore.New(redis.NewClient(opt), redisstore.Options{Prefix: prefix, Logger: log})
	t.Cleanup(func() { _ = store.Close() })
	ctx := context.Background()
	place := adapters.Place{Channel: "C1", Thread: "T1"}
	a, _, err := store.Create(ctx, &approval.Approval{
		ToolCallID: "call-1", Tool: "execute_command", Args: []byte(`{"command":"echo recovered"}`),
		Verdict:      risk.Verdict{Decision: risk.Confirm, Risk: risk.Medium},
		Requester:    approval.User{ID: adaptertest.Alice.ID},
		Conversation: approval.Conversation{Platform: "slack", Channel: place.Channel, Thread: place.Thread},
		CreatedAt:    time.Now(), ExpiresAt: time.Now().Add(time.Hour),
	})
	if err != nil {
		t.Fatal(err)
	}
	// Carried out elsewhere: approved, claimed, ended as not run.
	now := time.Now()
	if d, err := store.Decide(ctx, a.ID, approval.Approved, approval.User{ID: adaptertest.Bob.ID}, "", now); err != nil || !d.Won {
		t.Fatalf("Decide = %+v, %v", d, err)
	}
	if _, ok, err := store.Claim(ctx, a.ID, now); err != nil || !ok {
		t.Fatalf("Claim = %v, %v", ok, err)
	}
	if _, err := store.Finish(ctx, a.ID, approval.Failed, tools.NotRun(tools.StatusError, "interrupted before it ran"), now); err != nil {
		t.Fatal(err)
	}
	click := adapters.Event{ID: "act:1", User: adaptertest.Bob, Place: place, Decision: &adapters.Decision{ApprovalID: a.ID, Approve: true}}
	dead := time.Now().Add(-time.Hour)
	if err := store.Accept(ctx, "a-dead-process", dead,
		approval.InboxEntry{ID: "slack:act:1", Data: bot.JournalEntry("slack", click), AcceptedAt: dead}); err != nil {
		t.Fatal(err)
	}
	rc := redis.NewClient(opt)
	t.Cleanup(func() { _ = rc.Close() })
	p := newStalledPlatform()
	p.unstall()
	b := crashBot(t, prefix, p)
	done := make(chan error, 1)
	go func() { done <- b.Run(context.Background()) }()
	waitFor(t, "bob told the click came too late", func() bool {
		return strings.Contains(strings.Join(p.Notices(adaptertest.Bob), "\n"), "already")
	})
	// Out of the inbox once answered: left there (owned by this replica,
	// anyone's once it leaves), every later replica would tell bob again.
	waitFor(t, "the inbox emptied", func() bool {
		n, err := rc.HLen(ctx, prefix+":{inbox}:e").Result()
		return err == nil && n == 0
	})
	close(p.events)
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n := len(p.Notices(adaptertest.Bob)); n != 1 {
		t.Errorf("bob was told %d times: %q; want once", n, p.Notices(adaptertest.Bob))
	}
	if n, err := rc.HLen(ctx, prefix+":{inbox}:e").Result(); err != nil || n != 0 {
		t.Errorf("the inbox holds %d entries, %v; want none", n, err)
	}
}
