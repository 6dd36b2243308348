package discordtest

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Components V2 as Discord checks it
// (https://discord.com/developers/docs/components/reference): a message
// flagged IS_COMPONENTS_V2 has no content and no embeds, at most 40
// components (nested ones counted) and 4,000 characters of text in its
// text displays; only layout components sit at the top; an action row
// holds at most 5 buttons; a file component shows an attachment of the
// message; and once a message has the flag, an edit cannot take it away.

// FlagComponentsV2 is IS_COMPONENTS_V2.
const FlagComponentsV2 = 1 << 15

// Component types.
const (
	TypeRow         = 1
	TypeButton      = 2
	TypeSection     = 9
	TypeTextDisplay = 10
	TypeThumbnail   = 11
	TypeGallery     = 12
	TypeFile        = 13
	TypeSeparator   = 14
	TypeContainer   = 17
)

func (p payload) checkV2() string {
	if p.Content != nil {
		return "content: cannot be sent with IS_COMPONENTS_V2, even empty"
	}
	if p.Embeds != nil {
		return "embeds: cannot be sent with IS_COMPONENTS_V2"
	}
	if p.Components == nil || len(*p.Components) == 0 {
		return "components: a IS_COMPONENTS_V2 message needs at least one component"
	}
	names := map[string]bool{}
	if p.Attachments != nil {
		for _, a := range *p.Attachments {
			names[a.Filename] = true
		}
	}
	var total, text int
	for _, c := range *p.Components {
		switch c.Type {
		case TypeRow, TypeSection, TypeTextDisplay, TypeGallery, TypeFile, TypeSeparator, TypeContainer:
		default:
			return "components: type " + strconv.Itoa(c.Type) + " cannot be at the top of a message"
		}
		if msg := checkComponent(c, false, names, &total, &text); msg != "" {
			return msg
		}
	}
	if total > 40 {
		return "components: " + strconv.Itoa(total) + " components, over 40"
	}
	if text > 4000 {
		return "components: text displays hold " + strconv.Itoa(text) + " characters, over 4000"
	}
	return ""
}

func checkComponent(c Component, inContainer bool, names map[string]bool, total, text *int) string {
	*total++
	switch c.Type {
	case TypeContainer:
		if inContainer {
			return "components: a container cannot hold a container"
		}
		if len(c.Components) == 0 {
			return "components: an empty container"
		}
		if c.AccentColor != nil && (*c.AccentColor < 0 || *c.AccentColor > 0xFFFFFF) {
			return "components: accent_color out of range"
		}
		for _, x := range c.Components {
			switch x.Type {
			case TypeRow, TypeSection, TypeTextDisplay, TypeGallery, TypeFile, TypeSeparator:
			default:
				return "components: type " + strconv.Itoa(x.Type) + " cannot be in a container"
			}
			if msg := checkComponent(x, true, names, total, text); msg != "" {
				return msg
			}
		}
	case TypeRow:
		if len(c.Components) == 0 || len(c.Components) > 5 {
			return "components: an action row holds 1 to 5 buttons"
		}
		for _, b := range c.Components {
			if b.Type != TypeButton {
				return "components: an action row here holds buttons"
			}
			*total++
			if utf8.RuneCountInString(b.Label) > 80 || len(b.CustomID) > 100 || b.CustomID == "" {
				return "components: label over 80 or custom_id empty or over 100"
			}
		}
	case TypeTextDisplay:
		if c.Content == "" {
			return "components: a text display needs content"
		}
		*text += utf8.RuneCountInString(c.Content)
	case TypeSection:
		if len(c.Components) == 0 || len(c.Components) > 3 || c.Accessory == nil {
			return "components: a section holds 1 to 3 text displays and an accessory"
		}
		for _, x := range c.Components {
			if x.Type != TypeTextDisplay {
				return "components: a section holds text displays"
			}
			if msg := checkComponent(x, true, names, total, text); msg != "" {
				return msg
			}
		}
		*total++
	case TypeFile:
		if c.File == nil || !strings.HasPrefix(c.File.URL, "attachment://") || !names[strings.TrimPrefix(c.File.URL, "attachment://")] {
			return "components: a file component must name an attachment of the message (attachment://<filename>)"
		}
	case TypeSeparator, TypeGallery:
	}
	return ""
}

// editV2 checks an edit against the message it edits: IS_COMPONENTS_V2,
// once set, stays, and such a message takes no content or embeds.
func (m *Message) editV2(p payload) string {
	if m.Flags&FlagComponentsV2 == 0 {
		if p.Flags&FlagComponentsV2 != 0 {
			// Turning V2 on in an edit: the content and embeds must go.
			if (p.Content == nil && m.Content != "") || (p.Embeds == nil && len(m.Embeds) > 0) {
				return "flags: IS_COMPONENTS_V2 needs the message's content and embeds removed"
			}
			m.Flags |= FlagComponentsV2
			m.Content, m.Embeds = "", nil
		}
		return ""
	}
	if p.Content != nil || p.Embeds != nil {
		return "content, embeds: cannot be used with IS_COMPONENTS_V2 (the message has the flag; it cannot be removed)"
	}
	return ""
}

// Text is what a person reads of a message: its content, its embeds and
// its text displays, in order.
func Text(m Message) string {
	var b strings.Builder
	add := func(s string) {
		if s != "" {
			b.WriteString(s + "\n")
		}
	}
	add(m.Content)
	for _, e := range m.Embeds {
		add(e.Title)
		add(e.Description)
		for _, f := range e.Fields {
			add(f.Name + ": " + f.Value)
		}
		if e.Footer != nil {
			add(e.Footer.Text)
		}
	}
	var walk func([]Component)
	walk = func(cs []Component) {
		for _, c := range cs {
			if c.Type == TypeTextDisplay {
				add(c.Content)
			}
			walk(c.Components)
		}
	}
	walk(m.Components)
	return b.String()
}

// Buttons are the message's buttons, wherever they sit (an action row at
// the top, in a container, a section's accessory).
func Buttons(m Message) []Component {
	var out []Component
	var walk func([]Component)
	walk = func(cs []Component) {
		for _, c := range cs {
			if c.Type == TypeButton {
				out = append(out, c)
			}
			if c.Accessory != nil && c.Accessory.Type == TypeButton {
				out = append(out, *c.Accessory)
			}
			walk(c.Components)
		}
	}
	walk(m.Components)
	return out
}

// Accent is the colour of the message's first container, -1 for none.
func Accent(m Message) int {
	for _, c := range m.Components {
		if c.Type == TypeContainer && c.AccentColor != nil {
			return *c.AccentColor
		}
	}
	return -1
}
