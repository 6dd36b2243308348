package discord

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters/discord/discordtest"
	"github.com/countersign/countersign/internal/testenv"
)

// listening waits until a's interactions endpoint listens.
func listening(t *testing.T, a *Adapter) string {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, func() bool { return a.Addr() != "" }, "the interactions endpoint to listen")
	return a.Addr()
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

// Genuine signed interactions are answered within Discord's 3 seconds while
// 300 slow clients hold connections (headers a byte at a time, forged
// signatures with a stalled body, or no body at all).
func TestGenuineInteractionsBesideSlowClients(t *testing.T) {
	if testing.Short() {
		t.Skip("holds 300 connections for several seconds")
	}
	fake := discordtest.New(t)
	a := newAdapter(t, fake, Config{Interactions: "http", Listen: "127.0.0.1:0"})
	run(t, a)
	addr := listening(t, a)
	forged := func(length int, body string) func() string {
		return func() string {
			return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\nX-Signature-Timestamp: %d\r\nX-Signature-Ed25519: %s\r\n\r\n%s",
				InteractionsPath, length, time.Now().Unix(), strings.Repeat("ab", 64), body)
		}
	}
	const slow = 300
	testenv.SlowClients(t, addr, slow,
		func() string { return "POST " + InteractionsPath + " HTTP/1.1\r\nHost: x\r\n" },
		forged(int(a.cfg.MaxBodyBytes)-1000, strings.Repeat("a", 32<<10)),
		forged(4000, ""),
	)
	const genuine = 40
	took := make([]time.Duration, 0, genuine)
	pace := time.NewTicker(100 * time.Millisecond) // ten a second, across the slow clients' deadlines
	defer pace.Stop()
	for i := range genuine {
		ping := []byte(fmt.Sprintf(`{"id":"%d","application_id":"%s","type":1,"token":"t","version":1}`, 1000+i, discordtest.AppID))
		start := time.Now()
		if code := postSigned(t, "http://"+addr+InteractionsPath, ping, fake.Sign(ping, start)); code != http.StatusOK {
			t.Errorf("genuine interaction %d: status %d", i, code)
		}
		took = append(took, time.Since(start))
		<-pace.C
	}
	slices.Sort(took)
	t.Logf("%d genuine interactions beside %d slow clients: p50 %s, p99 %s, max %s", genuine, slow, took[len(took)/2], took[len(took)*99/100], took[len(took)-1])
	if took[len(took)-1] > 3*time.Second {
		t.Errorf("a genuine interaction took %s; Discord wants an answer within 3s", took[len(took)-1])
	}
}
