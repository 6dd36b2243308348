package bot

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/countersign/countersign/approval/oncall"
)

// This file is what an on-call approver entry ("oncall:pagerduty:P123")
// stands for now (issue 28): the people approval/oncall says are on call,
// by e-mail, each found on the card's platform by its adapter
// (Extras.ByEmail). Who may decide is checked against it at the moment of
// the click (decision.go: refusal), so a person who went off call cannot
// approve and one newly on call can; the card says when a service could
// not say, and the other approvers decide (card.go).

// onCalls holds the on-call resolver and what the platforms said of each
// address.
type onCalls struct {
	resolver *oncall.Resolver
	ids      *expirable.LRU[string, string] // platform + "\x00" + e-mail → user id, "" for nobody

	mu     sync.Mutex
	logged map[oncall.Entry]time.Time // the failed answer last logged, by when it was read
}

// Bounds of what is remembered of addresses: a person's address changes
// rarely, and a lookup that failed is not remembered.
const (
	maxAddresses  = 2000
	addressMemory = 10 * time.Minute
	// onCallWait bounds the look-ups of one check, beside each service's
	// own timeout (at most its cache's age).
	onCallWait = 5 * time.Second
)

func newOnCalls(r *oncall.Resolver) *onCalls {
	return &onCalls{
		resolver: r,
		ids:      expirable.NewLRU[string, string](maxAddresses, nil, addressMemory),
		logged:   map[oncall.Entry]time.Time{},
	}
}

// withOnCall returns approvers with the people on call now added after
// each on-call entry, as "user:<id>" on platform, and the entries whose
// service could not say who is (they stand for nobody: the other
// approvers decide). A list without on-call entries is returned as it is.
func (b *Bot) withOnCall(platform string, approvers []string) (out []string, down []oncall.Entry) {
	if !slices.ContainsFunc(approvers, oncall.Is) {
		return approvers, nil
	}
	ctx, cancel := context.WithTimeout(b.work, onCallWait)
	defer cancel()
	for _, a := range approvers {
		out = append(out, a)
		e, ok, err := oncall.Parse(a)
		if !ok || err != nil {
			continue // validated at start; a bad entry stands for nobody
		}
		ans := b.onCall.resolver.OnCall(ctx, e)
		if ans.Err != nil {
			b.onCall.warn(b, e, ans)
			down = append(down, e)
			continue
		}
		for _, email := range ans.Emails {
			if id := b.userByEmail(ctx, platform, email); id != "" {
				out = append(out, "user:"+id)
			}
		}
	}
	return out, down
}

// userByEmail is the id of the person with address email on platform,
// "" when the platform knows nobody by it, cannot find people by e-mail,
// or could not answer (logged).
func (b *Bot) userByEmail(ctx context.Context, platform, email string) string {
	key := platform + "\x00" + email
	if id, ok := b.onCall.ids.Get(key); ok {
		return id
	}
	finder := b.extras[platform].ByEmail
	if finder == nil {
		return "" // said once at start: the adapter lacks by-email
	}
	id, err := finder.UserByEmail(ctx, email)
	if err != nil {
		b.log.Warn("find an on-call person on the platform by e-mail", "platform", platform, "email", email, "err", err)
		return ""
	}
	if id == "" {
		b.log.Warn("a person on call has no account on the platform with that e-mail; they cannot approve there", "platform", platform, "email", email)
	}
	b.onCall.ids.Add(key, id)
	return id
}

// warn logs a service's failed answer once (it is kept for the cache's
// age, and asked of by every card and click meanwhile).
func (o *onCalls) warn(b *Bot, e oncall.Entry, ans oncall.Answer) {
	o.mu.Lock()
	seen := o.logged[e].Equal(ans.At)
	o.logged[e] = ans.At
	o.mu.Unlock()
	if !seen {
		b.log.Warn("the on-call service could not say who is on call; the other approvers decide", "entry", e.String(), "err", ans.Err)
	}
}
