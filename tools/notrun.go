package tools

import (
	"errors"
	"strings"
)

// DidNotRun is the sentence every result with executed:false carries (SPEC
// §4), so the LLM neither assumes the operation happened nor quietly tries
// it again.
const DidNotRun = "The operation did not run and should not be retried unless the user asks again."

// NotRun is a result for a call whose operation never ran: executed is false
// and the message is the given sentence followed by DidNotRun. Prefer the
// named helpers below; NotRun is for a status they do not cover.
func NotRun(status Status, message string) Result {
	msg := DidNotRun
	if message = strings.TrimSpace(message); message != "" {
		msg = strings.TrimRight(message, ".") + ". " + DidNotRun
	}
	return Result{Status: status, Executed: false, Message: msg}
}

// Blocked is the result for a call the policy refused outright (SPEC §2
// rule 1): it never ran and no person can approve it. reasons are the
// policy's plain-words reasons; Reason holds them joined with "; ".
func Blocked(reasons ...string) Result {
	r := NotRun(StatusBlocked, "The operation was blocked by policy")
	r.Reason = strings.Join(reasons, "; ")
	return r
}

// Cancelled is the result for a call a person cancelled on its approval
// card. by names who cancelled; reason is what they wrote, or "".
func Cancelled(by, reason string) Result {
	msg := "The operation was cancelled"
	if by != "" {
		msg += " by " + by
	}
	r := NotRun(StatusCancelled, msg)
	r.DecidedBy = by
	r.Reason = reason
	return r
}

// Expired is the result for a call whose approval card nobody decided
// before it expired.
func Expired() Result {
	return NotRun(StatusExpired, "Nobody approved the operation before its approval expired")
}

// Denied is the result for a call the tool itself refused before doing
// anything, e.g. a path outside the root or a write in an auto-run SQL call.
// err must be safe to show: its text becomes the result's Error.
func Denied(err error) Result {
	return withError(NotRun(StatusDenied, "The tool refused the operation"), err)
}

// Failed is the result for an operation that started and failed: executed
// is true, because it may have had effects. err must be safe to show.
func Failed(err error) Result {
	return withError(Result{Status: StatusError, Executed: true}, err)
}

// NotStarted is the result for a call that failed before its operation
// started (the server could not be reached, a configured name is unknown):
// status error, executed false. err must be safe to show.
func NotStarted(err error) Result {
	return withError(NotRun(StatusError, ""), err)
}

// InvalidArgs is the result for arguments that could not be decoded or are
// missing: status error, executed false, and the error naming the argument
// (see DecodeArgs and ArgError).
func InvalidArgs(err error) Result {
	if err == nil {
		err = errors.New("invalid arguments")
	}
	return withError(NotRun(StatusError, "The arguments were invalid"), err)
}

// withError puts err's text, which must be safe to show, in r.Error.
func withError(r Result, err error) Result {
	if err != nil {
		r.Error = err.Error()
	}
	return r
}
