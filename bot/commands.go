package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/approval"
)

// The tools direct commands call.
const (
	toolCommand = "execute_command"
	toolSQL     = "execute_sql"
	toolHTTP    = "http_request"
	toolFile    = "file_operations"
)

// directCall is a direct command turned into a tool call.
type directCall struct {
	tool string
	args map[string]any
}

// parseDirect reads "!run ls -la" and friends (SPEC §7). It returns the
// call, or a usage sentence when the command is incomplete. ok is false for
// a command that is not a tool call (!help, !pending, unknown).
func parseDirect(text string) (call directCall, usage string, ok bool) {
	verb, rest, _ := strings.Cut(strings.TrimSpace(text), " ")
	rest = strings.TrimSpace(rest)
	switch strings.ToLower(verb) {
	case "!run":
		if rest == "" {
			return call, "Usage: !run <command>, e.g. !run df -h", true
		}
		return directCall{toolCommand, map[string]any{"command": rest}}, "", true
	case "!sql":
		if rest == "" {
			return call, "Usage: !sql <statement>, e.g. !sql SELECT COUNT(*) FROM orders", true
		}
		return directCall{toolSQL, map[string]any{"sql": rest}}, "", true
	case "!http":
		method, url, _ := strings.Cut(rest, " ")
		url = strings.TrimSpace(url)
		if method == "" || url == "" || strings.ContainsAny(url, " \t") {
			return call, "Usage: !http <METHOD> <url>, e.g. !http GET https://example.com/health", true
		}
		return directCall{toolHTTP, map[string]any{"method": strings.ToUpper(method), "url": url}}, "", true
	case "!file":
		return parseFile(rest)
	}
	return call, "", false
}

const fileUsage = "Usage: !file <operation> <path>, e.g. !file read logs/app.log; " +
	"!file write <path> <content>; !file delete -r <path>. Operations: read, list, exists, stat, write, append, mkdir, delete"

func parseFile(rest string) (directCall, string, bool) {
	op, rest, _ := strings.Cut(rest, " ")
	op = strings.ToLower(op)
	rest = strings.TrimSpace(rest)
	args := map[string]any{"operation": op}
	switch op {
	case "read", "list", "exists", "stat":
		if rest == "" && op != "list" {
			return directCall{}, fileUsage, true
		}
		if rest == "" {
			rest = "."
		}
		args["path"] = rest
	case "write", "append":
		path, content, found := strings.Cut(rest, " ")
		if path == "" || !found {
			return directCall{}, fileUsage, true
		}
		args["path"] = path
		args["content"] = content
	case "mkdir", "delete":
		if flag, path, found := strings.Cut(rest, " "); found && (flag == "-r" || flag == "--recursive") {
			args["recursive"] = true
			rest = strings.TrimSpace(path)
		}
		if rest == "" {
			return directCall{}, fileUsage, true
		}
		args["path"] = rest
	default:
		return directCall{}, fileUsage, true
	}
	return directCall{toolFile, args}, "", true
}

// command runs a direct command.
func (b *Bot) command(ctx context.Context, e adapters.Event, conv approval.Conversation, user approval.User, text string) {
	verb, _, _ := strings.Cut(text, " ")
	switch strings.ToLower(verb) {
	case "!help":
		b.say(ctx, e.Place, b.help())
		return
	case "!pending":
		b.pending(ctx, e.Place)
		return
	}
	call, usage, ok := parseDirect(text)
	if !ok {
		b.say(ctx, e.Place, "I do not know "+verb+". !help lists the commands.")
		return
	}
	if usage != "" {
		b.say(ctx, e.Place, usage)
		return
	}
	if b.tools != nil {
		if _, found := b.tools.Lookup(call.tool); !found {
			b.say(ctx, e.Place, notConfigured(call.tool))
			return
		}
	}
	args, err := json.Marshal(call.args)
	if err != nil {
		b.fail(ctx, e.Place, "I could not read that command", err)
		return
	}
	if err := b.agent.Direct(ctx, conv, user, call.tool, args); err != nil {
		b.fail(ctx, e.Place, "I could not run "+verb, err)
	}
}

func notConfigured(tool string) string {
	switch tool {
	case toolSQL:
		return "SQL is off here: no database is configured (tools.sql in the configuration)."
	case toolHTTP:
		return "HTTP requests are off here: the HTTP tool is not configured (tools.http in the configuration)."
	}
	return "The tool " + tool + " is not configured here."
}

func (b *Bot) say(ctx context.Context, p adapters.Place, text string) {
	if _, err := b.ad.Post(ctx, p, adapters.Content{Text: text}); err != nil {
		b.log.Error("post a message", "err", err, "channel", p.Channel)
	}
}

func (b *Bot) help() string {
	var s strings.Builder
	s.WriteString("Direct commands (they work without a model, and risky ones wait for an approval):\n")
	s.WriteString("  !run <command>            run a shell command\n")
	s.WriteString("  !sql <statement>          run one SQL statement\n")
	s.WriteString("  !http <METHOD> <url>      make an HTTP request\n")
	s.WriteString("  !file <operation> <path>  read, list, exists, stat, write <path> <content>, append, mkdir, delete [-r]\n")
	s.WriteString("  !pending                  the approvals waiting in this channel\n")
	s.WriteString("  !help                     this list\n")
	if !adapters.HasButtons(b.ad) {
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

// pending lists the open approvals of the channel.
func (b *Bot) pending(ctx context.Context, p adapters.Place) {
	list, err := b.store.ListPending(ctx, b.ad.Name(), p.Channel)
	if err != nil {
		b.fail(ctx, p, "I could not list the pending approvals", err)
		return
	}
	if len(list) == 0 {
		b.say(ctx, p, "No approvals are waiting in this channel.")
		return
	}
	var s strings.Builder
	fmt.Fprintf(&s, "%s waiting in this channel:", plural(len(list), "approval"))
	for _, a := range list {
		// One line per approval; a cut is always marked, so nobody takes
		// the first line of an operation for all of it.
		op, _, more := strings.Cut(operation(a.Tool, a.Args), "\n")
		if shown, cut := cutRunes(op, 80); cut || more {
			op = shown + " …"
		}
		fmt.Fprintf(&s, "\n  %s  %s: %s (asked by %s, risk %s, expires %s)",
			a.ID, a.Tool, op, a.Requester.Display(), a.Verdict.Risk, a.ExpiresAt.UTC().Format(stamp))
	}
	if !adapters.HasButtons(b.ad) {
		s.WriteString("\nType approve <id> or cancel <id> [reason].")
	}
	b.say(ctx, p, s.String())
}

func cutRunes(s string, n int) (string, bool) {
	r := []rune(s)
	if len(r) <= n {
		return s, false
	}
	return string(r[:n]), true
}
