package slack

import (
	"context"
	"fmt"
	"strings"
	"time"

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
			text += "\n" + escape(it.Needs)
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
