package bot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/tools"
)

// stamp is how cards write a time.
const stamp = "15:04:05 UTC"

// card renders an approval as the platform-neutral card; p is the live
// progress of a running call, or nil. now is the time of drawing, for the
// running time.
func card(a *approval.Approval, p *tools.Progress, now time.Time, outputCap int) adapters.Card {
	c := adapters.Card{
		ApprovalID:   a.ID,
		Title:        title(a.Tool),
		Requester:    who(a.Requester),
		Conversation: a.Conversation.Channel,
		Tool:         a.Tool,
		Operation:    operation(a.Tool, a.Args),
		Risk:         string(a.Verdict.Risk),
		Reasons:      a.Verdict.Reasons,
		LLMLevel:     string(a.Verdict.LLMLevel),
		ExpiresAt:    a.ExpiresAt,
		State:        string(a.State),
	}
	if c.Risk == "" {
		c.Risk = "unknown"
	}
	if pv := a.Preview; pv != nil {
		c.Preview = &adapters.Preview{Summary: pv.Summary, Items: pv.Items, Err: pv.Err}
		if pv.Total > len(pv.Items) {
			c.Preview.More = pv.Total - len(pv.Items)
		}
		if pv.Truncated && c.Preview.More == 0 && pv.Err == "" {
			c.Preview.Summary = strings.TrimSpace(c.Preview.Summary + " (list cut short)")
		}
	}

	decided := ""
	if a.DecidedBy != nil {
		decided = " by " + who(*a.DecidedBy)
	}
	at := ""
	if !a.DecidedAt.IsZero() {
		at = " at " + a.DecidedAt.UTC().Format(stamp)
	}
	switch a.State {
	case approval.Pending:
		c.StateLine = "waiting for a decision"
		c.Buttons = []adapters.Button{
			{Label: "Approve", Approve: true, Value: a.ID},
			{Label: "Cancel", Value: a.ID},
		}
	case approval.Approved:
		c.StateLine = "approved" + decided + at + " · starting"
	case approval.Running:
		c.StateLine = "approved" + decided + at + " · running"
		var elapsed time.Duration
		if p != nil {
			elapsed = time.Duration(p.ElapsedMS) * time.Millisecond
			c.Output, c.Note = capOutput(p.Tail, outputCap, "")
		} else if !a.StartedAt.IsZero() {
			elapsed = now.Sub(a.StartedAt)
		}
		if elapsed > 0 {
			c.StateLine += " for " + elapsed.Round(time.Second).String()
		}
	case approval.Done, approval.Failed:
		c.StateLine = "approved" + decided + at + " · " + outcome(a)
		if a.Result != nil {
			c.Output, c.Note = capOutput(output(*a.Result), outputCap, a.Result.Note)
		}
	case approval.Cancelled:
		c.StateLine = "cancelled" + decided + at
		if a.Reason != "" {
			c.StateLine += ": " + a.Reason
		}
	case approval.Expired:
		c.StateLine = "expired" + at + ": nobody decided in time"
	default:
		c.StateLine = string(a.State)
	}
	return c
}

// who names a person on a card: the display name with the platform id when
// they differ ("Alice (U0123)"), since a display name alone is whatever
// someone chose to be called.
func who(u approval.User) string {
	if u.Name == "" || u.Name == u.ID || u.ID == "" {
		return u.Display()
	}
	return u.Name + " (" + u.ID + ")"
}

func title(tool string) string {
	switch tool {
	case "execute_command":
		return "Run this command?"
	case "execute_sql":
		return "Run this SQL?"
	case "file_operations":
		return "Do this file operation?"
	case "http_request":
		return "Send this HTTP request?"
	}
	return "Run " + tool + "?"
}

// operation writes the exact operation of a call, as it will run: the
// command line or the statement byte for byte, with the other arguments on
// lines of their own.
func operation(tool string, raw json.RawMessage) string {
	var args map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&args); err != nil || args == nil {
		return string(raw)
	}
	str := func(k string) string { s, _ := args[k].(string); return s }
	var b strings.Builder
	used := map[string]bool{"risk_level": true}
	switch tool {
	case "execute_command":
		b.WriteString(str("command"))
		used["command"] = true
	case "execute_sql":
		b.WriteString(str("sql"))
		used["sql"] = true
	case "file_operations":
		b.WriteString(str("operation") + " " + str("path"))
		used["operation"], used["path"], used["content"] = true, true, true
		if c, ok := args["content"].(string); ok {
			shown, cut := tools.CapText(c, 500)
			fmt.Fprintf(&b, "\n--- content, %d bytes", len(c))
			if cut {
				b.WriteString(", first 500 shown")
			}
			b.WriteString(" ---\n" + shown)
		}
	case "http_request":
		b.WriteString(strings.ToUpper(str("method")) + " " + str("url"))
		used["method"], used["url"], used["headers"], used["body"] = true, true, true, true
		if h, ok := args["headers"].(map[string]any); ok {
			for _, k := range sortedKeys(h) {
				fmt.Fprintf(&b, "\n%s: %v", k, h[k])
			}
		}
		if body := str("body"); body != "" {
			shown, cut := tools.CapText(body, 500)
			b.WriteString("\n\n" + shown)
			if cut {
				// Never let a tail the approver cannot see pass for the whole.
				fmt.Fprintf(&b, "\n--- body cut: the first %d of %d bytes are shown ---", len(shown), len(body))
			}
		}
	default:
		compact, err := json.Marshal(args)
		if err != nil {
			return string(raw)
		}
		return string(compact)
	}
	for _, k := range sortedKeys(args) {
		if !used[k] {
			fmt.Fprintf(&b, "\n(%s: %v)", k, args[k])
		}
	}
	return b.String()
}

// outcome says how a finished run ended: "done: exit code 0 in 12ms".
func outcome(a *approval.Approval) string {
	word := "done"
	if a.State == approval.Failed {
		word = "failed"
	}
	r := a.Result
	if r == nil {
		return word
	}
	var parts []string
	switch {
	case r.ExitCode != nil:
		parts = append(parts, "exit code "+strconv.Itoa(*r.ExitCode))
	case r.RowsAffected != nil:
		parts = append(parts, plural(int(*r.RowsAffected), "row")+" affected")
	case r.RowCount != nil:
		parts = append(parts, plural(*r.RowCount, "row"))
	case r.HTTPStatus != 0:
		parts = append(parts, "HTTP "+strconv.Itoa(r.HTTPStatus))
	}
	if r.Error != "" {
		parts = append(parts, r.Error)
	}
	s := word
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, ", ")
	}
	d := time.Duration(r.DurationMS) * time.Millisecond
	if d == 0 && !a.StartedAt.IsZero() && !a.EndedAt.IsZero() {
		d = a.EndedAt.Sub(a.StartedAt)
	}
	return s + " in " + d.String()
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// output is what a result shows as text: the command's output, the rows,
// the body, the file.
func output(r tools.Result) string {
	var b strings.Builder
	add := func(s string) {
		if s == "" {
			return
		}
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(s)
	}
	add(r.Stdout)
	if r.Stderr != "" {
		add("stderr:\n" + r.Stderr)
	}
	if len(r.Columns) > 0 {
		names := make([]string, len(r.Columns))
		for i, c := range r.Columns {
			names[i] = c.Name
		}
		add(strings.Join(names, "\t"))
		for _, row := range r.Rows {
			cells := make([]string, len(row))
			for i, v := range row {
				cells[i] = cell(v)
			}
			add(strings.Join(cells, "\t"))
		}
	}
	add(r.Body)
	add(r.Content)
	if len(r.Data) > 0 && r.Content == "" {
		add(string(r.Data))
	}
	return b.String()
}

func cell(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case string:
		return v
	case []byte:
		return string(v)
	}
	return fmt.Sprint(v)
}

// capOutput cuts s to limit bytes at a line or rune boundary and says so;
// toolNote is the tool's own note about its cap, kept.
func capOutput(s string, limit int, toolNote string) (shown, note string) {
	shown, cut := tools.CapText(s, limit)
	var notes []string
	if toolNote != "" {
		notes = append(notes, toolNote)
	}
	if cut {
		notes = append(notes, fmt.Sprintf("output cut to the first %d of %d bytes on this card", len(shown), len(s)))
	}
	return shown, strings.Join(notes, "; ")
}
