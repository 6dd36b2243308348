package terminal

import (
	"strconv"
	"strings"

	"github.com/countersign/countersign/adapters"
)

// style is an ANSI SGR sequence.
type style string

const (
	bold   style = "1"
	dim    style = "2"
	red    style = "31"
	green  style = "32"
	yellow style = "33"
	cyan   style = "36"
)

type painter func(style, string) string

// paint colours s when colour is on.
func (t *Terminal) paint(st style, s string) string { return paintWith(t.color)(st, s) }

func paintWith(color bool) painter {
	if !color {
		return func(_ style, s string) string { return s }
	}
	return func(st style, s string) string {
		if s == "" {
			return s
		}
		return "\x1b[" + string(st) + "m" + s + "\x1b[0m"
	}
}

// renderText prints a bot message: the first line after "countersign:",
// the rest indented. Markdown code fences, which chat platforms draw as a
// block, are dropped and their lines indented a little further.
func renderText(text string, paint painter) string {
	lines := strings.Split(strings.TrimRight(sanitize(text), "\n"), "\n")
	var b strings.Builder
	b.WriteString(paint(cyan, "countersign:"))
	first, inCode := true, false
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inCode = !inCode
			continue
		}
		switch {
		case first:
			b.WriteByte(' ')
			first = false
		case inCode:
			b.WriteString("\n    ")
		default:
			b.WriteString("\n  ")
		}
		b.WriteString(l)
	}
	return b.String()
}

// renderCard draws an approval card as lines framed on the left:
//
//	┌ approval a1b2 · execute_command · risk high
//	│ asked by alice in terminal
//	│     rm -rf ./tmp_*
//	...
//	└ type: approve a1b2  or: cancel a1b2 [reason]
func renderCard(c adapters.Card, paint painter) string {
	var b strings.Builder
	line := func(s string) {
		b.WriteString(paint(dim, "│"))
		if s != "" {
			b.WriteByte(' ')
			b.WriteString(s)
		}
		b.WriteByte('\n')
	}

	head := paint(bold, sanitize("approval "+c.ApprovalID))
	if c.Tool != "" {
		head += " · " + sanitize(c.Tool)
	}
	if c.Risk != "" {
		head += " · risk " + paint(riskStyle(c.Risk), sanitize(c.Risk))
	}
	b.WriteString(paint(dim, "┌") + " " + head + "\n")
	if c.Title != "" {
		line(paint(bold, sanitize(c.Title)))
	}
	if c.Requester != "" || c.Conversation != "" {
		s := "asked by " + orDash(c.Requester)
		if c.Conversation != "" {
			s += " in " + c.Conversation
		}
		line(sanitize(s))
	}
	if c.Operation != "" {
		// Byte for byte, with nothing hidden: no carriage return, escape
		// sequence or bidi override can make the card show something other
		// than what runs.
		op, escaped := adapters.Visible(c.Operation)
		line("")
		for _, l := range strings.Split(op, "\n") {
			line("    " + paint(bold, l))
		}
		line("")
		if escaped {
			line(paint(yellow, `note: the operation holds control or invisible characters, shown above as \xNN or \uNNNN`))
		}
	}
	for i, r := range c.Reasons {
		label := "why: "
		if i > 0 {
			label = "     "
		}
		line(label + sanitize(r))
	}
	if c.LLMLevel != "" {
		line("the model said: " + sanitize(c.LLMLevel))
	}
	if p := c.Preview; p != nil {
		switch {
		case p.Err != "":
			line("preview: none (" + sanitize(p.Err) + ")")
		default:
			s := "preview:"
			if p.Summary != "" {
				s += " " + sanitize(p.Summary)
			}
			line(s)
			for _, it := range p.Items {
				line("  - " + sanitize(it))
			}
			if p.More > 0 {
				line("  … and " + strconv.Itoa(p.More) + " more")
			}
		}
	}
	if c.State == "pending" && !c.ExpiresAt.IsZero() {
		line("expires " + c.ExpiresAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	if c.StateLine != "" {
		line(paint(stateStyle(c.State), "● "+sanitize(c.StateLine)))
	}
	if c.Output != "" {
		for _, l := range strings.Split(strings.TrimRight(sanitize(c.Output), "\n"), "\n") {
			line("    " + l)
		}
	}
	if c.Note != "" {
		line(paint(dim, "("+sanitize(c.Note)+")"))
	}
	var words []string
	for _, bt := range c.Buttons {
		w := bt.Words()
		if bt.Approve {
			w = paint(green, w)
		} else {
			w = paint(yellow, w)
		}
		words = append(words, w)
	}
	if len(words) > 0 {
		b.WriteString(paint(dim, "└") + " type: " + strings.Join(words, "  or: "))
	} else {
		b.WriteString(paint(dim, "└"))
	}
	return b.String()
}

func riskStyle(level string) style {
	switch level {
	case "high":
		return red
	case "medium":
		return yellow
	}
	return green
}

func stateStyle(state string) style {
	switch state {
	case "done":
		return green
	case "failed", "expired", "cancelled":
		return red
	case "pending":
		return yellow
	}
	return cyan
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// sanitize makes text that came from outside (command output, model text,
// names) safe to print: line ends are normalised, then every control,
// invisible or reordering character is escaped (adapters.Visible), so that
// output can neither repaint the screen, reorder a line, nor forge a card.
func sanitize(s string) string {
	out, _ := adapters.Visible(strings.ReplaceAll(s, "\r\n", "\n"))
	return out
}
