package slack

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/countersign/countersign/adapters"
)

// The App Home (issue 19): opening the app's Home tab is an event with
// Home set; the bot publishes (views.publish) the cards the person may
// decide, with the operation, channel, age and a link to the card.

var _ adapters.Home = (*Adapter)(nil)

// maxHomeItems bounds the cards listed (a Home view holds 100 blocks).
const maxHomeItems = 40

// fromHome turns the Home tab being opened into an event.
func (a *Adapter) fromHome(ctx context.Context, team string, e slackevents.AppHomeOpenedEvent, retried bool) []adapters.Event {
	if e.Tab != "" && e.Tab != "home" {
		return nil // the Messages tab
	}
	if team != "" && team != a.identity().TeamID {
		return nil
	}
	// The person's user groups, as for a decision: the inbox lists what
	// they may approve.
	user := adapters.User{ID: e.User, Team: a.identity().TeamID}
	in, _ := a.groups.of(ctx, e.User)
	user.Groups = in
	return []adapters.Event{{
		ID:          "home:" + team + ":" + e.User + ":" + e.EventTimeStamp,
		Redelivered: retried,
		User:        user,
		Place:       adapters.Place{Channel: e.Channel},
		Home:        true,
		Private:     true,
	}}
}

// PublishHome shows user's inbox: the cards they may decide.
func (a *Adapter) PublishHome(ctx context.Context, user adapters.User, items []adapters.HomeItem) error {
	bs := []slackapi.Block{slackapi.NewHeaderBlock(plain("Waiting for your decision"))}
	if len(items) == 0 {
		bs = append(bs, mrkdwnSection("No card waits for your decision."))
	}
	now := a.now()
	for i, it := range items {
		if i == maxHomeItems {
			bs = append(bs, contextBlock(fmt.Sprintf("…and %d more; `!pending` in a channel lists its own.", len(items)-maxHomeItems)))
			break
		}
		op, _ := adapters.Visible(it.Operation)
		op, _, _ = strings.Cut(op, "\n")
		text := "`" + cutText(strings.ReplaceAll(escape(op), "`", "'"), 200) + "`\n" +
			"in <#" + it.Channel + "> · asked by " + escape(it.Requester) + " · " + age(now.Sub(it.Asked)) + " ago · approval `" + it.ApprovalID + "`"
		if it.Needs != "" {
			text += "\n" + escape(a.named(ctx, adapters.Content{Text: it.Needs}).Text) // blocks.go: by name
		}
		if link := a.link(it); link != "" {
			text += "\n<" + link + "|Open the card>"
		}
		bs = append(bs, mrkdwnSection(cutText(text, maxSection)))
	}
	req := slackapi.PublishViewContextRequest{UserID: user.ID, View: slackapi.HomeTabViewRequest{
		Type: slackapi.VTHomeTab, Blocks: slackapi.Blocks{BlockSet: bs}, CallbackID: "countersign_home",
	}}
	if _, err := a.api.PublishViewContext(ctx, req); err != nil {
		return fmt.Errorf("slack: publish the home of %s: %w", user.ID, err)
	}
	return nil
}

// link is the card's address in the workspace, or "" when unknown.
func (a *Adapter) link(it adapters.HomeItem) string {
	id := a.identity()
	if it.Ref == "" || id.URL == "" {
		return ""
	}
	ts := strings.ReplaceAll(it.Ref, ".", "")
	u := strings.TrimSuffix(id.URL, "/") + "/archives/" + it.Channel + "/p" + ts
	if it.Thread != "" && it.Thread != it.Ref {
		u += "?thread_ts=" + it.Thread + "&cid=" + it.Channel
	}
	return u
}

// age writes a waiting time in whole minutes or seconds.
func age(d time.Duration) string {
	if d < time.Minute {
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}

// Bounds of the channel members the adapter remembers: a channel's
// members are asked again after membersTTL, and at most membersMax
// channels are kept (the least recently used go first).
const (
	membersTTL = time.Minute
	membersMax = 1000
	// membersPages bounds the pages of one conversations.members walk (of
	// 1,000 each): a channel larger than that is judged by what was read,
	// and a person not found in it is not shown its cards.
	membersPages = 20
)

// channelMembers caches conversations.members per channel.
type channelMembers struct {
	once sync.Once
	m    *expirable.LRU[string, map[string]bool]
}

func (c *channelMembers) lru() *expirable.LRU[string, map[string]bool] {
	c.once.Do(func() { c.m = expirable.NewLRU[string, map[string]bool](membersMax, nil, membersTTL) })
	return c.m
}

// Member reports whether user is in channel, from conversations.members
// (a public or private channel, a direct or group message the bot is in),
// cached for membersTTL. A channel the bot cannot see is an error
// (channel_not_found): the bot then lists none of its cards.
func (a *Adapter) Member(ctx context.Context, channel string, user adapters.User) (bool, error) {
	if user.Team != "" && user.Team != a.identity().TeamID {
		return false, nil // another workspace's person: not in this one's channels
	}
	lru := a.members.lru()
	if in, ok := lru.Get(channel); ok {
		return in[user.ID], nil
	}
	in := map[string]bool{}
	cursor := ""
	for range membersPages {
		ids, next, err := a.api.GetUsersInConversationContext(ctx, &slackapi.GetUsersInConversationParameters{
			ChannelID: channel, Cursor: cursor, Limit: 1000,
		})
		if err != nil {
			return false, fmt.Errorf("slack: conversations.members of %s: %w", channel, err)
		}
		for _, id := range ids {
			in[id] = true
		}
		if next == "" {
			break
		}
		cursor = next
	}
	lru.Add(channel, in)
	return in[user.ID], nil
}
