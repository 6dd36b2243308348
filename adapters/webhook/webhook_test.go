package webhook

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The listener serves at most n connections at once; the next is accepted
// once one closes.
func TestLimitListener(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := LimitListener(inner, 2)
	defer ln.Close()
	accepted := make(chan net.Conn, 3)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	for range 3 {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	first, second := <-accepted, <-accepted
	select {
	case <-accepted:
		t.Fatal("a third connection was served beside two open ones")
	case <-time.After(50 * time.Millisecond):
	}
	first.Close()
	select {
	case c := <-accepted:
		c.Close()
	case <-time.After(10 * time.Second):
		t.Fatal("the third connection was not served after one closed")
	}
	second.Close()
}

// A declared length over the cap is refused before the body is read.
func TestReadBodyRefusesByContentLength(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("x"))
	r.ContentLength = 2 << 20
	if _, err := ReadBody(httptest.NewRecorder(), r, 1<<20); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadBody = %v; want ErrTooLarge", err)
	}
	r = httptest.NewRequest(http.MethodPost, "/", strings.NewReader(strings.Repeat("x", 100)))
	r.ContentLength = -1
	if _, err := ReadBody(httptest.NewRecorder(), r, 10); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadBody of an undeclared long body = %v; want ErrTooLarge", err)
	}
}

// A signature spelt two ways is one signature.
func TestReplaysKeyedOnBytes(t *testing.T) {
	r := NewReplays(10, time.Minute)
	if r.Seen([]byte{0xab, 0xcd}) || !r.Seen([]byte{0xab, 0xcd}) {
		t.Error("a signature was not remembered")
	}
}

// Bodies not yet verified share a budget: a newer request that needs room
// cuts the read that began first (ErrSlow), and a body not in within its
// deadline is cut too; a prompt body is read whole.
func TestBodiesCutTheOldestAndTheSlow(t *testing.T) {
	l := Defaults
	l.BodyBudget, l.BodyTimeout = 100, 300*time.Millisecond
	b := NewBodies(l)
	started := make(chan struct{}, 2)
	read := func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		if _, err := b.Read(w, r); err != nil {
			http.Error(w, err.Error(), http.StatusRequestTimeout)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}
	srv := httptest.NewServer(http.HandlerFunc(read))
	defer srv.Close()
	stalled := func() <-chan string {
		c, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		_, _ = c.Write([]byte("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 80\r\n\r\nabc"))
		got := make(chan string, 1)
		go func() {
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				got <- err.Error()
				return
			}
			got <- resp.Status
		}()
		return got
	}
	first := stalled()
	<-started
	// A prompt body of 50 bytes does not fit beside the first's 80: the
	// first is cut, the prompt one read.
	resp, err := http.Post(srv.URL, "text/plain", strings.NewReader(strings.Repeat("x", 50)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the prompt body: %s", resp.Status)
	}
	if got := <-first; !strings.Contains(got, "408") {
		t.Errorf("the oldest stalled read: %s; want 408, cut for the newer request", got)
	}
	<-started
	// Alone in the budget, a stalled body is cut at its deadline.
	start := time.Now()
	if got := <-stalled(); !strings.Contains(got, "408") {
		t.Errorf("a stalled read alone: %s; want 408 at its deadline", got)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("a stalled read was cut after %s; its deadline is %s", took, l.BodyTimeout)
	}
	if b.Held() != 0 {
		t.Errorf("%d bytes still held after every read ended", b.Held())
	}
}
