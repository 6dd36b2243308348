package agent_test

import (
	"slices"
	"testing"

	"github.com/countersign/countersign/agent/agenttest"
)

// TestHandleReplyingKeepsTheTurnsWords: the words of a turn go where
// HandleReplying was told, not to the Sink, also when the turn resumes from
// inside itself (its card could not be posted, so the call was cancelled at
// once and the model answered): the resume holds the turn's lock and its
// words, handed down explicitly.
func TestHandleReplyingKeepsTheTurnsWords(t *testing.T) {
	e := newEnv(t, memoryBackend,
		agenttest.Calls(agenttest.Call("c1", "execute_command", `{"command":"touch x.txt"}`)),
		agenttest.Text("I could not ask for approval."),
	)
	e.sink.FailCards = true
	out := &agenttest.Sink{}
	if err := e.agent(e.open()).HandleReplying(ctx, conv, alice, "touch", out); err != nil {
		t.Fatalf("HandleReplying: %v", err)
	}
	if got := out.Replies(); !slices.Contains(got, "I could not ask for approval.") {
		t.Errorf("the turn's replies = %q, want the model's answer after the resume", got)
	}
	if got := e.sink.Replies(); len(got) != 0 {
		t.Errorf("the Sink got the turn's words %q, want none", got)
	}
}
