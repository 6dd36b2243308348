package bot

import (
	"context"

	"github.com/countersign/countersign/agent"
)

// Agent is the bot's agent, for the gateway (issue 26): another agent's
// calls enter its gate (agent/call.go) and their cards are shown through
// this bot's adapters.
func (b *Bot) Agent() *agent.Agent { return b.agent }

// Serves reports whether this process shows the cards of platform.
func (b *Bot) Serves(platform string) bool { return b.serves(platform) }

// CardURL is the address of an approval's card on its platform, for the
// gateway's card_url, or "" where the platform gives none (the terminal)
// or the card is not posted yet.
func (b *Bot) CardURL(ctx context.Context, id string) string {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	a, err := b.store.Get(ctx, id)
	if err != nil || a.MessageRef == "" {
		return ""
	}
	links := b.extras[a.Conversation.Platform].Permalink
	if links == nil {
		return ""
	}
	url, err := links.Permalink(ctx, place(a.Conversation), a.MessageRef)
	if err != nil {
		b.log.Info("no address for a card", "approval", id, "err", err)
		return ""
	}
	return url
}
