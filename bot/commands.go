package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/tools"
)

// The bot's own direct commands; those that reach a tool (!run, !sql, …)
// come from the tools themselves (tools.Describer.Direct).
var botCommands = []struct{ usage, help string }{
	{"!pending", "the approvals waiting in this channel"},
	{"!stop <id>", "stop a running approved call (its processes are killed)"},
	{"edit <id> <operation>", "replace a waiting card's operation: a new card for the edited call"},
	{"!cancel", "stop the model's turn in this conversation"},
	{"!usage", "the model's tokens spent today in this channel and in this conversation, and the limits"},
	{"!help", "this list"},
}

// command runs a direct command (SPEC §7).
func (b *Bot) command(ctx context.Context, in inbound, conv approval.Conversation, user approval.User, text string) {
	verb, rest, _ := strings.Cut(text, " ")
	verb = strings.ToLower(verb)
	switch verb {
	case "!help":
		b.say(ctx, conv, b.help(in.platform))
		return
	case "!pending":
		if in.Private {
			b.pendingFor(ctx, in) // require.go: only the cards this person may decide, privately
			return
		}
		b.pending(ctx, in.platform, conv)
		return
	case "!cancel":
		b.cancelTurn(ctx, conv, in)
		return
	case "!stop":
		b.stopCall(in, rest)
		return
	case "!edit":
		b.edit(ctx, in, rest) // edit.go
		return
	case "!login":
		b.login(in) // console.go
		return
	case "!usage":
		b.usage(ctx, conv) // usage.go
		return
	}
	d, ok := b.direct(verb)
	if !ok {
		b.say(ctx, conv, unknownCommand(verb))
		return
	}
	if d.Off != "" {
		b.say(ctx, conv, d.Off)
		return
	}
	args, usage := d.Parse(strings.TrimSpace(rest))
	if usage != "" {
		b.say(ctx, conv, usage)
		return
	}
	raw, err := json.Marshal(args)
	if err != nil {
		b.fail(ctx, conv, unreadableCommand(), err)
		return
	}
	if err := b.agent.Direct(ctx, conv, user, d.Tool, raw); err != nil {
		b.fail(ctx, conv, cannotRunCommand(verb), err)
	}
}

// cancelTurn stops the model turn in flight in conv (!cancel). Cards it
// already posted stay: each is decided, or expires, on its own.
func (b *Bot) cancelTurn(ctx context.Context, conv approval.Conversation, in inbound) {
	b.mu.Lock()
	t, ok := b.turns[conv.Key()]
	b.mu.Unlock()
	if !ok {
		b.say(ctx, conv, noTurn())
		return
	}
	t.cancel(agent.Cancelled(in.User.Display()))
	b.log.Info("a turn was cancelled", "conversation", conv.Key(), "by", in.User.ID)
	b.say(ctx, conv, turnCancelled(in.User.Display()))
}

// direct finds the tool command called verb.
func (b *Bot) direct(verb string) (tools.NamedDirect, bool) {
	if b.tools == nil {
		return tools.NamedDirect{}, false
	}
	for _, d := range b.tools.Directs() {
		if d.Verb == verb {
			return d, true
		}
	}
	return tools.NamedDirect{}, false
}

func (b *Bot) help(platform string) string {
	var s strings.Builder
	s.WriteString("Direct commands (they work without a model, and risky ones wait for an approval):\n")
	line := func(usage, help string) { fmt.Fprintf(&s, "  %-25s %s\n", usage, help) }
	if b.tools != nil {
		for _, d := range b.tools.Directs() {
			help := d.Help
			if d.Off != "" {
				help += " (off here)"
			}
			line(d.Usage, help)
		}
	}
	for _, c := range botCommands {
		line(c.usage, c.help)
	}
	if b.loginLink != nil {
		line("!login", "a private link that signs you in to the web console, as you") // console.go
	}
	if !b.extras[platform].Buttons {
		s.WriteString("Decide on a card by typing: approve <id>  or  cancel <id> [reason]\n")
	} else {
		s.WriteString("Decide on a card with its buttons, or type: approve <id>  or  cancel <id> [reason]\n")
	}
	if b.model {
		s.WriteString("Anything else goes to the model, which may call the same tools.")
	} else {
		s.WriteString("No model is configured: set OPENAI_API_KEY or OPENAI_BASE_URL to talk to one.")
	}
	return s.String()
}

// pendingShown caps the approvals !pending lists: a chat message holds a
// few dozen lines well, and a platform refuses one of thousands.
const pendingShown = 25

// pending lists the open approvals of the channel, the oldest
// pendingShown of them, and says how many are waiting in all.
func (b *Bot) pending(ctx context.Context, platform string, conv approval.Conversation) {
	list, err := b.store.ListPending(ctx, platform, conv.Channel, pendingShown)
	if err != nil {
		b.fail(ctx, conv, pendingUnlisted(), err)
		return
	}
	n, err := b.store.CountPending(ctx, platform, conv.Channel)
	if err != nil {
		b.fail(ctx, conv, pendingUncounted(), err)
		return
	}
	// The two reads are not one snapshot: one created in between is
	// listed, so the count is at least the list.
	n = max(n, len(list))
	if n == 0 {
		b.say(ctx, conv, noPending())
		return
	}
	list = list[:min(len(list), pendingShown)]
	var s strings.Builder
	fmt.Fprintf(&s, "%s waiting in this channel", plural(n, "approval"))
	if len(list) < n {
		fmt.Fprintf(&s, " (the oldest %d shown)", len(list))
	}
	s.WriteString(":")
	for _, a := range list {
		// One line per approval; a cut is always marked, so nobody takes
		// the first line of an operation for all of it.
		op, _, more := strings.Cut(b.operation(a.Tool, a.Args), "\n")
		if shown, cut := cutRunes(op, 80); cut || more {
			op = shown + " …"
		}
		fmt.Fprintf(&s, "\n  %s  %s: %s (asked by %s, risk %s, expires %s)",
			a.ID, a.Tool, op, a.Requester.Display(), a.Verdict.Risk, a.ExpiresAt.UTC().Format(stamp))
	}
	if !b.extras[platform].Buttons {
		s.WriteString("\nType approve <id> or cancel <id> [reason].")
	}
	b.say(ctx, conv, s.String())
}

// operation is the text of a call as its tool shows it.
func (b *Bot) operation(tool string, args json.RawMessage) string {
	if b.tools == nil {
		return string(args)
	}
	return b.tools.Operation(tool, args).Text
}

func cutRunes(s string, n int) (string, bool) {
	r := []rune(s)
	if len(r) <= n {
		return s, false
	}
	return string(r[:n]), true
}
