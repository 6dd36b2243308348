package bot_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
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
)

// replica is one bot on its own fake adapter, as one replica of a chat app
// sees the platform.
type replica struct {
	fake *adaptertest.Fake
	done chan error
}

// startReplica runs a bot on a fake platform named "slack" over store,
// with the model at srv. Every replica's fake numbers its events from ev1,
// so the first Say on two replicas delivers the same event id to both.
func startReplica(t *testing.T, store approval.Store, srv *agenttest.Server) *replica {
	t.Helper()
	reg, err := tools.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	pol, err := risk.New(risk.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var model agent.Model
	if srv != nil {
		m, err := llm.New(llm.Config{BaseURL: srv.BaseURL(), APIKey: "test-key", Model: "fake-model", MaxAttempts: 1}, srv.Client())
		if err != nil {
			t.Fatal(err)
		}
		model = m
	}
	r := &replica{fake: adaptertest.NewFake("slack"), done: make(chan error, 1)}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	b, err := bot.New(bot.Config{}, []adapters.Adapter{r.fake}, agent.Config{}, bot.Deps{Model: model, Tools: reg, Policy: pol, Store: store, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	go func() { r.done <- b.Run(context.Background()) }()
	t.Cleanup(func() { r.end(t) })
	return r
}

// end ends the replica's input and waits for Run to return.
func (r *replica) end(t *testing.T) {
	t.Helper()
	r.fake.End(t)
	select {
	case err, ok := <-r.done:
		if ok && err != nil {
			t.Errorf("Run = %v", err)
		}
		if ok {
			close(r.done)
		}
	case <-time.After(waitLimit):
		t.Fatal("the bot did not return at the end of input")
	}
}

// said returns how many messages on the replica's platform contain text.
func (r *replica) said(text string) int {
	_, contents := r.fake.Messages()
	n := 0
	for _, c := range contents {
		if strings.Contains(c.Text, text) {
			n++
		}
	}
	return n
}

// TestRedeliveryToAnotherReplica: the platform delivers one message to two
// replicas sharing one store (a retry that reached the other replica); the
// agent's turn starts once: one model request, one answer.
func TestRedeliveryToAnotherReplica(t *testing.T) {
	for _, st := range sharedStores() {
		t.Run(st.name, func(t *testing.T) {
			storeA, storeB := st.pair(t)
			srv := agenttest.NewServer(t, agenttest.Text("the disk is 41% full"), agenttest.Text("a second answer"))
			a, b := startReplica(t, storeA, srv), startReplica(t, storeB, srv)

			place := adapters.Place{Channel: "C1", Thread: "T1"}
			// One event, delivered to both replicas, as a platform that
			// retries to another connection does.
			e := adapters.Event{ID: "Ev0123", User: adaptertest.Alice, Place: place, Text: "how full is the disk?"}
			a.fake.Deliver(t, e)
			waitFor(t, "an answer", func() bool { return a.said("41% full") > 0 })
			e.Redelivered = true // the platform's retry, to the other connection
			b.fake.Deliver(t, e)
			a.end(t)
			b.end(t)

			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d model requests, want 1: the redelivered message started a second turn", n)
			}
			if n := a.said("41% full") + b.said("41% full") + a.said("second answer") + b.said("second answer"); n != 1 {
				t.Errorf("%d answers posted, want 1", n)
			}
			for _, r := range []*replica{a, b} {
				if n := r.fake.Notices(adaptertest.Alice); len(n) != 0 {
					t.Errorf("alice was sent notices %q", n)
				}
			}
		})
	}
}

// deliveryFails is a store whose Deduper cannot answer, as when Redis
// goes away just as a message arrives.
type deliveryFails struct{ approval.Store }

func (deliveryFails) FirstDelivery(context.Context, string, time.Duration) (bool, error) {
	return false, errors.New("dial tcp 10.0.0.7:6379: connection refused")
}

// TestRedeliveryUnknown: when the store cannot say whether a message was
// handled elsewhere, the message is not acted on (running it twice could
// put a second card up for the same operation) and its sender is told so,
// privately; a click is still handled, since deciding is atomic anyway.
func TestRedeliveryUnknown(t *testing.T) {
	mem := memstore.New(memstore.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { _ = mem.Close() })
	srv := agenttest.NewServer(t)
	r := startReplica(t, deliveryFails{mem}, srv)
	place := adapters.Place{Channel: "C1", Thread: "T1"}

	// A card made before the store began to fail, to click on.
	a, _, err := mem.Create(context.Background(), &approval.Approval{
		ToolCallID:   "call-1",
		Tool:         "shell",
		Args:         []byte(`{"command":"touch x"}`),
		Verdict:      risk.Verdict{Decision: risk.Confirm, Risk: risk.Medium},
		Requester:    approval.User{ID: adaptertest.Alice.ID},
		Conversation: approval.Conversation{Platform: "slack", Channel: place.Channel, Thread: place.Thread},
		ExpiresAt:    time.Now().Add(time.Hour),
	})
	if err != nil {
		t.Fatal(err)
	}

	r.fake.Say(t, adaptertest.Alice, place, "how full is the disk?")
	waitFor(t, "a notice to alice", func() bool { return len(r.fake.Notices(adaptertest.Alice)) > 0 })
	if n := r.fake.Notices(adaptertest.Alice)[0]; !strings.Contains(n, "could not check whether this message was already being handled, so I did not act on it") ||
		strings.Contains(n, "10.0.0.7") {
		t.Errorf("alice was told %q; want a plain sentence without the error's detail", n)
	}

	r.fake.Click(t, adaptertest.Bob, place, "", adapters.Button{Value: a.ID, Approve: false}, "not now")
	waitFor(t, "the click to be decided", func() bool {
		got, err := mem.Get(context.Background(), a.ID)
		return err == nil && got.State == approval.Cancelled
	})
	r.end(t)
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d model requests, want 0: a message the store could not check was acted on", n)
	}
}
