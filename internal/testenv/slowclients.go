package testenv

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// SlowClients holds n connections to addr (a loopback listener) until the
// test ends: client i writes openings[i%len(openings)] (the start of a
// request) and then a byte every half second, and dials again whenever the
// server cuts it. It returns once every client has dialed once; the clients
// stop, and are waited for, when the test ends.
func SlowClients(tb testing.TB, addr string, n int, openings ...func() string) {
	tb.Helper()
	stop := make(chan struct{})
	var clients, dialed sync.WaitGroup
	dialed.Add(n)
	for i := range n {
		opening := openings[i%len(openings)]
		clients.Go(func() { slowClient(addr, opening, stop, dialed.Done) })
	}
	tb.Cleanup(func() {
		close(stop)
		clients.Wait()
	})
	dialed.Wait()
}

func slowClient(addr string, opening func() string, stop <-chan struct{}, dialed func()) {
	first := true
	for {
		select {
		case <-stop:
			return
		default:
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if first {
			first = false
			dialed()
		}
		if err != nil {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		closed := make(chan struct{})
		go func() {
			select {
			case <-stop:
			case <-closed:
			}
			_ = c.Close()
		}()
		_ = c.SetDeadline(time.Now().Add(time.Minute))
		_, err = io.WriteString(c, opening())
		for err == nil {
			select {
			case <-stop:
				err = net.ErrClosed
			case <-time.After(500 * time.Millisecond):
				_, err = c.Write([]byte("a"))
			}
		}
		close(closed)
	}
}
