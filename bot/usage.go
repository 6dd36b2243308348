package bot

import (
	"context"

	"github.com/countersign/countersign/approval"
)

// usage answers !usage: the model's spend today in conv's channel and in
// conv, and the limits of llm.budget with when each resets.
func (b *Bot) usage(ctx context.Context, conv approval.Conversation) {
	s, err := b.agent.Spending(ctx, conv)
	if err != nil {
		b.fail(ctx, conv, spendUnread(), err)
		return
	}
	b.say(ctx, conv, spending(s))
}
