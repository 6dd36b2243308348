package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// DefaultTTL is how long an approval waits for a decision when its creator
// set no deadline (SPEC §5).
const DefaultTTL = 15 * time.Minute

// ErrInvalid is wrapped by the error of a request that can never succeed
// (a missing field, a transition to a state the method does not make).
// Compare with errors.Is.
var ErrInvalid = errors.New("invalid approval request")

// PrepareCreate checks a and returns the copy a store keeps: empty Args
// become {} and invalid JSON is refused, a new ID when none was set,
// ArgsHash computed (a mismatching one is refused), State Pending with
// every decision field cleared, CreatedAt now when zero, and ExpiresAt
// CreatedAt+DefaultTTL when zero. Both stores call it in Create.
func PrepareCreate(a *Approval, now time.Time) (*Approval, error) {
	if a == nil {
		return nil, fmt.Errorf("create approval: %w: nil approval", ErrInvalid)
	}
	if a.ToolCallID == "" {
		return nil, fmt.Errorf("create approval: %w: empty tool call id", ErrInvalid)
	}
	if a.Tool == "" {
		return nil, fmt.Errorf("create approval for %s: %w: empty tool", a.ToolCallID, ErrInvalid)
	}
	c := *a
	if len(c.Args) == 0 {
		c.Args = json.RawMessage(`{}`)
	}
	if !json.Valid(c.Args) {
		return nil, fmt.Errorf("create approval for %s: %w: args are not valid JSON", a.ToolCallID, ErrInvalid)
	}
	if c.ID == "" {
		c.ID = NewID()
	}
	hash := ArgsHash(c.Args)
	if c.ArgsHash != "" && c.ArgsHash != hash {
		return nil, fmt.Errorf("create approval for %s: %w: args hash does not match the args", a.ToolCallID, ErrInvalid)
	}
	c.ArgsHash = hash
	if c.CreatedAt.IsZero() {
		c.CreatedAt = now
	}
	if c.ExpiresAt.IsZero() {
		c.ExpiresAt = c.CreatedAt.Add(DefaultTTL)
	}
	if c.ExpiresAt.Before(c.CreatedAt) {
		return nil, fmt.Errorf("create approval for %s: %w: expires before it is created", a.ToolCallID, ErrInvalid)
	}
	c.State = Pending
	c.DecidedBy, c.DecidedAt, c.Reason = nil, time.Time{}, ""
	c.StartedAt, c.EndedAt, c.Result = time.Time{}, time.Time{}, nil
	return &c, nil
}

// CheckDecide returns an ErrInvalid error unless to is a state Decide makes.
func CheckDecide(to State) error {
	switch to {
	case Approved, Cancelled, Expired:
		return nil
	}
	return fmt.Errorf("%w: decide can only approve, cancel or expire, not %q", ErrInvalid, to)
}

// CheckFinish returns an ErrInvalid error unless to is a state Finish makes.
func CheckFinish(to State) error {
	switch to {
	case Done, Failed:
		return nil
	}
	return fmt.Errorf("%w: finish can only end in done or failed, not %q", ErrInvalid, to)
}

// DecidedState is the state Decide records when asked for to at time at: an
// approval asked for at or after the deadline expires instead, so a late
// click never approves (fail closed). Cancellations stand. Times compare
// in whole milliseconds, the resolution the Redis store keeps.
func DecidedState(a *Approval, to State, at time.Time) State {
	if to == Approved && at.UnixMilli() >= a.ExpiresAt.UnixMilli() {
		return Expired
	}
	return to
}

// CheckCount returns an ErrInvalid error unless platform and channel are
// both set (one channel) or both empty (everywhere): CountPending's
// arguments. Both stores call it.
func CheckCount(platform, channel string) error {
	if (platform == "") != (channel == "") {
		return fmt.Errorf("count pending approvals: %w: give a platform and a channel, or neither", ErrInvalid)
	}
	return nil
}
