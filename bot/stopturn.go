package bot

import (
	"context"
	"errors"

	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval"
)

// This file answers the platform's own Stop (Slack: the Stop of an
// agent's thread, agent_session_stopped; adapters.Event.StopTurn): the
// turn of the thread ends as !cancel ends it (the model's request is
// abandoned), the runs of the thread that the person may stop are
// stopped as !stop stops them, and the thread is told once who stopped
// what. A repeat of the event is dropped by its id before it gets here
// (handle).

// stopTurnLater answers a StopTurn event in the background.
func (b *Bot) stopTurnLater(in inbound) {
	recorded(in.Event) // nothing to keep: after a restart there is nothing left to stop
	b.later(in, func() { b.stopTurn(in) })
}

// stopTurn ends the turns and the runs of in's thread (of its whole
// channel when the platform named no thread).
func (b *Bot) stopTurn(in inbound) {
	whole := in.Place.Thread == ""
	here := func(c approval.Conversation) bool {
		return c.Platform == in.platform && c.Channel == in.Place.Channel && (whole || c.Thread == in.Place.Thread)
	}
	by := approval.User{ID: in.User.ID, Name: in.User.Display()}
	var did, failed []string

	b.mu.Lock()
	var cancels []turn
	for _, t := range b.turns {
		if here(t.conv) {
			cancels = append(cancels, t)
		}
	}
	b.mu.Unlock()
	for _, t := range cancels {
		t.cancel(agent.Cancelled(by.Display()))
	}
	if len(cancels) > 0 {
		did = append(did, "the model's turn")
	}
	// A turn whose card waits has no goroutine to cancel: its stream ends
	// here; the card stays until it is decided or expires.
	prefix := b.conv(in).Key()
	if whole {
		prefix = approval.Conversation{Platform: in.platform, Channel: in.Place.Channel}.Key()
	}
	for _, s := range b.shows.in(prefix) {
		if whole || s.conv.Key() == prefix {
			b.endShow(s, "")
		}
	}

	for _, a := range b.agent.Running() {
		if !here(a.Conversation) {
			continue
		}
		what := runOf(a.ID, b.operation(a.Tool, a.Args))
		if why, notice := b.refusal(in, a, approval.DecisionStop); why != "" {
			b.refuseClick(in, a, approval.DecisionStop, why, notice) // audited, and told to them alone
			continue
		}
		if err := b.agent.Stop(b.work, a.ID, by); errors.Is(err, agent.ErrNotRunning) {
			continue // it had just finished
		} else if err != nil {
			b.log.Error("the platform's stop could not stop a run", "approval", a.ID, "err", err)
			failed = append(failed, what)
			continue
		}
		did = append(did, what)
	}

	b.log.Info("the platform's stop", "platform", in.platform, "channel", in.Place.Channel, "thread", in.Place.Thread, "by", in.User.ID, "stopped", len(did), "failed", len(failed))
	ctx, cancel := context.WithTimeout(b.work, notifyTimeout)
	defer cancel()
	b.say(ctx, b.conv(in), stopped(by.Display(), did, failed))
}
