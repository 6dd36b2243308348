package discord

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/countersign/countersign/adapters"
)

// This file gives the names of the roles and people the bot's words name
// by id ("Needs an approval from @777." for approvers: ["role:777"]): a
// role by its name in the guild ("@dba"), from GET /guilds/{id}/roles, a
// person by theirs ("bob"), from GET /users/{id}. An id whose name cannot
// be learnt stays as it was, and is logged once while it is remembered.

// Bounds of the names remembered: roles are read again after roleMemory
// (a renamed role reads anew), people after peopleMemory.
const (
	maxNames     = 10000
	roleMemory   = 10 * time.Minute
	peopleMemory = time.Hour
)

// names remembers guilds' roles and people's names.
type names struct {
	once   sync.Once
	roles  *expirable.LRU[string, map[string]string] // guild id → role id → name; nil when unreadable
	people *expirable.LRU[string, string]            // user id → name; "" when unknown
}

func (n *names) init() {
	n.once.Do(func() {
		n.roles = expirable.NewLRU[string, map[string]string](maxNames, nil, roleMemory)
		n.people = expirable.NewLRU[string, string](maxNames, nil, peopleMemory)
	})
}

// idTokenRE finds a role or a person written by id in the bot's words
// ("@777", "@123456789012345678"); not the <@id> or <@&id> of a ping.
var idTokenRE = regexp.MustCompile(`(?:^|[^<&\w])(@([0-9]+))\b`)

// userIDLen is how long a user id is at least (a snowflake from 2015 on).
const userIDLen = 17

// named is c with every role and person its words name by id written by
// name. Only the bot's own words change (a card's title, state line and
// reasons; a message's text); the pings are Content.Mentions, apart.
func (a *Adapter) named(ctx context.Context, to adapters.Place, c adapters.Content) adapters.Content {
	var (
		guild  string
		looked bool
		cancel context.CancelFunc = func() {}
	)
	defer func() { cancel() }()
	return adapters.IDNames(c, idTokenRE, func(id string) string {
		if !looked { // the first id: what every later one shares
			a.names.init()
			ctx, cancel = context.WithTimeout(ctx, 5*time.Second)
			guild, looked = a.guildOf(ctx, to), true
		}
		return a.nameOf(ctx, guild, id)
	})
}

// guildOf is the guild of the place's channel; with none (a direct
// message), the one guild configured, if there is one.
func (a *Adapter) guildOf(ctx context.Context, to adapters.Place) string {
	if ch := to.Channel; ch != "" {
		if g := a.channel(ctx, ch).guild; g != "" {
			return g
		}
	}
	if len(a.cfg.Guilds) == 1 {
		return a.cfg.Guilds[0]
	}
	return ""
}

// nameOf is "@name" for a role of guild, else a person's name for a user
// id, else "".
func (a *Adapter) nameOf(ctx context.Context, guild, id string) string {
	if guild != "" {
		if n := a.roleNames(ctx, guild)[id]; n != "" {
			return "@" + strings.TrimPrefix(n, "@")
		}
	}
	if len(id) < userIDLen {
		return ""
	}
	if n, ok := a.names.people.Get(id); ok {
		return n
	}
	var u struct {
		Username   string `json:"username"`
		GlobalName string `json:"global_name"`
	}
	var n string
	if err := a.api.do(ctx, http.MethodGet, "/users/"+id, nil, nil, &u); err != nil {
		a.log.Warn("could not learn a person's name (GET /users); the bot's words show their id", "user", id, "err", err)
	} else if n = u.GlobalName; n == "" {
		n = u.Username
	}
	a.names.people.Add(id, n)
	return n
}

// roleNames are the roles of guild by id (nil when they cannot be read).
func (a *Adapter) roleNames(ctx context.Context, guild string) map[string]string {
	if m, ok := a.names.roles.Get(guild); ok {
		return m
	}
	var list []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	var m map[string]string
	if err := a.api.do(ctx, http.MethodGet, "/guilds/"+guild+"/roles", nil, nil, &list); err != nil {
		a.log.Warn("could not read the guild's roles (GET /guilds/{id}/roles); the bot's words show role ids", "guild", guild, "err", err)
	} else {
		m = make(map[string]string, len(list))
		for _, r := range list {
			m[r.ID] = r.Name
		}
	}
	a.names.roles.Add(guild, m)
	return m
}

// Permalink is the address of a posted message: Discord's own form,
// /channels/<guild>/<channel or thread>/<message> (adapters.Permalinker).
func (a *Adapter) Permalink(ctx context.Context, to adapters.Place, ref string) (string, error) {
	a.names.init()
	guild := a.guildOf(ctx, to)
	if guild == "" {
		return "", fmt.Errorf("discord: no guild known for channel %s", to.Channel)
	}
	return "https://discord.com/channels/" + guild + "/" + where(to) + "/" + ref, nil
}
