package discord

import "github.com/bwmarrin/discordgo"

// /countersign pending answers privately (issue 19): the cards waiting for
// the person who asked, which nobody else needs to see. Its first response
// is an ephemeral "thinking" message, and the bot's answer (a Notice)
// replaces it; no thread is started for it.

// isPending reports whether a slash command is /countersign pending.
func isPending(d discordgo.ApplicationCommandInteractionData) bool {
	return len(d.Options) > 0 && d.Options[0] != nil && d.Options[0].Name == "pending"
}

// commandResponse is the first response to one of countersign's slash
// commands: deferred, and private for pending.
func commandResponse(d discordgo.ApplicationCommandInteractionData) map[string]any {
	if isPending(d) {
		return map[string]any{"type": responseDeferredMessage, "data": map[string]any{"flags": flagEphemeral}}
	}
	return map[string]any{"type": responseDeferredMessage}
}
