package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/tools"
)

// Rendering limits for direct replies.
const (
	renderBytes = 3000
)

// render is the short human form of a result for a chat reply: what was
// run, then the exit code and output, the rows as a small table, the HTTP
// status and body, or why it did not run.
func (a *Agent) render(tool string, args json.RawMessage, r tools.Result) string {
	var b strings.Builder
	if op := a.tools.Operation(tool, args).Head(); op != "" && len(args) > 0 {
		fmt.Fprintf(&b, "`%s` ", tools.OneLine(op, 200))
	}
	if !r.Executed {
		b.WriteString("did not run")
		switch r.Status {
		case tools.StatusBlocked:
			b.WriteString(": blocked by policy")
		case tools.StatusCancelled:
			b.WriteString(": cancelled")
			if r.DecidedBy != "" {
				b.WriteString(" by " + r.DecidedBy)
			}
		case tools.StatusExpired:
			b.WriteString(": nobody approved it in time")
		case tools.StatusDenied:
			b.WriteString(": refused by the tool")
		}
		if r.Reason != "" {
			b.WriteString(" (" + r.Reason + ")")
		}
		b.WriteString(".")
		if r.Error != "" {
			b.WriteString("\n" + r.Error)
		}
		return b.String()
	}
	// How it ended, in the card's words (tools.Result.Outcome).
	head := r.Outcome()
	if head == "" {
		head = "ok"
		if r.Status != tools.StatusOK {
			head = "failed"
		}
	}
	b.WriteString(head)
	fmt.Fprintf(&b, " · %d ms", r.DurationMS)
	if r.Error != "" {
		b.WriteString("\n" + r.Error)
	}
	// The same text the card shows (tools.Result.Output), in one block.
	if out := r.Output(); strings.TrimSpace(out) != "" {
		codeBlock(&b, out)
	}
	if r.Truncated || r.Note != "" {
		note := r.Note
		if note == "" {
			note = "output truncated"
		}
		b.WriteString("\n_" + note + "_")
	}
	return b.String()
}

func codeBlock(b *strings.Builder, s string) {
	s = strings.TrimRight(s, "\n")
	if shown, cut := tools.CapText(s, renderBytes); cut {
		s = shown + "\n…"
	}
	s = strings.ReplaceAll(s, "```", "`\u200b``")
	b.WriteString("\n```\n" + s + "\n```")
}

// replyResult replies the rendered result r; when the reply shows r's
// output cut and the sink can carry the whole of it (FullReplier), the
// whole output goes with it; otherwise the reply goes to out.
func (a *Agent) replyResult(ctx context.Context, out Replier, conv approval.Conversation, text string, r tools.Result) error {
	fr, ok := a.sink.(FullReplier)
	full := r.Output()
	if !ok || len(strings.TrimRight(full, "\n")) <= renderBytes {
		return a.reply(ctx, out, conv, text)
	}
	if err := fr.ReplyFull(ctx, conv, text, full); err != nil {
		return fmt.Errorf("reply in %s: %w", conv.Key(), err)
	}
	return nil
}
