package slack

import "time"

// SetRetryPauses sets the pauses of retried sends, so that a test of a
// 5xx storm does not wait Slack-sized pauses.
func SetRetryPauses(a *Adapter, base, most time.Duration) {
	a.send.Base, a.send.Max = base, most
}

// SetAckWithin sets how long a's acknowledgements wait for the bot's
// record; call it before a runs.
func SetAckWithin(a *Adapter, d time.Duration) { a.ackWithin = d }
