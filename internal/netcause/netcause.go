// Package netcause says in plain words why a connection to a backend failed,
// for the reachability probes that sit beside each backend (redisstore,
// sqltool, auditsink, llm): the same cause reads the same for every one.
package netcause

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"
)

// Timeout is how long a probe waits for a backend; the caller's context
// carries it, and the words for a timeout quote it.
const Timeout = 5 * time.Second

// Explain says why a connection to addr failed, for the common causes; addr
// may be empty when the caller does not know it. It never quotes more of
// the address than addr.
func Explain(err error, addr string) error {
	at := ""
	if addr != "" {
		at = " at " + addr
	}
	var dns *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("nothing listens%s (connection refused)", at)
	case errors.As(err, &dns):
		return fmt.Errorf("the host name %s does not resolve", dns.Name)
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return fmt.Errorf("no answer%s within %s", at, Timeout)
	}
	return fmt.Errorf("cannot connect%s: %w", at, err)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
