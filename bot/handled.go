package bot

// Observer is told when the bot has finished something a caller may want
// to wait for, so that a test waits on the event, not on time (joe's
// EmitSync idea). Its functions run on the bot's own goroutines and must
// return quickly; a nil one is skipped. The zero Observer observes nothing.
type Observer struct {
	// Swept is called after each round of the background sweep: the
	// take-over of a dead replica's inbox, the expiry of overdue
	// approvals, and the reminders due.
	Swept func()
}

// Observe sets what the bot tells o. Call it before Run.
func (b *Bot) Observe(o Observer) { b.observer = o }

// swept tells the observer that a sweep round ended.
func (b *Bot) swept() {
	if f := b.observer.Swept; f != nil {
		f()
	}
}
