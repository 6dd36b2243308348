package adapters

import (
	"context"
	"time"
)

// Home is an optional capability (issue 19): a personal inbox the platform
// shows each person (Slack's App Home), listing the cards they may decide.
// The adapter delivers the person opening it as an Event with Home set;
// the bot answers with PublishHome, and again whenever a card that waits
// for that person changes.
//
// An inbox lists only the cards of conversations the person is in: the
// bot asks Member of each channel that has a pending card (the store's
// PendingChannels), so that nobody sees a card of a private channel or a
// direct message they are not part of.
type Home interface {
	PublishHome(ctx context.Context, user User, items []HomeItem) error
	// Member reports whether user is a member of channel (a channel, a
	// private channel, a direct or group message), as the platform says
	// (Slack: conversations.members), cached briefly by the adapter. An
	// error means it could not tell, and the caller shows nothing of that
	// channel (fail closed).
	Member(ctx context.Context, channel string, user User) (bool, error)
}

// HomeItem is one card in a person's inbox.
type HomeItem struct {
	ApprovalID string
	Operation  string
	Channel    string // the channel's id
	Thread     string // the card's thread
	Ref        string // the card's message
	Requester  string
	Asked      time.Time
	// Needs says who may decide and how far the count is.
	Needs string
}
