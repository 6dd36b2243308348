package console_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/countersign/countersign/bot"
)

// BenchmarkPendingPage renders the pending page of a person who may decide
// 100 waiting cards (the in-memory store): what one page load, and each
// poll of a live page, costs.
func BenchmarkPendingPage(b *testing.B) {
	w := newWorld(b, bot.Config{})
	for i := range 100 { // one at a time: a conversation queues a few messages only
		w.say(b, "!run rm -rf ./tmp_"+strconv.Itoa(i))
		w.screen.waitFor(b, cardRE)
	}
	bob := newBrowser(b)
	page := w.signIn(b, bob, "bob")
	if n := strings.Count(page, "<article"); n != 100 {
		b.Fatalf("%d cards on the page, want 100", n)
	}
	b.ResetTimer()
	for b.Loop() {
		status, _ := bob.get(b, w.srv.URL+"/")
		if status != http.StatusOK {
			b.Fatal(status)
		}
	}
}
