package slack

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters/slack/slacktest"
	"github.com/countersign/countersign/adapters/webhook"
	"github.com/countersign/countersign/internal/testenv"
)

// heapInUse is the live heap, as a collection marks it: what the process
// holds, without the garbage its goroutines make meanwhile.
func heapInUse() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// A request without its signature headers, or with a stale timestamp, is
// refused before its body is read: the answer comes while the body has not
// even been sent.
func TestSignatureHeadersCheckedBeforeTheBody(t *testing.T) {
	_, base, _ := httpSetup(t)
	addr := strings.TrimPrefix(base, "http://")
	for name, headers := range map[string]string{
		"unsigned": "",
		"stale":    "X-Slack-Request-Timestamp: " + strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10) + "\r\nX-Slack-Signature: v0=" + strings.Repeat("ab", 32) + "\r\n",
		"garbled":  "X-Slack-Request-Timestamp: " + strconv.FormatInt(time.Now().Unix(), 10) + "\r\nX-Slack-Signature: v0=not-hex\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			fmt.Fprintf(c, "POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 900000\r\n%s\r\n{", headers)
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

// 400 slow clients with forged, well-formed signatures, each sending most
// of a 900 KB body and then stalling, hold little of the heap: the bodies
// not yet verified share limits.BodyBudget, the oldest cut first.
func TestSlowClientsHoldLittleMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 360 MB over loopback")
	}
	// A body deadline longer than the test: the reads held are measured
	// while none ends (cut reads and new ones churn the heap).
	defer func(l webhook.Limits) { limits = l }(limits)
	limits.BodyTimeout = time.Minute
	_, base, _ := httpSetup(t)
	addr := strings.TrimPrefix(base, "http://")
	before := heapInUse()
	const clients, sent = 400, 900 << 10
	chunk := strings.Repeat("a", 64<<10)
	var conns []net.Conn
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			_ = c.SetWriteDeadline(time.Now().Add(3 * time.Second))
			fmt.Fprintf(c, "POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\nX-Slack-Request-Timestamp: %d\r\nX-Slack-Signature: v0=%s\r\n\r\n",
				time.Now().Unix(), strings.Repeat("ab", 32))
			for n := 0; n < sent; n += len(chunk) {
				if _, err := c.Write([]byte(chunk)); err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	during := heapInUse()
	mu.Lock()
	for _, c := range conns {
		_ = c.Close()
	}
	mu.Unlock()
	grew := int64(during) - int64(before)
	t.Logf("heap in use: %d MiB before, %d MiB with %d slow clients (%d connected), +%d MiB",
		before>>20, during>>20, clients, len(conns), grew>>20)
	// Unbounded, the bodies would hold 360 MB. The budget holds 32 MiB of
	// them; reads cut for newer ones still hold theirs for a moment, and
	// the connections their buffers.
	if limit := 2 * limits.BodyBudget; grew > limit {
		t.Errorf("the heap grew %d MiB with slow clients; want at most %d MiB (twice the body budget)", grew>>20, limit>>20)
	}
}

// Genuine signed requests are answered within Slack's 3 seconds while 400
// slow clients hold connections (headers a byte at a time, forged
// signatures with a stalled body, or no body at all): slow clients are cut
// by the header and body deadlines and hold no slot a genuine request
// waits for.
func TestGenuineRequestsBesideSlowClients(t *testing.T) {
	if testing.Short() {
		t.Skip("holds 400 connections for several seconds")
	}
	fake, base, events := httpSetup(t)
	go func() {
		for e := range events {
			if e.Recorded != nil {
				e.Recorded()
			}
		}
	}()
	forged := func(path string, length int, body string) func() string {
		return func() string {
			return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\nX-Slack-Request-Timestamp: %d\r\nX-Slack-Signature: v0=%s\r\n\r\n%s",
				path, length, time.Now().Unix(), strings.Repeat("ab", 32), body)
		}
	}
	const slow = 400
	testenv.SlowClients(t, strings.TrimPrefix(base, "http://"), slow,
		func() string { return "POST /slack/events HTTP/1.1\r\nHost: x\r\n" }, // headers a byte at a time
		forged("/slack/events", 1000000, strings.Repeat("a", 64<<10)),         // a large body, stalled
		forged("/slack/interactive", 4000, ""),                                // no body at all
	)

	// Genuine requests, four at a time, across several of the slow
	// clients' deadlines.
	alice := slacktest.User{ID: "U0ALICE", Name: "alice"}
	const genuine, together = 60, 4
	took := make([]time.Duration, genuine)
	var wg sync.WaitGroup
	next := make(chan int)
	for range together {
		wg.Go(func() {
			for i := range next {
				_, bodies := fake.Events(alice, "C0OPS", "", fmt.Sprintf("question %d", i), true)
				start := time.Now()
				req, _ := http.NewRequest(http.MethodPost, base+"/slack/events", strings.NewReader(string(bodies[0])))
				req.Header = sign(bodies[0], start, secret)
				req.Header.Set("Content-Type", "application/json")
				resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
				took[i] = time.Since(start)
				if err != nil {
					t.Errorf("genuine request %d: %v", i, err)
					continue
				}
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Errorf("genuine request %d: status %d", i, resp.StatusCode)
				}
			}
		})
	}
	pace := time.NewTicker(100 * time.Millisecond) // ten a second, across the slow clients' deadlines
	defer pace.Stop()
	for i := range genuine {
		next <- i
		<-pace.C
	}
	close(next)
	wg.Wait()
	slices.Sort(took)
	p50, p99 := took[len(took)/2], took[len(took)*99/100]
	t.Logf("%d genuine requests beside %d slow clients: p50 %s, p99 %s, max %s", genuine, slow, p50, p99, took[len(took)-1])
	if took[len(took)-1] > 3*time.Second {
		t.Errorf("a genuine request took %s; Slack wants an answer within 3s", took[len(took)-1])
	}
}
