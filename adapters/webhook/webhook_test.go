package webhook

import (
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
