package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters/slack"
	"github.com/countersign/countersign/adapters/slack/slacktest"
	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/cmd/internal/telemetry/otlptest"
	"github.com/countersign/countersign/internal/testenv"
)

// tracingEnv clears the OTEL_* variables that could turn tracing on or
// off behind a test's back, and sends batches every 20ms.
func tracingEnv(t *testing.T) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_SERVICE_NAME", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
		t.Setenv(k, "")
	}
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20")
}

// TestTracesOfATurnWithAnApproval is issue 28's "done when" for traces:
// a Slack message whose model answer needs a card, then an Approve click,
// through the real slack-go client, the fake Slack, the fake model and
// the real OTLP/HTTP exporter to a local receiver. The click's spans are
// in the turn's trace, each span under the right parent, with the
// attributes the docs promise and none of the operation's text.
func TestTracesOfATurnWithAnApproval(t *testing.T) {
	tracingEnv(t)
	rcv := otlptest.New(t)
	dir := t.TempDir()
	for _, f := range []string{"tmp_a", "keep.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fake := slacktest.New(t)
	model := agenttest.NewServer(t,
		agenttest.Calls(agenttest.Call("call-1", "execute_command", `{"command":"rm -rf ./tmp_*","risk_level":"high"}`)),
		agenttest.Text("Removed tmp_a; keep.txt is untouched."),
	)
	slackRun(t, dir, "telemetry:\n  otlp_endpoint: "+rcv.URL()+"\n", fake, model)

	thread := fake.Mention(alice, slackChannel, "", "clean up the temp files")
	card := threadHas(t, fake, thread, "rm -rf ./tmp_*")
	fake.Acked(t, fake.Click(bob, slackChannel, card.TS, slack.ActionApprove, approvalID(t, card)))
	threadHas(t, fake, thread, "keep.txt is untouched")

	one := func(name string) otlptest.Span {
		t.Helper()
		var got []otlptest.Span
		testenv.Eventually(t, 10*time.Second, func() bool { got = rcv.Named(name); return len(got) > 0 }, "a span named "+name)
		return got[0]
	}
	turn := one("countersign.turn")
	judge := one("countersign.judge")
	wait := one("countersign.card.wait")
	decision := one("countersign.decision")
	run := one("countersign.run")
	var chats []otlptest.Span
	testenv.Eventually(t, 10*time.Second, func() bool { chats = rcv.Named("chat test-model"); return len(chats) == 2 }, "two model request spans")
	testenv.Eventually(t, 10*time.Second, func() bool { return len(rcv.Named("slack chat.update")) > 0 }, "a chat.update span")

	if turn.ParentID != "" {
		t.Errorf("the turn's span has parent %s, want none", turn.ParentID)
	}
	for _, c := range []struct {
		what   string
		span   otlptest.Span
		parent otlptest.Span
	}{
		{"the judgement", judge, turn},
		{"the first model request", chats[0], turn},
		{"the card's wait", wait, turn},
		{"the click's decision", decision, turn},
		{"the approved run", run, decision},
		{"the resumed turn's model request", chats[1], decision},
	} {
		if c.span.TraceID != turn.TraceID {
			t.Errorf("%s (%s) is in trace %s, want the turn's %s", c.what, c.span.Name, c.span.TraceID, turn.TraceID)
		}
		if c.span.ParentID != c.parent.SpanID {
			t.Errorf("%s (%s) has parent %s, want %s (%s)", c.what, c.span.Name, c.span.ParentID, c.parent.SpanID, c.parent.Name)
		}
	}
	for _, c := range []struct {
		span      otlptest.Span
		key, want string
	}{
		{turn, "countersign.platform", "slack"},
		{judge, "countersign.tool", "execute_command"},
		{judge, "countersign.decision", "confirm"},
		{judge, "countersign.source", "model"},
		{wait, "countersign.decided_by", bob.ID},
		{wait, "countersign.state", "approved"},
		{decision, "countersign.decided_by", bob.ID},
		{run, "countersign.run.exit_code", "0"},
		{run, "countersign.run.approved", "true"},
		{run, "countersign.run.status", "ok"},
		{chats[0], "gen_ai.request.model", "test-model"},
		{chats[0], "gen_ai.operation.name", "chat"},
		{turn, "service.name", "countersign"},
	} {
		got, ok := c.span.Attrs[c.key]
		if !ok {
			got, ok = c.span.Resource[c.key]
		}
		if !ok || got != c.want {
			t.Errorf("%s: %s = %q (set %v), want %q", c.span.Name, c.key, got, ok, c.want)
		}
	}
	for _, key := range []string{"countersign.rule", "countersign.wait_ms"} {
		if _, ok := judge.Attrs[key]; !ok && key == "countersign.rule" {
			t.Errorf("the judgement has no %s: %v", key, judge.Attrs)
		}
		if _, ok := wait.Attrs[key]; !ok && key == "countersign.wait_ms" {
			t.Errorf("the card's wait has no %s: %v", key, wait.Attrs)
		}
	}
	for _, key := range []string{"countersign.run.duration_ms", "countersign.run.fenced"} {
		if _, ok := run.Attrs[key]; !ok {
			t.Errorf("the run has no %s: %v", key, run.Attrs)
		}
	}
	for _, key := range []string{"gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"} {
		if _, ok := chats[0].Attrs[key]; !ok {
			t.Errorf("the model request has no %s: %v", key, chats[0].Attrs)
		}
	}
	if wait.Start >= decision.Start || wait.End > decision.Start+uint64(time.Second) {
		t.Errorf("the card's wait runs %d..%d, want it to start before the decision (%d) and end at it", wait.Start, wait.End, decision.Start)
	}
	for _, s := range rcv.Spans() {
		for k, v := range s.Attrs {
			if strings.Contains(v, "rm -rf") || strings.Contains(v, "tmp_") || strings.Contains(v, "clean up") {
				t.Errorf("%s: attribute %s = %q holds the operation's or the message's text", s.Name, k, v)
			}
		}
	}
}

// TestTracesUnreachableEndpoint: with the receiver gone, the turn
// completes as if tracing were off, and the log says so once.
func TestTracesUnreachableEndpoint(t *testing.T) {
	tracingEnv(t)
	fake := slacktest.New(t)
	model := agenttest.NewServer(t, agenttest.Text("Hello."), agenttest.Text("Hello again."))
	// A port nothing listens on (taken after the fakes took theirs).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "http://" + ln.Addr().String()
	ln.Close()
	logFile := filepath.Join(t.TempDir(), "countersign.log")
	slackRun(t, t.TempDir(), "telemetry:\n  otlp_endpoint: "+gone+"\nlog:\n  file: "+logFile+"\n", fake, model)

	warnings := func() int {
		b, _ := os.ReadFile(logFile)
		return strings.Count(string(b), "the OTLP receiver cannot be reached")
	}
	thread := fake.Mention(alice, slackChannel, "", "hello")
	threadHas(t, fake, thread, "Hello.")
	testenv.Eventually(t, 10*time.Second, func() bool { return warnings() > 0 }, "a warning that the receiver cannot be reached")
	fake.Say(alice, slackChannel, thread, "hello again")
	threadHas(t, fake, thread, "Hello again.")
	if n := warnings(); n != 1 {
		t.Errorf("%d warnings about the unreachable receiver, want 1", n)
	}
}
