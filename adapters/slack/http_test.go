package slack

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/slack/slacktest"
)

const secret = "8f742231b10e8888abcd99yyyzzz85a5"

// httpSetup runs the adapter in HTTP mode on a free port, against the fake
// Web API, and returns its base URL and events.
func httpSetup(t *testing.T) (*slacktest.Server, string, chan adapters.Event) {
	t.Helper()
	return httpSetupAck(t, ackWithin)
}

// httpSetupAck is httpSetup with the bound of an answer's wait for the
// bot's record.
func httpSetupAck(t *testing.T, within time.Duration) (*slacktest.Server, string, chan adapters.Event) {
	t.Helper()
	fake := slacktest.New(t)
	env := map[string]string{"SLACK_BOT_TOKEN": slacktest.BotToken, "SLACK_SIGNING_SECRET": secret, "SLACK_API_URL": fake.APIURL()}
	ad, err := New(Config{Mode: "http", Listen: "127.0.0.1:0"}, func(k string) string { return env[k] }, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ad.ackWithin = within
	ready := make(chan string, 1)
	ad.onHTTPReady = func(addr string) { ready <- addr }
	events := make(chan adapters.Event, 16)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- ad.Run(ctx, adapters.HandlerFunc(func(_ context.Context, e adapters.Event) { events <- e }))
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case addr := <-ready:
		return fake, "http://" + addr, events
	case err := <-done:
		t.Fatalf("Run: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("the HTTP mode listener did not start")
	}
	return nil, "", nil
}

func sign(body []byte, ts time.Time, key string) http.Header {
	stamp := strconv.FormatInt(ts.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte("v0:" + stamp + ":"))
	mac.Write(body)
	h := http.Header{}
	h.Set("X-Slack-Request-Timestamp", stamp)
	h.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	return h
}

func post(t *testing.T, url string, body []byte, h http.Header, contentType string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func nextEvent(t *testing.T, events chan adapters.Event) adapters.Event {
	t.Helper()
	select {
	case e := <-events:
		return e
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5s")
		return adapters.Event{}
	}
}

func TestHTTPMode(t *testing.T) {
	fake, base, events := httpSetup(t)
	alice := slacktest.User{ID: "U0ALICE", Name: "alice"}
	_, bodies := fake.Events(alice, "C0OPS", "", "how full is the disk?", true)
	mention := bodies[0]
	const js = "application/json"

	// A valid request: answered, and the event reaches the bot.
	h := sign(mention, time.Now(), secret)
	if code, _ := post(t, base+"/slack/events", mention, h, js); code != http.StatusOK {
		t.Fatalf("valid request: %d", code)
	}
	first := nextEvent(t, events)
	if first.Text != "how full is the disk?" || first.User.ID != alice.ID {
		t.Errorf("event = %+v", first)
	}

	// Forged (signed with another secret), and stale (signed correctly,
	// six minutes ago): 401, nothing starts.
	if code, _ := post(t, base+"/slack/events", bodies[1], sign(bodies[1], time.Now(), "not-the-secret"), js); code != http.StatusUnauthorized {
		t.Errorf("forged request: %d, want 401", code)
	}
	if code, _ := post(t, base+"/slack/events", bodies[1], sign(bodies[1], time.Now().Add(-6*time.Minute), secret), js); code != http.StatusUnauthorized {
		t.Errorf("stale request: %d, want 401", code)
	}
	if code, _ := post(t, base+"/slack/events", bodies[1], http.Header{}, js); code != http.StatusUnauthorized {
		t.Errorf("unsigned request: %d, want 401", code)
	}

	// A replay of the valid request inside the window: answered, and
	// nothing starts twice.
	if code, _ := post(t, base+"/slack/events", mention, h, js); code != http.StatusOK {
		t.Errorf("replayed request: %d, want 200 (and nothing done)", code)
	}

	// url_verification is answered with its challenge.
	challenge := []byte(`{"token":"x","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}`)
	if code, body := post(t, base+"/slack/events", challenge, sign(challenge, time.Now(), secret), js); code != http.StatusOK || body != "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" {
		t.Errorf("url_verification = %d %q", code, body)
	}

	// A body over the cap is refused before it is parsed.
	huge := bytes.Repeat([]byte("a"), int(limits.MaxBody)+10)
	if code, _ := post(t, base+"/slack/events", huge, sign(huge, time.Now(), secret), js); code != http.StatusRequestEntityTooLarge {
		t.Errorf("huge body: %d, want 413", code)
	}

	// A click through the interactivity endpoint, and a retry marked by
	// Slack's header.
	payload := fake.ClickPayload(alice, "C0OPS", "1.1", ActionApprove, "a1b2c3")
	form := []byte(url.Values{"payload": {string(payload)}}.Encode())
	if code, _ := post(t, base+"/slack/interactive", form, sign(form, time.Now(), secret), "application/x-www-form-urlencoded"); code != http.StatusOK {
		t.Fatalf("click: %d", code)
	}
	click := nextEvent(t, events)
	if click.Decision == nil || click.Decision.ApprovalID != "a1b2c3" || !click.Decision.Approve {
		t.Errorf("click = %+v", click)
	}
	retry := sign(bodies[1], time.Now(), secret)
	retry.Set("X-Slack-Retry-Num", "1")
	if code, _ := post(t, base+"/slack/events", bodies[1], retry, js); code != http.StatusOK {
		t.Errorf("retry: %d", code)
	}
	again := nextEvent(t, events)
	if again.ID != first.ID || !again.Redelivered {
		t.Errorf("the message event of a mention = %+v; want the mention's id %q, marked", again, first.ID)
	}
	select {
	case e := <-events:
		t.Errorf("an event too many: %+v (the replay, the forged or the stale request started something)", e)
	default:
	}
}

// A replay is the same signature whatever its spelling: upper-case hex
// carries the same bytes, and is refused as a replay.
func TestReplayKeyedOnSignatureBytes(t *testing.T) {
	fake, base, events := httpSetup(t)
	alice := slacktest.User{ID: "U0ALICE", Name: "alice"}
	_, bodies := fake.Events(alice, "C0OPS", "", "how full is the disk?", true)
	h := sign(bodies[0], time.Now(), secret)
	if code, _ := post(t, base+"/slack/events", bodies[0], h, "application/json"); code != http.StatusOK {
		t.Fatalf("valid request: %d", code)
	}
	nextEvent(t, events)
	upper := http.Header{}
	upper.Set("X-Slack-Request-Timestamp", h.Get("X-Slack-Request-Timestamp"))
	upper.Set("X-Slack-Signature", "v0="+strings.ToUpper(strings.TrimPrefix(h.Get("X-Slack-Signature"), "v0=")))
	if code, _ := post(t, base+"/slack/events", bodies[0], upper, "application/json"); code != http.StatusOK {
		t.Fatalf("the replay in upper case: %d, want 200 (and nothing done)", code)
	}
	// A later request shows the replay started nothing in between.
	if code, _ := post(t, base+"/slack/events", bodies[1], sign(bodies[1], time.Now(), secret), "application/json"); code != http.StatusOK {
		t.Fatal("the next request was refused")
	}
	if e := nextEvent(t, events); !e.Redelivered {
		t.Errorf("the replay in upper case reached the bot: %+v", e)
	}
}

// In HTTP mode the response to a request is its acknowledgement: it goes
// once the bot has recorded the event (Event.Recorded), never before.
func TestHTTPAnswersOnceRecorded(t *testing.T) {
	fake, base, events := httpSetupAck(t, time.Minute) // no fallback within the test
	alice := slacktest.User{ID: "U0ALICE", Name: "alice"}
	payload := fake.ClickPayload(alice, "C0OPS", "1.1", ActionApprove, "a1b2c3")
	form := []byte(url.Values{"payload": {string(payload)}}.Encode())
	answered := make(chan time.Time, 1)
	go func() {
		if code, _ := post(t, base+"/slack/interactive", form, sign(form, time.Now(), secret), "application/x-www-form-urlencoded"); code != http.StatusOK {
			t.Errorf("click: %d", code)
		}
		answered <- time.Now()
	}()
	e := nextEvent(t, events)
	// While the bot still writes the first record, a later click is
	// recorded at once and answered: the first, had it not waited for its
	// record, would have been answered before it.
	go func() {
		select {
		case e := <-events:
			e.Recorded()
		case <-time.After(5 * time.Second):
		}
	}()
	later := []byte(url.Values{"payload": {string(fake.ClickPayload(alice, "C0OPS", "1.2", ActionApprove, "d4e5f6"))}}.Encode())
	if code, _ := post(t, base+"/slack/interactive", later, sign(later, time.Now(), secret), "application/x-www-form-urlencoded"); code != http.StatusOK {
		t.Fatalf("later click: %d", code)
	}
	select {
	case <-answered:
		t.Fatal("the request was answered before the bot recorded its event")
	default:
	}
	recorded := time.Now()
	e.Recorded()
	if at := <-answered; at.Before(recorded) {
		t.Errorf("the request was answered %s before the bot recorded its event", recorded.Sub(at))
	}
}
