package slack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/countersign/countersign/adapters"
	slackapi "github.com/slack-go/slack"
)

// This file is what the adapter knows of Slack while it runs, read by
// the events that come in (slack.go), the posts that go out (send.go) and
// the turn's stream (stream.go): who the app is, the threads it takes part
// in, and what a Web API error means. It calls nothing else of the
// package, so none of them goes back into another for it.

// identity is who the bot is, from auth.test.
type identity struct {
	UserID string
	BotID  string
	TeamID string
	// URL is the workspace's address (https://acme.slack.com/), for
	// links to messages without a chat.getPermalink call.
	URL string
}

// slackErr wraps a Web API error with what was being done, and maps the
// errors the bot acts on: a gone message to adapters.ErrGone, a 429 to
// *adapters.RateLimitError.
func slackErr(what string, err error) error {
	if rl, ok := errors.AsType[*slackapi.RateLimitedError](err); ok {
		return &adapters.RateLimitError{RetryAfter: rl.RetryAfter, Err: fmt.Errorf("%s: %w", what, err)}
	}
	if sc, ok := errors.AsType[slackapi.StatusCodeError](err); ok {
		switch {
		case sc.Code == http.StatusTooManyRequests:
			return &adapters.RateLimitError{RetryAfter: time.Second, Err: fmt.Errorf("%s: %w", what, err)}
		case sc.Code >= 500:
			return fmt.Errorf("%s: %w: %w", what, adapters.ErrUnavailable, err)
		}
	}
	if _, ok := errors.AsType[net.Error](err); ok && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w: %w", what, adapters.ErrUnavailable, err)
	}
	if se, ok := errors.AsType[slackapi.SlackErrorResponse](err); ok {
		switch se.Err {
		case "ratelimited":
			return &adapters.RateLimitError{RetryAfter: time.Second, Err: fmt.Errorf("%s: %w", what, err)}
		case "internal_error", "fatal_error", "service_unavailable", "request_timeout":
			return fmt.Errorf("%s: %w: %w", what, adapters.ErrUnavailable, err)
		case "message_not_found", "channel_not_found", "is_archived", "thread_not_found", "cant_update_message":
			return fmt.Errorf("%s: %w: %w", what, adapters.ErrGone, err)
		case "not_in_channel":
			return fmt.Errorf("%s: %w; invite the bot to the channel (/invite @countersign)", what, err)
		case "missing_scope":
			return fmt.Errorf("%s: %w (needed: %s); add the scope in the app's manifest and reinstall it", what, err, se.Needed)
		}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// remember notes that the bot takes part in a thread.
func (a *Adapter) remember(channel, thread string) {
	if channel == "" || thread == "" {
		return
	}
	a.threads.Add(channel+"/"+thread, struct{}{})
}

func (a *Adapter) identity() identity {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.self
}
