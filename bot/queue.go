package bot

// queue holds the messages of one conversation, handled one at a time in
// the order they came.
type queue struct {
	events []inbound
}

// enqueue queues a message behind its conversation's, and starts the
// conversation's drain when none runs; a full queue turns the message away.
func (b *Bot) enqueue(e inbound) {
	key := b.conv(e).Key()
	b.mu.Lock()
	q, running := b.queues[key]
	if !running {
		q = &queue{}
		b.queues[key] = q
	}
	if len(q.events) >= b.cfg.QueueSize {
		b.mu.Unlock()
		b.notify(e, "I am still working on your earlier messages here; send this again in a moment.")
		return
	}
	q.events = append(q.events, e)
	if !running {
		b.inflight.Add(1)
		go b.drain(key, q)
	}
	b.mu.Unlock()
}

// drain handles the queued messages of key one by one until none is left;
// during a shutdown it tells their senders instead.
func (b *Bot) drain(key string, q *queue) {
	defer b.inflight.Done()
	for {
		b.mu.Lock()
		if len(q.events) == 0 {
			delete(b.queues, key)
			b.mu.Unlock()
			return
		}
		e := q.events[0]
		q.events = q.events[1:]
		b.mu.Unlock()
		if b.stopping.Load() {
			b.log.Info("shutting down: a queued message is not handled", "event", e.ID, "channel", e.Place.Channel)
			b.notify(e, "I am shutting down, so I did not act on your message \""+oneLine(e.Text, 60)+"\"; send it again once I am back.")
			continue
		}
		b.safely(e, func() { b.message(b.work, e) })
	}
}
