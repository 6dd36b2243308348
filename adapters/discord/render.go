package discord

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/countersign/countersign/adapters"
)

// Discord's limits on a message
// (https://discord.com/developers/docs/resources/message#create-message,
// https://discord.com/developers/docs/components/reference).
const (
	maxContent  = 2000
	maxLabel    = 80
	maxCustomID = 100
	// maxTextV2 is the total of every text display's content in one
	// Components V2 message; maxComponentsV2 the number of components,
	// nested ones counted; maxRowButtons the buttons in one action row.
	maxTextV2       = 4000
	maxComponentsV2 = 40
	maxRowButtons   = 5

	// maxOperation is how much of an operation the card shows inline;
	// a longer one is cut and attached in full.
	maxOperation = 2000
	// maxCardText is how much of a message's text goes above a card.
	maxCardText = 1000
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
// Components and attachments are always sent, so an edit clears what the
// new content lacks (the buttons, an old attachment); so are content and
// embeds, except in a Components V2 message, which may have neither.
type message struct {
	Content         string          `json:"content"`
	Embeds          []struct{}      `json:"embeds"` // always empty: cards are Components V2
	Components      []component     `json:"components"`
	Attachments     []attachment    `json:"attachments"`
	AllowedMentions allowedMentions `json:"allowed_mentions"`
	Flags           int             `json:"flags,omitempty"`
	// Files are uploaded with the message, as Attachments name them.
	Files []file `json:"-"`
}

// MarshalJSON leaves content and embeds out of a Components V2 message:
// Discord refuses them there, even empty.
func (m message) MarshalJSON() ([]byte, error) {
	type plain message
	var v any = plain(m)
	if m.Flags&flagComponentsV2 != 0 {
		v = struct {
			Components      []component     `json:"components"`
			Attachments     []attachment    `json:"attachments"`
			AllowedMentions allowedMentions `json:"allowed_mentions"`
			Flags           int             `json:"flags"`
		}{m.Components, m.Attachments, m.AllowedMentions, m.Flags}
	}
	// Written as typed (<t:…:R> stays readable); Discord reads either.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// flagComponentsV2 is IS_COMPONENTS_V2: the message is made of
// components (containers, text displays) and has no content or embeds.
const flagComponentsV2 = int(discordgo.MessageFlagsIsComponentsV2)

// component is a message component: an action row, a button, a text
// input, and the layout components of Components V2 (container, text
// display, separator, file).
type component struct {
	Type      int    `json:"type"`
	Style     int    `json:"style,omitempty"`
	Label     string `json:"label,omitempty"`
	CustomID  string `json:"custom_id,omitempty"`
	Required  *bool  `json:"required,omitempty"`
	MaxLength int    `json:"max_length,omitempty"`
	// Value is a text input's initial text.
	Value string `json:"value,omitempty"`
	// Content is a text display's markdown.
	Content string `json:"content,omitempty"`
	// AccentColor is a container's colour bar.
	AccentColor *int `json:"accent_color,omitempty"`
	// Divider and Spacing shape a separator.
	Divider *bool `json:"divider,omitempty"`
	Spacing int   `json:"spacing,omitempty"`
	// File is a file component's attachment ("attachment://name").
	File       *media      `json:"file,omitempty"`
	Components []component `json:"components,omitempty"`
}

type media struct {
	URL string `json:"url"`
}

type attachment struct {
	ID       int    `json:"id"`
	Filename string `json:"filename"`
}

// allowedMentions is always empty: nothing the model or a tool writes may
// ping @everyone, a role or a person.
type allowedMentions struct {
	Parse []string `json:"parse"`
	Users []string `json:"users,omitempty"`
	Roles []string `json:"roles,omitempty"`
}

type file struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

// Component types (discordgo's numbers) and button styles.
const (
	componentRow         = int(discordgo.ActionsRowComponent)
	componentButton      = int(discordgo.ButtonComponent)
	componentTextInput   = int(discordgo.TextInputComponent)
	componentTextDisplay = int(discordgo.TextDisplayComponent)
	componentFile        = int(discordgo.FileComponentType)
	componentSeparator   = int(discordgo.SeparatorComponent)
	componentContainer   = int(discordgo.ContainerComponent)
	styleSecondary       = 2
	styleSuccess         = 3
	styleDanger          = 4
	styleParagraph       = 2
)

// render turns content into a Discord message. It is pure: the same
// content always gives the same message, which the golden files hold. A
// card is a Components V2 message (renderCard); text alone is a plain
// message.
func render(c adapters.Content) message {
	m := message{Embeds: []struct{}{}, Components: []component{}, Attachments: []attachment{}, AllowedMentions: allowedMentions{Parse: []string{}}}
	if c.Card != nil {
		m.renderCard(c)
		return m
	}
	head := m.mention(c.Mentions)
	m.Content = head + m.text(c, maxContent-utf8.RuneCountInString(head))
	return m
}

// mention renders approver entries as Discord mentions ahead of a
// message's text (a user as <@id>, a role as <@&id>) and lets exactly
// those ping: allowed_mentions parses nothing and names only them, so no
// mention in the text itself notifies anyone.
func (m *message) mention(entries []string) string {
	var b strings.Builder
	for _, e := range entries {
		kind, id, ok := adapters.Mention(e)
		if !ok || len(m.AllowedMentions.Users)+len(m.AllowedMentions.Roles) >= 100 {
			continue // Discord allows 100 of each; far more than a reminder names
		}
		switch kind {
		case "user":
			if !slices.Contains(m.AllowedMentions.Users, id) {
				m.AllowedMentions.Users = append(m.AllowedMentions.Users, id)
				b.WriteString("<@" + id + "> ")
			}
		case "role":
			if !slices.Contains(m.AllowedMentions.Roles, id) {
				m.AllowedMentions.Roles = append(m.AllowedMentions.Roles, id)
				b.WriteString("<@&" + id + "> ")
			}
		}
	}
	return b.String()
}

// text is c's text cut to limit characters (never leaving a code fence
// open), with message.txt and output.txt attached as c needs.
func (m *message) text(c adapters.Content, limit int) string {
	var out string
	if c.Text != "" {
		if utf8.RuneCountInString(c.Text) > limit {
			out = cutFenced(c.Text, limit-60) + "\n… (cut here: the whole message is attached as message.txt)"
			m.addFile("message.txt", c.Text)
		} else {
			out = c.Text
		}
	}
	if c.Full != "" && c.Full != c.Text {
		note := "\n(the whole output is attached as output.txt)"
		if utf8.RuneCountInString(out)+utf8.RuneCountInString(note) > limit {
			out = cutFenced(out, limit-utf8.RuneCountInString(note))
		}
		out += note
		m.addFile("output.txt", c.Full)
	}
	return out
}

// renderTextV2 renders text alone as a Components V2 message, for the
// edit of a message that is already one (a card's).
func renderTextV2(c adapters.Content) message {
	m := message{Components: []component{}, Attachments: []attachment{}, AllowedMentions: allowedMentions{Parse: []string{}}, Flags: flagComponentsV2}
	t := m.text(c, maxTextV2)
	if t == "" {
		t = "\u200b" // a text display needs content
	}
	m.Components = append(m.Components, textDisplay(t))
	for _, f := range m.Files {
		m.Components = append(m.Components, component{Type: componentFile, File: &media{URL: "attachment://" + f.Name}})
	}
	return m
}

// cutFenced is cut that never leaves a code fence open: when the cut
// falls inside a ``` block, the block is closed within n characters.
func cutFenced(s string, n int) string {
	r := cut(s, n)
	if strings.Count(r, "```")%2 == 0 {
		return r
	}
	r = cut(s, n-4)
	if strings.Count(r, "```")%2 == 1 {
		r += "\n```"
	}
	return r
}

func (m *message) addFile(name, content string) {
	m.Attachments = append(m.Attachments, attachment{ID: len(m.Files), Filename: name})
	m.Files = append(m.Files, file{Name: name, Content: content})
}

// renderCard renders a card as a Components V2 message: the content's
// text on top, then one container whose accent colour is the state, with
// the title, who asked, the operation in a code block, the reasons, the
// preview, the state, the output, the attached files and the buttons.
func (m *message) renderCard(c adapters.Content) {
	k := c.Card
	m.Flags = flagComponentsV2
	m.Embeds = nil
	if t := m.text(c, maxCardText); t != "" {
		m.Components = append(m.Components, textDisplay(t))
	}
	var parts []component
	add := func(s string) {
		if s != "" {
			parts = append(parts, textDisplay(s))
		}
	}
	add("### " + plain(cutFenced(orDefault(k.Title, "Approval"), 256)))
	var facts []string
	if asked := plain(k.Requester); asked != "" {
		if k.Conversation != "" {
			asked += " in " + plain(k.Conversation)
		}
		facts = append(facts, "Asked by **"+asked+"**")
	}
	if k.Tool != "" {
		facts = append(facts, "Tool **"+plain(k.Tool)+"**")
	}
	if k.Risk != "" {
		risk := "Risk **" + plain(k.Risk) + "**"
		if k.LLMLevel != "" {
			risk += " (the model said " + plain(k.LLMLevel) + ")"
		}
		facts = append(facts, risk)
	}
	add(strings.Join(facts, " · "))

	// The operation, byte for byte as adapters.Visible writes it. A
	// code block cannot hold ```, so an operation that has one, or is too
	// long to show, is shown up to that point, and the whole of it is
	// attached: a person can read every byte that will run.
	op, escaped := adapters.Visible(k.Operation)
	shown, whole := op, true
	if i := strings.Index(shown, "```"); i >= 0 {
		shown, whole = shown[:i], false
	}
	if utf8.RuneCountInString(shown) > maxOperation {
		shown, whole = cut(shown, maxOperation), false
	}
	opText := "```\n" + shown + "\n```"
	if !whole {
		opText += "\n**The operation is cut here.** It is attached in full as operation.txt: read it before you decide."
		m.addFile("operation.txt", op)
	}
	if escaped {
		opText += "\nHidden characters in the operation are shown as escapes (\\xNN, \\uNNNN)."
	}
	add(opText)

	var why []string
	for _, r := range k.Reasons {
		why = append(why, "• "+plain(r))
	}
	whyAt := len(parts)
	if len(why) > 0 {
		add("**Why**\n" + strings.Join(why, "\n"))
	}
	previewAt := len(parts)
	if p := k.Preview; p != nil {
		add("**Preview**\n" + preview(p))
	}
	if k.State == "pending" && !k.ExpiresAt.IsZero() {
		ts := strconv.FormatInt(k.ExpiresAt.Unix(), 10)
		add("**Expires** <t:" + ts + ":R> (<t:" + ts + ":T>)")
	}
	if k.StateLine != "" || k.Output != "" || k.Note != "" {
		yes := true
		parts = append(parts, component{Type: componentSeparator, Divider: &yes, Spacing: 1})
	}
	if k.StateLine != "" {
		add("**Status** " + plain(k.StateLine))
	}
	outputAt := len(parts)
	if k.Output != "" || k.Note != "" {
		add("**Output**\n" + output(k.Output, k.Note, 1500))
	}
	for _, f := range m.Files {
		parts = append(parts, component{Type: componentFile, File: &media{URL: "attachment://" + f.Name}})
	}
	if row := buttons(k); row != nil {
		parts = append(parts, *row)
	}
	add("-# approval " + plain(k.ApprovalID))
	accent := color(k)
	m.Components = append(m.Components, component{Type: componentContainer, AccentColor: &accent, Components: parts})
	m.fitV2(k, outputAt, previewAt, whyAt)
}

func textDisplay(s string) component { return component{Type: componentTextDisplay, Content: s} }

// fitV2 keeps the text within Discord's 4,000 characters by cutting the
// output, then the preview, then the reasons; never the operation.
func (m *message) fitV2(k *adapters.Card, outputAt, previewAt, whyAt int) {
	box := &m.Components[len(m.Components)-1].Components
	for _, at := range []int{outputAt, previewAt, whyAt} {
		over := textSize(m.Components) - maxTextV2
		if over <= 0 {
			return
		}
		if at >= len(*box) || (*box)[at].Type != componentTextDisplay {
			continue
		}
		td := &(*box)[at]
		head, _, _ := strings.Cut(td.Content, "\n")
		room := utf8.RuneCountInString(td.Content) - over - utf8.RuneCountInString(head) - 1
		switch {
		case at == outputAt && room > 40:
			td.Content = head + "\n" + output(k.Output, k.Note, room)
		case room > 20:
			td.Content = cutFenced(td.Content, utf8.RuneCountInString(td.Content)-over)
		default:
			td.Content = head + "\n(left out: the card is at Discord's size limit)"
		}
	}
}

// textSize is the characters of every text display in cs, nested ones
// counted, as Discord counts them against maxTextV2.
func textSize(cs []component) int {
	n := 0
	for _, c := range cs {
		n += utf8.RuneCountInString(c.Content) + textSize(c.Components)
	}
	return n
}

// countComponents counts cs and every component nested in them.
func countComponents(cs []component) int {
	n := len(cs)
	for _, c := range cs {
		n += countComponents(c.Components)
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
		b.WriteString("\n```\n" + cut(strings.Join(items, "\n"), 800) + "\n```")
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
		if b.Edit {
			row.Components = append(row.Components, editComponent(b)) // modal.go
			continue
		}
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
		c.CustomID = reasonButton(b, c.CustomID) // modal.go
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
	if len(row.Components) > maxRowButtons {
		row.Components = row.Components[:maxRowButtons]
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
