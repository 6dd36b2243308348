package discord

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/countersign/countersign/adapters"
)

// Discord's limits on a message
// (https://discord.com/developers/docs/resources/message#create-message,
// .../resources/message#embed-object-embed-limits).
const (
	maxContent     = 2000
	maxTitle       = 256
	maxDescription = 4096
	maxFieldName   = 256
	maxFieldValue  = 1024
	maxFooter      = 2048
	maxEmbedTotal  = 6000
	maxLabel       = 80
	maxCustomID    = 100

	// maxOperation is how much of an operation the card shows inline;
	// a longer one is cut and attached in full.
	maxOperation = 3000
)

// The custom_id of a button or modal: a prefix and the approval id, nothing
// else (the operation is read from the store).
const (
	idApprove = "cs:a:"
	idCancel  = "cs:c:"
	idStop    = "cs:s:"
	idReason  = "cs:r:" // the cancel modal
	reasonKey = "reason"
)

// Embed colours by state.
const (
	colorHigh    = 0xED4245
	colorMedium  = 0xFAA61A
	colorLow     = 0x57F287
	colorRunning = 0x5865F2
	colorDone    = 0x57F287
	colorFailed  = 0xED4245
	colorGrey    = 0x99AAB5
)

// message is a message's wire form for create and edit
// (https://discord.com/developers/docs/resources/message#create-message).
// Embeds, components and attachments are always sent, so an edit clears
// what the new content lacks (the buttons, an old attachment).
type message struct {
	Content         string          `json:"content"`
	Embeds          []embed         `json:"embeds"`
	Components      []component     `json:"components"`
	Attachments     []attachment    `json:"attachments"`
	AllowedMentions allowedMentions `json:"allowed_mentions"`
	Flags           int             `json:"flags,omitempty"`
	// Files are uploaded with the message, as Attachments name them.
	Files []file `json:"-"`
}

type embed struct {
	Title       string  `json:"title,omitempty"`
	Description string  `json:"description,omitempty"`
	Color       int     `json:"color,omitempty"`
	Fields      []field `json:"fields,omitempty"`
	Footer      *footer `json:"footer,omitempty"`
}

type field struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Inline bool   `json:"inline,omitempty"`
}

type footer struct {
	Text string `json:"text"`
}

type component struct {
	Type       int         `json:"type"`
	Style      int         `json:"style,omitempty"`
	Label      string      `json:"label,omitempty"`
	CustomID   string      `json:"custom_id,omitempty"`
	Required   *bool       `json:"required,omitempty"`
	MaxLength  int         `json:"max_length,omitempty"`
	Components []component `json:"components,omitempty"`
}

type attachment struct {
	ID       int    `json:"id"`
	Filename string `json:"filename"`
}

// allowedMentions is always empty: nothing the model or a tool writes may
// ping @everyone, a role or a person.
type allowedMentions struct {
	Parse []string `json:"parse"`
}

type file struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

// Component types and button styles.
const (
	componentRow       = 1
	componentButton    = 2
	componentTextInput = 4
	styleSecondary     = 2
	styleSuccess       = 3
	styleDanger        = 4
	styleParagraph     = 2
)

// render turns content into a Discord message. It is pure: the same
// content always gives the same message, which the golden files hold.
func render(c adapters.Content) message {
	m := message{Embeds: []embed{}, Components: []component{}, Attachments: []attachment{}, AllowedMentions: allowedMentions{Parse: []string{}}}
	if c.Text != "" {
		if utf8.RuneCountInString(c.Text) > maxContent {
			m.Content = cut(c.Text, maxContent-60) + "\n… (cut here: the whole message is attached as message.txt)"
			m.addFile("message.txt", c.Text)
		} else {
			m.Content = c.Text
		}
	}
	if c.Full != "" && c.Full != c.Text {
		note := "\n(the whole output is attached as output.txt)"
		if utf8.RuneCountInString(m.Content)+utf8.RuneCountInString(note) > maxContent {
			m.Content = cut(m.Content, maxContent-utf8.RuneCountInString(note))
		}
		m.Content += note
		m.addFile("output.txt", c.Full)
	}
	if c.Card != nil {
		m.Embeds = append(m.Embeds, m.renderCard(c.Card))
		if row := buttons(c.Card); row != nil {
			m.Components = append(m.Components, *row)
		}
	}
	return m
}

func (m *message) addFile(name, content string) {
	m.Attachments = append(m.Attachments, attachment{ID: len(m.Files), Filename: name})
	m.Files = append(m.Files, file{Name: name, Content: content})
}

func (m *message) renderCard(k *adapters.Card) embed {
	e := embed{
		Title:  cut(orDefault(k.Title, "Approval"), maxTitle),
		Color:  color(k),
		Footer: &footer{Text: cut("approval "+k.ApprovalID, maxFooter)},
	}

	// The operation, byte for byte as adapters.Visible writes it. A
	// code block cannot hold ``` and Discord caps the description, so an
	// operation that has either is shown up to that point, and the whole
	// of it is attached: a person can read every byte that will run.
	op, escaped := adapters.Visible(k.Operation)
	shown, whole := op, true
	if i := strings.Index(shown, "```"); i >= 0 {
		shown, whole = shown[:i], false
	}
	if utf8.RuneCountInString(shown) > maxOperation {
		shown, whole = cut(shown, maxOperation), false
	}
	var d strings.Builder
	d.WriteString("```\n")
	d.WriteString(shown)
	d.WriteString("\n```")
	if !whole {
		d.WriteString("\n**The operation is cut here.** It is attached in full as operation.txt: read it before you decide.")
		m.addFile("operation.txt", op)
	}
	if escaped {
		d.WriteString("\nHidden characters in the operation are shown as escapes (\\xNN, \\uNNNN).")
	}
	e.Description = d.String()

	add := func(name, value string, inline bool) {
		if value == "" {
			return
		}
		e.Fields = append(e.Fields, field{Name: cut(name, maxFieldName), Value: cut(value, maxFieldValue), Inline: inline})
	}
	asked := k.Requester
	if k.Conversation != "" {
		asked += " in " + k.Conversation
	}
	add("Asked by", plain(asked), true)
	add("Tool", plain(k.Tool), true)
	risk := k.Risk
	if k.LLMLevel != "" {
		risk += " (the model said " + k.LLMLevel + ")"
	}
	add("Risk", plain(risk), true)
	var why []string
	for _, r := range k.Reasons {
		why = append(why, "• "+plain(r))
	}
	add("Why", strings.Join(why, "\n"), false)
	if p := k.Preview; p != nil {
		add("Preview", preview(p), false)
	}
	if k.State == "pending" && !k.ExpiresAt.IsZero() {
		ts := strconv.FormatInt(k.ExpiresAt.Unix(), 10)
		add("Expires", "<t:"+ts+":R> (<t:"+ts+":T>)", true)
	}
	add("Status", plain(k.StateLine), false)
	if k.Output != "" || k.Note != "" {
		add("Output", output(k.Output, k.Note, maxFieldValue), false)
	}
	fitTotal(&e, k)
	return e
}

// fitTotal keeps the embed within Discord's 6,000 characters by cutting
// the output, then the preview, then the reasons; never the operation.
func fitTotal(e *embed, k *adapters.Card) {
	for _, name := range []string{"Output", "Preview", "Why"} {
		over := embedSize(e) - maxEmbedTotal
		if over <= 0 {
			return
		}
		for i := range e.Fields {
			f := &e.Fields[i]
			if f.Name != name {
				continue
			}
			room := utf8.RuneCountInString(f.Value) - over
			switch {
			case name == "Output" && room > 40:
				f.Value = output(k.Output, k.Note, room)
			case room > 20:
				f.Value = cut(f.Value, room)
			default:
				f.Value = "(left out: the card is at Discord's size limit)"
			}
		}
	}
}

func embedSize(e *embed) int {
	n := utf8.RuneCountInString(e.Title) + utf8.RuneCountInString(e.Description)
	if e.Footer != nil {
		n += utf8.RuneCountInString(e.Footer.Text)
	}
	for _, f := range e.Fields {
		n += utf8.RuneCountInString(f.Name) + utf8.RuneCountInString(f.Value)
	}
	return n
}

func preview(p *adapters.Preview) string {
	var b strings.Builder
	b.WriteString(plain(p.Summary))
	if len(p.Items) > 0 {
		var items []string
		for _, it := range p.Items {
			items = append(items, codeSafe(it))
		}
		b.WriteString("\n```\n" + cut(strings.Join(items, "\n"), maxFieldValue-200) + "\n```")
	}
	if p.More > 0 {
		b.WriteString("…and " + strconv.Itoa(p.More) + " more")
	}
	if p.Err != "" {
		b.WriteString("\nno preview: " + plain(p.Err))
	}
	return strings.TrimSpace(b.String())
}

// output is a run's output in a code block, its tail when it does not fit
// in limit characters, with the note that says how it was cut.
func output(out, note string, limit int) string {
	var tail string
	if note != "" {
		tail = "\n" + plain(note)
	}
	if out == "" {
		return strings.TrimPrefix(tail, "\n")
	}
	o := codeSafe(out)
	room := limit - len("```\n\n```") - utf8.RuneCountInString(tail)
	if utf8.RuneCountInString(o) > room {
		const more = "…\n"
		o = more + lastRunes(o, room-len(more))
	}
	return "```\n" + o + "\n```" + tail
}

// codeSafe writes s for a code block: hidden characters escaped, and ```
// broken up so that it cannot close the block.
func codeSafe(s string) string {
	v, _ := adapters.Visible(s)
	return strings.ReplaceAll(v, "```", "` ` `")
}

// plain writes text for an embed field: hidden characters escaped.
func plain(s string) string {
	v, _ := adapters.Visible(s)
	return v
}

func buttons(k *adapters.Card) *component {
	if len(k.Buttons) == 0 {
		return nil
	}
	row := component{Type: componentRow}
	for _, b := range k.Buttons {
		c := component{Type: componentButton, Label: cut(orDefault(b.Label, "Cancel"), maxLabel), Style: styleSecondary, CustomID: idCancel + b.Value}
		switch {
		case b.Stop:
			c.Label = cut(orDefault(b.Label, "Stop"), maxLabel)
			c.Style, c.CustomID = styleDanger, idStop+b.Value
		case b.Approve:
			c.Label = cut(orDefault(b.Label, "Approve"), maxLabel)
			c.Style, c.CustomID = styleSuccess, idApprove+b.Value
			if k.Risk == "high" {
				c.Style = styleDanger
			}
		}
		if len(c.CustomID) > maxCustomID {
			// An approval id this long cannot ride on a button; the
			// words still work.
			continue
		}
		row.Components = append(row.Components, c)
	}
	if len(row.Components) == 0 {
		return nil
	}
	return &row
}

// reasonModal asks for the optional reason of a cancel.
func reasonModal(approvalID string) map[string]any {
	no := false
	return map[string]any{
		"custom_id": idReason + approvalID,
		"title":     "Cancel this operation?",
		"components": []component{{Type: componentRow, Components: []component{{
			Type: componentTextInput, CustomID: reasonKey, Style: styleParagraph,
			Label: "Why? (optional)", Required: &no, MaxLength: 500,
		}}}},
	}
}

func color(k *adapters.Card) int {
	switch k.State {
	case "approved", "running":
		return colorRunning
	case "done":
		return colorDone
	case "failed":
		return colorFailed
	case "cancelled", "expired":
		return colorGrey
	}
	switch k.Risk {
	case "high":
		return colorHigh
	case "medium":
		return colorMedium
	}
	return colorLow
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// cut shortens s to at most n characters, ending it with … when cut.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n < 1 {
		return ""
	}
	i, count := 0, 0
	for j := range s {
		if count == n-1 {
			i = j
			break
		}
		count++
	}
	return s[:i] + "…"
}

// lastRunes returns the last n characters of s.
func lastRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	count := utf8.RuneCountInString(s)
	if count <= n {
		return s
	}
	skip := count - n
	for i := range s {
		if skip == 0 {
			return s[i:]
		}
		skip--
	}
	return ""
}
