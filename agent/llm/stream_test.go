package llm_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/agent/llm"
	"github.com/countersign/countersign/tools"
)

// words collects what a streamed call gives Request.Text.
type words struct{ got []string }

func (w *words) text(d string) { w.got = append(w.got, d) }

// TestStreamAssemblesTheMessage: with Request.Text set the request is
// streamed (server-sent events), the words come one delta at a time, and
// the message is put together from the deltas: the content in order, and
// each tool call from its index (id and name in the first delta, the
// arguments in pieces).
func TestStreamAssemblesTheMessage(t *testing.T) {
	srv := agenttest.NewServer(t,
		agenttest.Reply{Content: "Let me look at the disk and the logs.", ToolCalls: []agenttest.WireToolCall{
			agenttest.Call("call_1", "execute_command", `{"command":"df -h /var"}`),
			agenttest.Call("call_2", "execute_command", `{"command":"journalctl -u nginx --since today"}`),
		}},
		agenttest.Text("The disk is 41% full."),
	)
	c := newClient(t, fast(srv))
	var w words
	req := agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "how is the disk?"}}, Tools: []tools.Spec{echoSpec}, Text: w.text}
	resp, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	want := agent.Message{Role: agent.RoleAssistant, Content: "Let me look at the disk and the logs.", ToolCalls: []agent.ToolCall{
		{ID: "call_1", Name: "execute_command", Arguments: `{"command":"df -h /var"}`},
		{ID: "call_2", Name: "execute_command", Arguments: `{"command":"journalctl -u nginx --since today"}`},
	}}
	if diff := cmp.Diff(want, resp.Message); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
	if resp.FinishReason != "tool_calls" || resp.Usage != (agent.Usage{PromptTokens: 1, CompletionTokens: 1}) {
		t.Errorf("finish %q, usage %+v; want tool_calls and the usage of the last chunk", resp.FinishReason, resp.Usage)
	}
	if len(w.got) != 9 || strings.Join(w.got, "") != want.Content {
		t.Errorf("Text got %q, want the 9 words of the content in order", w.got)
	}
	got := srv.Requests()[0]
	if !got.Stream || got.Raw["stream_options"] == nil {
		t.Errorf("request stream=%v stream_options=%v; want a streamed request asking for the usage", got.Stream, got.Raw["stream_options"])
	}

	w.got = nil
	resp, err = c.Complete(context.Background(), agent.Request{Messages: req.Messages})
	if err != nil || resp.Message.Content != "The disk is 41% full." {
		t.Fatalf("Complete without Text: %+v, %v", resp, err)
	}
	if srv.Requests()[1].Stream || len(w.got) != 0 {
		t.Error("a request without Text was streamed")
	}
}

// TestStreamRetries: a streamed call that fails before any word was given
// is retried as a whole one is (Retry-After honoured: go-openai drops the
// headers of a failed stream, the client keeps them); one that breaks off
// after its first words is not retried, and says so.
func TestStreamRetries(t *testing.T) {
	t.Run("429 with Retry-After before the first word", func(t *testing.T) {
		srv := agenttest.NewServer(t, agenttest.Error(429, map[string]string{"Retry-After-Ms": "300"}), agenttest.Text("ok then"))
		var w words
		start := time.Now()
		resp, err := newClient(t, fast(srv)).Complete(context.Background(), agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}, Text: w.text})
		if err != nil || resp.Message.Content != "ok then" {
			t.Fatalf("Complete: %+v, %v", resp, err)
		}
		if d := time.Since(start); d < 300*time.Millisecond {
			t.Errorf("retried after %s, want the 300 ms the server asked for", d)
		}
		if strings.Join(w.got, "") != "ok then" || len(srv.Requests()) != 2 {
			t.Errorf("words %q over %d requests, want the second answer's only, over 2", w.got, len(srv.Requests()))
		}
	})
	t.Run("broken off after two words", func(t *testing.T) {
		srv := agenttest.NewServer(t, agenttest.Reply{Content: "The disk is 41% full.", BreakAfter: 2}, agenttest.Text("never asked for"))
		var w words
		_, err := newClient(t, fast(srv)).Complete(context.Background(), agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}, Text: w.text})
		if err == nil {
			t.Fatal("Complete succeeded with half an answer")
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%d requests, want 1: words were shown, a retry would follow them with a second answer", n)
		}
		if llm.Permanent(err) || !strings.Contains(llm.Fix(err), "broke off") {
			t.Errorf("error %v (fix %q), want a transient one saying the answer broke off", err, llm.Fix(err))
		}
		if strings.Join(w.got, "") != "The disk " {
			t.Errorf("words %q, want the two that came", w.got)
		}
	})
	t.Run("a server that refuses streaming", func(t *testing.T) {
		srv := agenttest.NewServer(t,
			agenttest.Reply{Status: 400, Body: `{"error":{"message":"Unrecognized request argument supplied: stream_options","type":"invalid_request_error"}}`},
			agenttest.Text("whole"), agenttest.Text("whole again"))
		c := newClient(t, fast(srv))
		var w words
		for _, want := range []string{"whole", "whole again"} {
			resp, err := c.Complete(context.Background(), agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}, Text: w.text})
			if err != nil || resp.Message.Content != want {
				t.Fatalf("Complete: %+v, %v; want %q made whole", resp, err, want)
			}
		}
		reqs := srv.Requests()
		if len(reqs) != 3 || !reqs[0].Stream || reqs[1].Stream || reqs[2].Stream {
			t.Errorf("%d requests; want a streamed one refused, then whole ones only", len(reqs))
		}
		if len(w.got) != 0 {
			t.Errorf("words %q given from whole answers", w.got)
		}
	})
	t.Run("a server that ignores stream and answers whole", func(t *testing.T) {
		var streamed []bool
		var mu sync.Mutex
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var req struct{ Stream bool }
			_ = json.NewDecoder(r.Body).Decode(&req)
			mu.Lock()
			streamed = append(streamed, req.Stream)
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"whole"},"finish_reason":"stop"}]}`)
		}))
		t.Cleanup(srv.Close)
		c := newClient(t, llm.Config{BaseURL: srv.URL + "/v1", Model: "m", APIKey: "sk-test", Timeout: 5 * time.Second, MaxAttempts: 2, Backoff: time.Millisecond, MaxBackoff: time.Millisecond})
		var w words
		for range 2 {
			resp, err := c.Complete(context.Background(), agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}, Text: w.text})
			if err != nil || resp.Message.Content != "whole" {
				t.Fatalf("Complete: %+v, %v; want the whole answer", resp, err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if len(streamed) != 3 || !streamed[0] || streamed[1] || streamed[2] {
			t.Errorf("requests streamed %v; want one streamed, answered whole, then whole ones only", streamed)
		}
	})
}
