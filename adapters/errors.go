package adapters

import (
	"errors"
	"fmt"
	"time"
)

// ErrGone is wrapped by Update's error when the message is no longer there
// (deleted, or its channel archived): the bot then posts a new one, once.
var ErrGone = errors.New("the message is gone")

// RateLimitError is Post's, Update's or Notify's error when the platform
// refused the call for now and said when to try again: at once under
// TryOnce (the bot then skips a card's progress until the wait is over),
// else once the send's deadline has passed.
type RateLimitError struct {
	// RetryAfter is how long the platform asked to wait.
	RetryAfter time.Duration
	// Err is the platform's own error, for the log.
	Err error
}

func (e *RateLimitError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("rate limited for %s: %v", e.RetryAfter, e.Err)
	}
	return fmt.Sprintf("rate limited for %s", e.RetryAfter)
}

func (e *RateLimitError) Unwrap() error { return e.Err }

// RetryAfter reports how long err asks to wait, when it is (or wraps) a
// RateLimitError.
func RetryAfter(err error) (time.Duration, bool) {
	var rl *RateLimitError
	if errors.As(err, &rl) {
		return rl.RetryAfter, true
	}
	return 0, false
}
