package discord

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters/discord/discordtest"
)

// listening waits until a's interactions endpoint listens.
func listening(t *testing.T, a *Adapter) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if addr := a.Addr(); addr != "" {
			return addr
		}
	}
	t.Fatal("the interactions endpoint did not start")
	return ""
}

func postSigned(t *testing.T, url string, body []byte, h http.Header) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header = h
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A signed request seen before is refused, however its signature is
// spelt (upper-case hex carries the same bytes).
func TestInteractionReplayRefused(t *testing.T) {
	fake := discordtest.New(t)
	a := newAdapter(t, fake, Config{Interactions: "http", Listen: "127.0.0.1:0"})
	run(t, a)
	url := "http://" + listening(t, a) + InteractionsPath
	ping := []byte(`{"id":"1","application_id":"` + discordtest.AppID + `","type":1,"token":"t","version":1}`)
	h := fake.Sign(ping, time.Now())
	if code := postSigned(t, url, ping, h.Clone()); code != http.StatusOK {
		t.Fatalf("the first delivery: %d", code)
	}
	for name, sig := range map[string]string{"same": h.Get("X-Signature-Ed25519"), "upper case": strings.ToUpper(h.Get("X-Signature-Ed25519"))} {
		again := h.Clone()
		again.Set("X-Signature-Ed25519", sig)
		if code := postSigned(t, url, ping, again); code != http.StatusUnauthorized {
			t.Errorf("a replay (%s): %d, want 401", name, code)
		}
	}
}

// A request without well-formed, fresh signature headers is refused before
// its body is read.
func TestInteractionHeadersCheckedBeforeTheBody(t *testing.T) {
	fake := discordtest.New(t)
	a := newAdapter(t, fake, Config{Interactions: "http", Listen: "127.0.0.1:0"})
	run(t, a)
	addr := listening(t, a)
	for name, headers := range map[string]string{
		"unsigned": "",
		"stale":    "X-Signature-Timestamp: " + strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10) + "\r\nX-Signature-Ed25519: " + strings.Repeat("ab", 64) + "\r\n",
		"garbled":  "X-Signature-Timestamp: " + strconv.FormatInt(time.Now().Unix(), 10) + "\r\nX-Signature-Ed25519: zz\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 900000\r\n%s\r\n{", InteractionsPath, headers)
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("no answer while the body is unsent: %v", err)
			}
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("status %d; want 401", resp.StatusCode)
			}
		})
	}
}
