package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/countersign/countersign/adapters/slack/slacktest"
	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/internal/testenv"
)

// TestChannelOverItsDailyBudget is issue 28's "a channel over its daily
// budget is told so": two replicas of countersign run share one Redis,
// the real slack-go client talks to the fake Slack and the real model
// client to the fake model. Replica A's turn spends the channel's day;
// A goes away, and on replica B a message in another thread of the
// channel is told which limit it reached and when it resets, without the
// model being asked; !usage says what was spent.
func TestChannelOverItsDailyBudget(t *testing.T) {
	redisURL := testenv.RedisURL(t)
	dir := t.TempDir()
	t.Chdir(dir)
	fake := slacktest.New(t)
	model := agenttest.NewServer(t, agenttest.Reply{Content: "The disk is 41% full.", Prompt: 1100, Completion: 100})
	config := `
llm:
  budget:
    per_channel_per_day: 1000
store:
  redis_url: ` + redisURL + `
  prefix: budget-e2e-` + approval.NewID() + `
`
	path := filepath.Join(t.TempDir(), "countersign.yaml")
	writeFile(t, path, config)
	slackEnv(t, fake, model.BaseURL(), "")
	replica := func() (stop func()) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- run(ctx, path, strings.NewReader(""), io.Discard, io.Discard) }()
		stopped := false
		stop = func() {
			if !stopped {
				stopped = true
				cancel()
				if err := <-done; err != nil {
					t.Errorf("run: %v", err)
				}
			}
		}
		t.Cleanup(stop)
		return stop
	}

	stopA := replica()
	fake.WaitOpen(t, 1)
	first := fake.Mention(alice, slackChannel, "", "how full is the disk?")
	threadHas(t, fake, first, "41% full")
	stopA()
	fake.Wait(t, "replica A's socket to close", func() bool { return len(fake.Open()) == 0 })

	replica()
	fake.WaitOpen(t, 1)
	second := fake.Mention(bob, slackChannel, "", "and the memory?")
	told := threadHas(t, fake, second, "llm.budget.per_channel_per_day")
	for _, want := range []string{"this channel has spent 1200 tokens today", "its limit is 1000 a day", "It resets at midnight UTC"} {
		if !strings.Contains(slacktest.View(told), want) {
			t.Errorf("the notice %q does not say %q", slacktest.View(told), want)
		}
	}
	if n := len(model.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1: a channel over its day's budget does not ask the model", n)
	}
	fake.Mention(bob, slackChannel, second, "!usage")
	threadHas(t, fake, second, "this channel today: 1200 of 1000 (llm.budget.per_channel_per_day)")
}
