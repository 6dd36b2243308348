package llm

import (
	"context"
	"errors"
	"net"
	"net/url"

	"github.com/countersign/countersign/internal/netcause"
)

// Dial opens and closes a TCP connection to the model server's host: a
// check that costs no request (run's start uses it; a wrong key or model
// is said plainly at the first message anyway). Its error is a plain
// sentence.
func (c *Client) Dial(ctx context.Context) error {
	u, err := url.Parse(c.Server())
	if err != nil {
		return errors.New("the URL does not parse")
	}
	addr := u.Host
	if u.Port() == "" {
		port := "443"
		if u.Scheme == "http" {
			port = "80"
		}
		addr = net.JoinHostPort(u.Hostname(), port)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return netcause.Explain(err, addr)
	}
	return conn.Close()
}

// Probe asks the model server for its /models (Check) and says what is
// wrong as the fix to make (Fix) when it can: a refused key, a wrong URL,
// a model the server does not serve.
func (c *Client) Probe(ctx context.Context) error {
	if err := c.Check(ctx); err != nil {
		if fix := Fix(err); fix != "" {
			return errors.New(fix)
		}
		return err
	}
	return nil
}
