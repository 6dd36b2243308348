package slack_test

import (
	"context"
	"strings"
	"testing"

	"github.com/countersign/countersign/adapters"
)

// The long output of an auto-run or a direct !run reaches Slack whole, as
// a file in the thread that the message names; a message longer than Slack
// takes is attached whole too, never cut silently.
func TestFullOutputIsAttached(t *testing.T) {
	fake, ad, _ := setup(t)
	p := adapters.Place{Channel: channel, Thread: fake.Store(alice, channel, "", "start")}
	full := strings.Repeat("line of output\n", 5000)
	if _, err := ad.Post(context.Background(), p, adapters.Content{Text: "exit 0 · 12 ms\n```\n…the last lines\n```", Full: full}); err != nil {
		t.Fatal(err)
	}
	files := fake.Files()
	if len(files) != 1 || files[0].Content != full || files[0].Thread != p.Thread {
		t.Fatalf("files = %d; want the whole output attached in the thread once", len(files))
	}
	msgs := fake.BotMessages(channel)
	if last := msgs[len(msgs)-1]; !strings.Contains(last.Text, files[0].Name) {
		t.Errorf("the message does not name the file %s: %q", files[0].Name, last.Text)
	}

	long := strings.Repeat("x", 45000)
	if _, err := ad.Post(context.Background(), p, adapters.Content{Text: long}); err != nil {
		t.Fatal(err)
	}
	files = fake.Files()
	if len(files) != 2 || files[1].Content != long {
		t.Fatalf("a 45,000-character message: %d files; want it attached whole", len(files))
	}
	msgs = fake.BotMessages(channel)
	if last := msgs[len(msgs)-1]; !strings.Contains(last.Text, files[1].Name) {
		t.Errorf("the cut message does not name the file %s", files[1].Name)
	}
}
