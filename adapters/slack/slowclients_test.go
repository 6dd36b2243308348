package slack

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
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
// of a 900 KB body and then stalling, hold little of the heap: at most
// limits.MaxConns of them are read at once, each up to the body cap.
func TestSlowClientsHoldLittleMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 360 MB over loopback")
	}
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
	if limit := int64(limits.MaxConns) * 2 * limits.MaxBody; grew > limit {
		t.Errorf("the heap grew %d MiB with slow clients; want at most %d MiB (MaxConns bodies)", grew>>20, limit>>20)
	}
}
