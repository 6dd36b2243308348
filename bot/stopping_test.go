package bot_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/agent/llm"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/memstore"
	"github.com/countersign/countersign/bot"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
	"github.com/countersign/countersign/tools/shelltool"
)

// running is a bot on a fake platform whose Run can be cancelled, as a
// SIGTERM does.
type running struct {
	fake   *adaptertest.Fake
	store  *memstore.Store
	dir    string
	stop   context.CancelFunc
	done   chan error
	server *agenttest.Server
}

func startRunning(t *testing.T, cfg bot.Config, script ...agenttest.Reply) *running {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "log.txt"), []byte("a line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sh, err := shelltool.New(shelltool.Config{Root: dir, Timeout: time.Minute})
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
	srv := agenttest.NewServer(t, script...)
	model, err := llm.New(llm.Config{BaseURL: srv.BaseURL(), APIKey: "k", Model: "m", MaxAttempts: 1}, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store := memstore.New(memstore.Options{Logger: log})
	fake := adaptertest.NewFake("slack")
	b, err := bot.New(cfg, []adapters.Adapter{fake}, agent.Config{}, bot.Deps{Model: model, Tools: reg, Policy: pol, Store: store, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	r := &running{fake: fake, store: store, dir: dir, stop: stop, done: make(chan error, 1), server: srv}
	go func() { r.done <- b.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		fake.End(t)
		select {
		case <-r.done:
		case <-time.After(2 * time.Minute):
			t.Error("the bot did not stop")
		}
	})
	return r
}

// TestShutdownDuringALongTurn: a SIGTERM while the model takes its time;
// the grace runs out; the turn's last word still replaces "Working on it…",
// on its own context, and says what became of the message.
func TestShutdownDuringALongTurn(t *testing.T) {
	r := startRunning(t, bot.Config{ShutdownGrace: 200 * time.Millisecond}, agenttest.Reply{Content: "late", Delay: time.Minute})
	place := adapters.Place{Channel: "C1", Thread: "T1"}
	r.fake.Say(t, adaptertest.Alice, place, "summarise the incident")
	waitFor(t, "the working line", func() bool { return strings.Contains(flattenAll(r.fake), "Working on it") })
	r.stop()
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		r.done <- nil
	case <-time.After(waitLimit):
		t.Fatal("Run did not return after the grace")
	}
	all := flattenAll(r.fake)
	if strings.Contains(all, "Working on it") {
		t.Errorf("the conversation still says \"Working on it…\":\n%s", all)
	}
	if !strings.Contains(all, "shutting down") || !strings.Contains(all, "summarise the incident") {
		t.Errorf("the conversation was not told the message was cut off by the shutdown:\n%s", all)
	}
}

// TestCancelDuringAnAutoRun: !cancel while a call that needed no card
// runs: the call is stopped and recorded in the audit log as cancelled by
// that person, and the conversation hears "cancelled", not that the model
// failed.
func TestCancelDuringAnAutoRun(t *testing.T) {
	r := startRunning(t, bot.Config{},
		agenttest.Calls(agenttest.Call("c1", "execute_command", `{"command":"sleep 41.25"}`)),
		agenttest.Text("never asked"))
	place := adapters.Place{Channel: "C1", Thread: "T1"}
	r.fake.Say(t, adaptertest.Alice, place, "wait a while")
	waitFor(t, "the command running", func() bool { return len(processesRunning("sleep 41.25")) > 0 })
	r.fake.Say(t, adaptertest.Alice, place, "!cancel")
	waitFor(t, "the run's audit record", func() bool {
		log, _ := r.store.AuditLog(context.Background(), 100)
		for _, e := range log {
			if e.Kind == approval.KindExecution && strings.Contains(e.Operation, "sleep 41.25") && strings.Contains(e.Detail, "cancelled by alice") {
				return true
			}
		}
		return false
	})
	waitFor(t, "the cancel said", func() bool { return strings.Contains(flattenAll(r.fake), "Cancelled the model's turn, as alice asked") })
	all := flattenAll(r.fake)
	if strings.Contains(all, "language model") {
		t.Errorf("a cancelled turn was reported as a model failure:\n%s", all)
	}
	if n := len(r.server.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1: the cancelled turn went on", n)
	}
}

// TestStopAnAutoRun: `!run tail -f` needs no card and never ends by
// itself; `!stop` in its conversation stops it, and its result says so.
func TestStopAnAutoRun(t *testing.T) {
	r := startRunning(t, bot.Config{})
	place := adapters.Place{Channel: "C1", Thread: "T1"}
	r.fake.Say(t, adaptertest.Alice, place, "!run tail -f log.txt")
	waitFor(t, "the command running", func() bool { return len(processesRunning("tail\x00-f\x00log.txt")) > 0 })
	r.fake.Say(t, adaptertest.Alice, place, "!stop")
	waitFor(t, "a notice to alice", func() bool { return len(r.fake.Notices(adaptertest.Alice)) > 0 })
	if n := r.fake.Notices(adaptertest.Alice)[0]; !strings.Contains(n, "Stopping") {
		t.Errorf("alice was told %q, want that it is stopping", n)
	}
	waitFor(t, "the result", func() bool { return strings.Contains(flattenAll(r.fake), "stopped by alice") })
	if n := len(processesRunning("tail\x00-f\x00log.txt")); n != 0 {
		t.Errorf("%d tail processes still run", n)
	}
}

// TestTurnsWaitTheirTurn: with one model turn allowed at once, a second
// conversation's message waits for the first turn to end, its sender is
// told where it stands in line, and both are answered in order.
func TestTurnsWaitTheirTurn(t *testing.T) {
	hold := make(chan struct{}) // the first turn runs until the test has looked
	r := startRunning(t, bot.Config{MaxTurns: 1}, agenttest.Reply{Content: "first answer", Hold: hold}, agenttest.Text("second answer"))
	r.fake.Say(t, adaptertest.Alice, adapters.Place{Channel: "C1", Thread: "T1"}, "first question")
	waitFor(t, "the first model request", func() bool { return len(r.server.Requests()) == 1 })
	r.fake.Say(t, adaptertest.Bob, adapters.Place{Channel: "C1", Thread: "T2"}, "second question")
	waitFor(t, "a notice to bob", func() bool { return len(r.fake.Notices(adaptertest.Bob)) > 0 })
	if n := r.fake.Notices(adaptertest.Bob)[0]; !strings.Contains(n, "number 1 in line") {
		t.Errorf("bob was told %q, want his place in line", n)
	}
	if n := len(r.server.Requests()); n != 1 {
		t.Errorf("%d model requests while the first turn runs, want 1", n)
	}
	close(hold)
	waitFor(t, "both answers", func() bool {
		all := flattenAll(r.fake)
		return strings.Contains(all, "first answer") && strings.Contains(all, "second answer")
	})
}

// TestLongOutputReachesTheAdapterWhole: a direct command whose output is
// cut in the reply hands the adapter the whole output, for a file.
func TestLongOutputReachesTheAdapterWhole(t *testing.T) {
	r := startRunning(t, bot.Config{})
	r.fake.Say(t, adaptertest.Alice, adapters.Place{Channel: "C1", Thread: "T1"}, "!run seq 1 3000")
	var got adapters.Content
	waitFor(t, "the reply", func() bool {
		_, contents := r.fake.Messages()
		for _, c := range contents {
			if strings.Contains(c.Text, "seq 1 3000") {
				got = c
				return true
			}
		}
		return false
	})
	if strings.Contains(got.Text, "\n2999\n") {
		t.Fatalf("the reply shows the whole output; the test needs a longer one")
	}
	if !strings.HasPrefix(got.Full, "1\n2\n") || !strings.Contains(got.Full, "\n2999\n3000") {
		t.Errorf("Full = %.40q…; want the whole output", got.Full)
	}
}
