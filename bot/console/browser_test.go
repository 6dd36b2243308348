package console_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/countersign/countersign/bot"
)

// chromium is the headless Chromium that `make test` installs
// (.ci/browser); a plain go test skips, and make test fails without it.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("COUNTERSIGN_TEST_CHROMIUM"); p != "" {
		return p
	}
	if os.Getenv("COUNTERSIGN_TEST_SERVICES") != "" {
		t.Fatal("COUNTERSIGN_TEST_CHROMIUM is not set although make test should have installed Chromium (.ci/browser)")
	}
	t.Skip("skipping: needs headless Chromium; run `make test`, or set COUNTERSIGN_TEST_CHROMIUM to its path")
	return ""
}

// newChrome starts one browser of its own (a fresh profile: its own
// cookies) and returns its tab's context; what it says over the DevTools
// protocol goes to tr as who's.
func newChrome(t *testing.T, exec string, tr *trail, who string) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exec),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true), // screenshots as a phone shows the page
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1100, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithDebugf(func(format string, args ...any) { tr.add(who, format, args...) }))
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil { // starts the browser, with no timeout (it would end the browser)
		t.Fatalf("start Chromium (%s): %v", exec, err)
	}
	return ctx
}

// shots is where the screenshots go: COUNTERSIGN_CONSOLE_SHOTS (the docs
// take them from docs/console), else a folder the test removes.
func shots(t *testing.T) string {
	if d := os.Getenv("COUNTERSIGN_CONSOLE_SHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// run does the actions in the tab within waitLimit.
func run(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, waitLimit)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// get runs one action that returns a value, within waitLimit.
func get[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, waitLimit)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// shot saves what the tab shows as name.png.
func shot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png := get(t, ctx, "screenshot "+name, chromedp.FullScreenshot(100)) // 100: PNG
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestInChromium is the done-when in a real headless Chromium:
// !login in the terminal, the link opened, the card for rm -rf ./tmp_*
// with its matches seen, approved, and the run shown in the terminal; a
// second browser as the requester sees the card, but its Approve is
// refused; a card asked later appears by itself (server-sent events); the
// history shows the whole story. Each page is photographed.
func TestInChromium(t *testing.T) {
	exec := chromium(t)
	dir := shots(t)
	w := newWorld(t, bot.Config{}, "tmp_a", "tmp_b", "keep.txt")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the last requests the console served and words the browsers said, oldest first:\n%s", w.trail)
		}
	})
	w.say(t, "!run rm -rf ./tmp_*")
	id := w.screen.waitFor(t, `(?s)rm -rf \./tmp_\*.*`+cardRE)[1]
	card := "#card-" + id

	// Bob, an approver.
	w.say(t, "/as bob", "!login")
	link := w.screen.waitFor(t, linkRE)[1]
	bob := newChrome(t, exec, w.trail, "bob")
	run(t, bob, "open bob's link", chromedp.Navigate(link), chromedp.WaitVisible("form[action='/login'] button"))
	shot(t, bob, dir, "signin")
	run(t, bob, "sign bob in", chromedp.Click("form[action='/login'] button"), chromedp.WaitVisible(card))
	text := get(t, bob, "bob's card", chromedp.Text(card))
	for _, want := range []string{"rm -rf ./tmp_*", "./tmp_a", "./tmp_b", "alice in terminal"} {
		if !strings.Contains(strings.ToLower(text), strings.ToLower(want)) {
			t.Errorf("bob's card lacks %q:\n%s", want, text)
		}
	}
	shot(t, bob, dir, "pending")

	// Alice, who asked: she sees the card, but her Approve is refused.
	w.say(t, "/as alice", "!login")
	aliceLink := w.screen.waitFor(t, linkRE)[1]
	alice := newChrome(t, exec, w.trail, "alice")
	run(t, alice, "sign alice in", chromedp.Navigate(aliceLink), chromedp.WaitVisible("form[action='/login'] button"),
		chromedp.Click("form[action='/login'] button"), chromedp.WaitVisible(card))
	run(t, alice, "alice approves", chromedp.Click(card+" button[value=approve]"), chromedp.WaitVisible("p.notice"))
	text = get(t, alice, "the answer to alice", chromedp.Text("main"))
	if !strings.Contains(text, "You cannot approve "+id) {
		t.Errorf("the requester's Approve in the browser: want the bot's refusal, the page says:\n%s", text)
	}
	shot(t, alice, dir, "refused")
	if !w.exists("tmp_a") {
		t.Fatal("the requester's own approval ran the command")
	}

	// Bob approves: the terminal shows the run.
	run(t, bob, "bob approves", chromedp.Click(card+" button[value=approve]"), chromedp.WaitVisible("p.notice"))
	w.screen.waitFor(t, `approved by bob at .* · done: exit code 0`)
	if w.exists("tmp_a") || w.exists("tmp_b") || !w.exists("keep.txt") {
		t.Errorf("after bob's approval: tmp_a %v, tmp_b %v, keep.txt %v; want only keep.txt", w.exists("tmp_a"), w.exists("tmp_b"), w.exists("keep.txt"))
	}
	shot(t, bob, dir, "answer")

	// Live: bob waits on the pending page; a card asked in the terminal
	// appears without a reload.
	run(t, bob, "bob's pending page", chromedp.Navigate(w.srv.URL+"/"), chromedp.WaitVisible("p.empty"))
	w.say(t, "!run rm -rf ./keep.txt")
	next := w.screen.waitFor(t, cardRE)[1]
	run(t, bob, "the new card, live", chromedp.WaitVisible("#card-"+next))

	// The phone: the same page, narrow.
	run(t, bob, "a phone's width", chromedp.EmulateViewport(390, 844))
	shot(t, bob, dir, "pending-phone")
	run(t, bob, "back to a desktop's width", chromedp.EmulateViewport(1100, 900))

	run(t, bob, "the story", chromedp.Navigate(w.srv.URL+"/approval/"+id), chromedp.WaitVisible("table.events"))
	text = get(t, bob, "the story's events", chromedp.Text("table.events"))
	for _, want := range []string{"assessment", "card", "refused_click", "click", "execution"} {
		if !strings.Contains(text, want) {
			t.Errorf("the story lacks %q:\n%s", want, text)
		}
	}
	shot(t, bob, dir, "story")
	run(t, bob, "the history", chromedp.Navigate(w.srv.URL+"/history"), chromedp.WaitVisible("table.events"))
	shot(t, bob, dir, "history")
	run(t, bob, "the insights", chromedp.Navigate(w.srv.URL+"/insights"), chromedp.WaitVisible("h1"))
	shot(t, bob, dir, "insights")
}
