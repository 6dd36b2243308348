package bot

import "github.com/countersign/countersign/agent"

// Agent is the bot's agent, for the gateway (issue 26): another agent's
// calls enter its gate (agent/call.go) and their cards are shown through
// this bot's adapters.
func (b *Bot) Agent() *agent.Agent { return b.agent }

// Serves reports whether this process shows the cards of platform.
func (b *Bot) Serves(platform string) bool { return b.serves(platform) }
