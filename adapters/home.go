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
type Home interface {
	PublishHome(ctx context.Context, user User, items []HomeItem) error
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
