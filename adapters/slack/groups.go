package slack

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	slackapi "github.com/slack-go/slack"
)

// groups answers "which watched user groups is this person in?", from
// usergroups.list (handles to ids) and usergroups.users.list (members),
// each cached for ttl. A lookup that fails is reported, never guessed.
type groups struct {
	api *slackapi.Client
	ttl time.Duration
	now func() time.Time

	mu       sync.Mutex
	entries  []string // as configured: "S0123ABCD" or "@handle"
	handles  map[string]string
	handleAt time.Time
	members  map[string]memberSet
}

type memberSet struct {
	users map[string]bool
	at    time.Time
}

// unchecked is a watched group whose membership could not be checked.
type unchecked struct {
	entry string
	err   error
}

func newGroups(api *slackapi.Client, ttl time.Duration, now func() time.Time) *groups {
	return &groups{api: api, ttl: ttl, now: now, members: map[string]memberSet{}}
}

func (g *groups) watch(entries ...string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, e := range entries {
		e = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(e), "group:"))
		if e != "" && !slices.Contains(g.entries, e) {
			g.entries = append(g.entries, e)
		}
	}
}

// of returns the watched groups user is in (each as configured, and by its
// id), and those that could not be checked.
func (g *groups) of(ctx context.Context, user string) (in []string, bad []unchecked) {
	g.mu.Lock()
	entries := slices.Clone(g.entries)
	g.mu.Unlock()
	if len(entries) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for _, e := range entries {
		id, err := g.id(ctx, e)
		if err == nil {
			var ok bool
			ok, err = g.member(ctx, id, user)
			if err == nil && ok {
				in = append(in, e)
				if id != e {
					in = append(in, id)
				}
			}
		}
		if err != nil {
			bad = append(bad, unchecked{entry: e, err: err})
		}
	}
	return in, bad
}

var groupIDRE = regexp.MustCompile(`^S[A-Z0-9]{2,}$`)

// id resolves a handle ("@oncall", or "oncall") to the group's S… id
// (usergroups.list); an S… id is itself.
func (g *groups) id(ctx context.Context, entry string) (string, error) {
	if groupIDRE.MatchString(entry) {
		return entry, nil
	}
	if !strings.HasPrefix(entry, "@") {
		entry = "@" + entry
	}
	g.mu.Lock()
	fresh := g.handles != nil && g.now().Sub(g.handleAt) < g.ttl
	id, ok := g.handles[entry]
	g.mu.Unlock()
	if fresh {
		if !ok {
			return "", fmt.Errorf("no user group has the handle %s", entry)
		}
		return id, nil
	}
	list, err := g.api.GetUserGroupsContext(ctx)
	if err != nil {
		return "", fmt.Errorf("usergroups.list: %w", err)
	}
	handles := map[string]string{}
	for _, ug := range list {
		handles["@"+ug.Handle] = ug.ID
	}
	g.mu.Lock()
	g.handles, g.handleAt = handles, g.now()
	g.mu.Unlock()
	id, ok = handles[entry]
	if !ok {
		return "", fmt.Errorf("no user group has the handle %s", entry)
	}
	return id, nil
}

// member reports whether user is in the group id (usergroups.users.list).
func (g *groups) member(ctx context.Context, id, user string) (bool, error) {
	g.mu.Lock()
	m, ok := g.members[id]
	g.mu.Unlock()
	if ok && g.now().Sub(m.at) < g.ttl {
		return m.users[user], nil
	}
	users, err := g.api.GetUserGroupMembersContext(ctx, id)
	if err != nil {
		return false, fmt.Errorf("usergroups.users.list %s: %w", id, err)
	}
	m = memberSet{users: map[string]bool{}, at: g.now()}
	for _, u := range users {
		m.users[u] = true
	}
	g.mu.Lock()
	g.members[id] = m
	g.mu.Unlock()
	return m.users[user], nil
}

// handle is the handle of user group id ("@oncall"), from usergroups.list
// (cached for ttl, as for membership); "" when the list cannot be read or
// has no such group.
func (g *groups) handle(ctx context.Context, id string) string {
	g.mu.Lock()
	fresh := g.handles != nil && g.now().Sub(g.handleAt) < g.ttl
	handles := g.handles
	g.mu.Unlock()
	if !fresh {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		list, err := g.api.GetUserGroupsContext(ctx)
		if err != nil {
			return ""
		}
		handles = map[string]string{}
		for _, ug := range list {
			handles["@"+ug.Handle] = ug.ID
		}
		g.mu.Lock()
		g.handles, g.handleAt = handles, g.now()
		g.mu.Unlock()
	}
	for h, gid := range handles {
		if gid == id {
			return h
		}
	}
	return ""
}
