package slack

import (
	"context"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	slackapi "github.com/slack-go/slack"
)

// people answers "what is this person called?" for a user id the bot's
// words carry ("Needs an approval from @U0BOB."), from users.info, cached
// (least recently used first, each for peopleMemory). A person who cannot
// be looked up (no users:read scope, an unknown id) is remembered as
// unnamed for as long, and logged once in that time: the id stays.
type people struct {
	api   *slackapi.Client
	names *expirable.LRU[string, string] // user id → name, "" for none
	log   func(id string, err error)
}

// Bounds of the people remembered.
const (
	maxPeople    = 10000
	peopleMemory = time.Hour
)

func newPeople(api *slackapi.Client, log func(id string, err error)) *people {
	return &people{api: api, names: expirable.NewLRU[string, string](maxPeople, nil, peopleMemory), log: log}
}

// name is the name user id goes by (display name, else real name, else
// user name); "" when it cannot be learnt.
func (p *people) name(ctx context.Context, id string) string {
	if n, ok := p.names.Get(id); ok {
		return n
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	u, err := p.api.GetUserInfoContext(ctx, id)
	var n string
	switch {
	case err != nil:
		p.log(id, err)
	case u.Profile.DisplayName != "":
		n = u.Profile.DisplayName
	case u.RealName != "":
		n = u.RealName
	default:
		n = u.Name
	}
	p.names.Add(id, n)
	return n
}
