package agent

import (
	"context"
	"errors"
)

// cancelCause is the cause a turn's context carries when a person
// cancelled it (!cancel).
type cancelCause struct{ by string }

func (c cancelCause) Error() string { return "cancelled by " + c.by + " (!cancel)" }

// Cancelled is the cause to cancel a turn's context with when the person
// named by asked to stop it: what the turn was doing is then recorded as
// cancelled by them, and no failure is reported.
func Cancelled(by string) error { return cancelCause{by: by} }

// CancelledBy names who cancelled the turn whose context is ctx, or
// "someone" when its cause does not say.
func CancelledBy(ctx context.Context) string {
	var c cancelCause
	if errors.As(context.Cause(ctx), &c) {
		return c.by
	}
	return "someone"
}
