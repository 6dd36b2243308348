package httptool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/countersign/countersign/tools"
)

// previewTimeout bounds the name lookup of a preview.
const previewTimeout = 5 * time.Second

// Preview implements tools.Previewer: the addresses the URL's host resolves
// to now, and whether the guard would allow a connection to each. It looks
// the name up and connects to nothing. A redirect may still lead elsewhere;
// the guard checks every hop when the request runs.
func (t *Tool) Preview(ctx context.Context, raw json.RawMessage) tools.Preview {
	rq, bad := t.check(raw)
	if bad != nil {
		return tools.Preview{Err: bad.Error}
	}
	ctx, cancel := context.WithTimeout(ctx, previewTimeout)
	defer cancel()
	host := rq.url.Hostname()
	ips, err := resolve(ctx, host, t.dialer.lookup)
	if err != nil {
		return tools.Preview{Err: fmt.Sprintf("could not resolve %s: %v", host, err)}
	}
	p := tools.Preview{Total: len(ips)}
	allowed := 0
	for _, ip := range ips {
		if err := t.guard.check(host, ip); err != nil {
			var re *RefusedError
			why := err.Error()
			if errors.As(err, &re) {
				why = re.Why
			}
			p.Items = append(p.Items, fmt.Sprintf("%s: refused (%s)", ip, why))
			continue
		}
		allowed++
		p.Items = append(p.Items, fmt.Sprintf("%s: allowed", ip))
	}
	verdict := "all allowed"
	switch {
	case allowed == 0:
		verdict = "all refused: the request would not be sent"
	case allowed < len(ips):
		verdict = fmt.Sprintf("%d of %d allowed", allowed, len(ips))
	}
	p.Summary = fmt.Sprintf("%s %s: %s resolves to %d %s; %s", rq.method, shownURL(rq.url), host, len(ips), plural(len(ips), "address", "addresses"), verdict)
	return p
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
