package agent

import (
	_ "embed"
	"strings"
)

//go:embed system_prompt.txt
var systemPrompt string

// SystemPrompt returns the system prompt every model call starts with. It
// lives in system_prompt.txt beside this file and is embedded in the
// binary; it is never stored with a conversation.
func SystemPrompt() string { return strings.TrimSpace(systemPrompt) }
