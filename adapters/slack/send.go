package slack

import (
	"context"
	"fmt"

	"github.com/countersign/countersign/adapters"
	slackapi "github.com/slack-go/slack"
)

// This file is what the bot sends to Slack: posts, updates and private
// notices, each through the adapter's Sender (adapters/deliver.go), which
// retries it until its deadline. The events that come in are slack.go's.

// Post posts text, a card, or both into the conversation's thread and
// returns the message's ts. A card whose operation is too long to show
// whole gets the full text attached as a file in the thread first; if that
// fails, the card is not posted (nobody may approve what they cannot read).
func (a *Adapter) Post(ctx context.Context, to adapters.Place, c adapters.Content) (string, error) {
	var ts string
	err := a.send.Send(ctx, "post:"+to.Channel+"/"+to.Thread, adapters.Deadline(ctx, a.now(), c.Card),
		adapters.Owed{Place: to, What: []string{adapters.Describe(c)}},
		func(ctx context.Context) (err error) {
			ts, err = a.post(ctx, to, c)
			return err
		})
	return ts, err
}

func (a *Adapter) post(ctx context.Context, to adapters.Place, c adapters.Content) (string, error) {
	c = a.named(ctx, c) // blocks.go: groups and people by name
	files, err := a.attachAll(ctx, to, c)
	if err != nil {
		return "", err
	}
	opts := a.content(c, files)
	if to.Thread != "" {
		opts = append(opts, slackapi.MsgOptionTS(to.Thread))
	}
	_, ts, err := a.api.PostMessageContext(ctx, to.Channel, opts...)
	if err != nil {
		return "", slackErr("post to "+to.Channel, err)
	}
	a.remember(to.Channel, to.Thread)
	a.features.posted(to.Channel, to.Thread) // stream.go: Slack cleared the thread's status
	return ts, nil
}

// attachAll attaches the files c needs: a card's long operation and
// output, a plain message's full text.
func (a *Adapter) attachAll(ctx context.Context, to adapters.Place, c adapters.Content) (attached, error) {
	if c.Card != nil {
		return a.attach(ctx, to, c.Card)
	}
	text, err := a.attachText(ctx, to, c)
	return attached{Text: text}, err
}

// Update replaces the message ref in place (chat.update). A message that
// is gone wraps adapters.ErrGone; a 429 is an *adapters.RateLimitError.
func (a *Adapter) Update(ctx context.Context, to adapters.Place, ref string, c adapters.Content) error {
	return a.send.Send(ctx, "update:"+to.Channel+"/"+ref, adapters.Deadline(ctx, a.now(), nil),
		adapters.Owed{Place: to, What: []string{"the update of " + adapters.Describe(c)}},
		func(ctx context.Context) error { return a.update(ctx, to, ref, c) })
}

func (a *Adapter) update(ctx context.Context, to adapters.Place, ref string, c adapters.Content) error {
	c = a.named(ctx, c) // blocks.go: groups and people by name
	files, err := a.attachAll(ctx, to, c)
	if err != nil {
		return err
	}
	opts := a.content(c, files)
	if _, _, _, err := a.api.UpdateMessageContext(ctx, to.Channel, ref, opts...); err != nil {
		return slackErr("update message "+ref+" in "+to.Channel, err)
	}
	return nil
}

// Notify sends a notice only n.User sees: through the click's response_url
// when the notice answers a click, else chat.postEphemeral in the thread.
func (a *Adapter) Notify(ctx context.Context, n adapters.Notice) error {
	return a.send.Send(ctx, "notice:"+n.User.ID+"@"+n.Place.Channel+"/"+n.Place.Thread, adapters.Deadline(ctx, a.now(), nil),
		adapters.Owed{Place: n.Place, User: n.User, What: []string{"a private notice (" + adapters.Excerpt(n.Text) + ")"}},
		func(ctx context.Context) error { return a.notify(ctx, n) })
}

func (a *Adapter) notify(ctx context.Context, n adapters.Notice) error {
	text := escape(a.named(ctx, adapters.Content{Text: n.Text}).Text) // blocks.go
	channel, thread := n.Place.Channel, n.Place.Thread
	if r, ok := n.Reply.(*reply); ok && r != nil {
		if r.ResponseURL != "" && (r.User == "" || r.User == n.User.ID) {
			_, _, err := a.api.PostMessageContext(ctx, r.Channel,
				slackapi.MsgOptionText(text, false),
				slackapi.MsgOptionResponseURL(r.ResponseURL, slackapi.ResponseTypeEphemeral))
			if err == nil {
				return nil
			}
			if adapters.Transient(err) {
				return slackErr("answer a click privately", err)
			}
			a.log.Warn("response_url refused a notice; sending it with chat.postEphemeral", "user", n.User.ID, "err", err)
		}
		if channel == "" {
			channel, thread = r.Channel, r.Thread
		}
	}
	opts := []slackapi.MsgOption{slackapi.MsgOptionText(text, false)}
	if thread != "" {
		opts = append(opts, slackapi.MsgOptionTS(thread))
	}
	if _, err := a.api.PostEphemeralContext(ctx, channel, n.User.ID, opts...); err != nil {
		return slackErr("send a private notice to "+n.User.ID, err)
	}
	return nil
}

// Undelivered is how many posts, updates and notices were given up after
// trying them until their deadline (adapters.Undeliverable).
func (a *Adapter) Undelivered() uint64 { return a.send.Undelivered() }

// tell says what could not be delivered to a place, once Slack answers
// again: privately to the person a lost notice was for, else in the thread.
func (a *Adapter) tell(ctx context.Context, o adapters.Owed) error {
	text := o.Text("Slack")
	if o.User.ID != "" {
		return a.Notify(ctx, adapters.Notice{Place: o.Place, User: o.User, Text: text})
	}
	_, err := a.Post(ctx, o.Place, adapters.Content{Text: text})
	return err
}

// Permalink is the address of a posted message (chat.getPermalink), for
// the gateway's card_url (adapters.Permalinker).
func (a *Adapter) Permalink(ctx context.Context, to adapters.Place, ref string) (string, error) {
	link, err := a.api.GetPermalinkContext(ctx, &slackapi.PermalinkParameters{Channel: to.Channel, Ts: ref})
	if err != nil {
		return "", fmt.Errorf("slack: the address of message %s in %s: %w", ref, to.Channel, err)
	}
	return link, nil
}
