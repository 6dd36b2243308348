package main

import (
	"time"

	"github.com/countersign/countersign/adapters/terminal"
)

// terminalPace is how long the terminal holds a message back while the bot
// has not answered the one before (terminal.Options.Pace). Piped input then
// never outruns the conversation's queue (bot.queue_size): a line waits its
// turn instead of being turned away. A bot that says nothing for this long
// gets the next line anyway, so a message nobody answers cannot stop the
// input.
const terminalPace = time.Minute

// terminalOptions are the terminal's options: its section of the file, and
// the pace.
func terminalOptions(cfg fileConfig) terminal.Options {
	o := cfg.Terminal.Options
	o.Pace = terminalPace
	o.Leaving = func() { leaving.Store(true) }
	return o
}
