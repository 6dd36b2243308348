package bot

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/risk"
)

// stopCall stops the running call of an approval (!stop <id>, or a Stop
// button), when this person may: the requester always, else whoever may
// approve in the channel. id may be a prefix of 4 or more characters of
// a call running here.
func (b *Bot) stopCall(in inbound, id string) {
	id = strings.ToLower(strings.TrimSpace(id))
	var running *approval.Approval
	var matches []string
	for _, a := range b.agent.Running() {
		if a.Conversation.Platform != in.platform || a.Conversation.Channel != in.Place.Channel {
			continue
		}
		if a.ID == id || id == "" && a.Conversation.Thread == in.Place.Thread || len(id) >= minPrefix && strings.HasPrefix(a.ID, id) {
			running = a
			matches = append(matches, a.ID)
		}
	}
	switch {
	case len(matches) > 1:
		b.notify(in, severalRunning(matches))
		return
	case running == nil:
		b.notify(in, b.notRunning(id))
		return
	}
	if why, notice := b.refusal(in, running, approval.DecisionStop); why != "" {
		b.refuseClick(in, running, approval.DecisionStop, why, notice)
		return
	}
	by := approval.User{ID: in.User.ID, Name: in.User.Display()}
	if err := b.agent.Stop(b.work, running.ID, by); errors.Is(err, agent.ErrNotRunning) {
		b.notify(in, justFinished(running.ID))
		return
	}
	if running.Verdict.Decision == risk.Auto {
		b.notify(in, stoppingAuto(running.ID, b.operation(running.Tool, running.Args)))
		return
	}
	b.notify(in, stopping(running.ID))
}

// notRunning says why a stop request names nothing that runs here.
func (b *Bot) notRunning(id string) string {
	if id == "" {
		return nothingToStopHere()
	}
	ctx, cancel := context.WithTimeout(b.work, checkTimeout)
	defer cancel()
	if approval.ValidID(id) {
		if a, err := b.store.Get(ctx, id); err == nil {
			if a.State == approval.Running {
				return runsElsewhere(id)
			}
			return notRunningNow(id, a.State)
		}
	}
	return noRunningID(id)
}

// Abandon is for a forced quit, just before the process exits: it stops
// every call running here at once (their process groups are killed) and
// records the approved ones as stopped, waiting at most d. It returns how
// many it stopped.
func (b *Bot) Abandon(d time.Duration) int { return b.agent.Abandon(d) }
