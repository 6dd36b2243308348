package slack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	slackapi "github.com/slack-go/slack"

	"github.com/countersign/countersign/adapters"
)

// Slack's limits (https://api.slack.com/reference/block-kit).
const (
	maxBlocks      = 50
	maxHeader      = 150   // header text
	maxSection     = 3000  // section and context text
	maxShown       = 2900  // monospace text shown on a card, leaving room
	maxButton      = 75    // button text
	maxConfirmHead = 100   // confirm dialog title
	maxConfirmText = 300   // confirm dialog text
	maxConfirmBtn  = 30    // confirm dialog buttons
	maxMessageText = 39000 // a message's text (Slack cuts at 40,000)
	maxItems       = 20    // preview items listed on a card
)

// attached names the files attached in the thread for a card, "" when none.
type attached struct {
	Operation string
	Output    string
	// Text is a plain message's text, escaped, naming what attachText
	// attached for it.
	Text string
}

// fileName is the name of a card's attachment.
func fileName(kind, approvalID string) string { return kind + "-" + approvalID + ".txt" }

// needsFiles reports which of the card's texts do not fit on it whole.
func needsFiles(c adapters.Card) (op, out bool) {
	v, _ := adapters.Visible(c.Operation)
	op = len(v) > maxShown
	o := visibleOutput(fullOutput(c))
	out = (len(o) > maxShown || c.FullOutput != "") && (c.State == "done" || c.State == "failed")
	return op, out
}

// fullOutput is all of a run's output the card knows: the bot cuts Output
// to what a card shows, and hands the rest over in FullOutput.
func fullOutput(c adapters.Card) string {
	if c.FullOutput != "" {
		return c.FullOutput
	}
	return c.Output
}

// attach uploads, once per approval, what a card cannot show whole: the
// operation (before the card is posted, so that nobody is asked to approve
// bytes they cannot read) and a finished run's output.
func (a *Adapter) attach(ctx context.Context, to adapters.Place, c *adapters.Card) (attached, error) {
	var got attached
	if c == nil {
		return got, nil
	}

	op, out := needsFiles(*c)
	if op {
		v, _ := adapters.Visible(c.Operation)
		name, err := a.upload(ctx, to, "operation", c.ApprovalID, v,
			fmt.Sprintf("The full operation of approval %s (%d characters), exactly as it will run; control and invisible characters are written as \\xNN or \\uNNNN.", c.ApprovalID, utf8.RuneCountInString(v)))
		if err != nil {
			return got, fmt.Errorf("attach the full operation of approval %s, too long for a card: %w", c.ApprovalID, err)
		}
		got.Operation = name
	}
	if out {
		name, err := a.upload(ctx, to, "output", c.ApprovalID, visibleOutput(fullOutput(*c)),
			fmt.Sprintf("The output of approval %s.", c.ApprovalID))
		if err != nil && adapters.Transient(err) {
			return got, fmt.Errorf("attach the output of approval %s: %w", c.ApprovalID, err)
		}
		if err != nil {
			// The card still shows the tail and says the rest is missing.
			a.log.Warn("could not attach a run's full output", "approval", c.ApprovalID, "err", err)
		} else {
			got.Output = name
		}
	}
	return got, nil
}

// attachText attaches what a plain message cannot show: c.Full (the whole
// output behind a cut reply) and a Text longer than a message holds. It
// returns the text to post, which names each file attached. A file that
// cannot be attached fails the post only when Slack is busy (it is then
// retried); otherwise the message says the file is missing.
func (a *Adapter) attachText(ctx context.Context, to adapters.Place, c adapters.Content) (string, error) {
	text := escape(c.Text)
	var notes []string
	add := func(kind, body, comment string) error {
		sum := sha256.Sum256([]byte(body))
		name, err := a.upload(ctx, to, kind, hex.EncodeToString(sum[:6]), body, comment)
		switch {
		case err == nil:
			notes = append(notes, "the whole "+kind+" is attached in this thread as "+name)
		case adapters.Transient(err):
			return err
		default:
			a.log.Warn("could not attach a message's full text", "kind", kind, "err", err)
			notes = append(notes, "the whole "+kind+" could not be attached: ask for it again")
		}
		return nil
	}
	if c.Full != "" && c.Full != c.Text {
		if err := add("output", c.Full, "The whole output behind the message below."); err != nil {
			return "", err
		}
	}
	if len(text) > maxMessageText-200 {
		if err := add("message", c.Text, "The whole of a message too long for Slack."); err != nil {
			return "", err
		}
		text = cutText(text, maxMessageText-200-len(notes)*100)
	}
	if len(notes) > 0 {
		text += "\n_(" + strings.Join(notes, "; ") + ")_"
	}
	return text, nil
}

// upload attaches text as a file in the thread, once per kind and approval.
func (a *Adapter) upload(ctx context.Context, to adapters.Place, kind, id, text, comment string) (string, error) {
	name := fileName(kind, id)
	key := kind + "/" + id
	if a.uploaded.Contains(key) {
		return name, nil
	}
	_, err := a.api.UploadFileContext(ctx, slackapi.UploadFileParameters{
		Filename:        name,
		Title:           name,
		Content:         text,
		FileSize:        len(text),
		Channel:         to.Channel,
		ThreadTimestamp: to.Thread,
		InitialComment:  comment,
	})
	if err != nil {
		return "", slackErr("upload "+name, err)
	}
	a.uploaded.Add(key, struct{}{})
	return name, nil
}

// content is the message options for c: its text, and its card as blocks.
func (a *Adapter) content(c adapters.Content, files attached) []slackapi.MsgOption {
	if c.Card == nil {
		// An explicit empty block list, so that an update from a card to
		// plain text removes the card. files.Text is the text with the
		// names of the files attached for it.
		head := renderMentions(c.Mentions)
		return []slackapi.MsgOption{slackapi.MsgOptionText(head+cutText(files.Text, maxMessageText-len(head)), false), slackapi.MsgOptionBlocks()}
	}
	var bs []slackapi.Block
	if strings.TrimSpace(c.Text) != "" {
		bs = append(bs, mrkdwnSection(cutText(escape(c.Text), maxSection)))
	}
	bs = append(bs, blocks(*c.Card, files)...)
	if len(bs) > maxBlocks {
		bs = bs[:maxBlocks]
	}
	return []slackapi.MsgOption{slackapi.MsgOptionText(fallback(*c.Card), false), slackapi.MsgOptionBlocks(bs...)}
}

// mentionsMax is the room kept for a message's mentions.
const mentionsMax = 1000

// renderMentions renders approver entries as Slack mentions ahead of a message's
// escaped text: a user as <@U…>, a user group as <!subteam^S…>. Only these
// are markup in the message; nothing else in it can ping (its text is
// escaped, and no link_names or parse option is sent).
func renderMentions(entries []string) string {
	var b strings.Builder
	for _, e := range entries {
		kind, id, ok := adapters.Mention(e)
		if !ok || b.Len()+len(id)+16 > mentionsMax {
			continue
		}
		switch kind {
		case "user":
			b.WriteString("<@" + id + "> ")
		case "group":
			b.WriteString("<!subteam^" + id + "> ")
		}
	}
	return b.String()
}

// fallback is a card's notification text.
func fallback(c adapters.Card) string {
	s := "Approval " + c.ApprovalID
	if c.Tool != "" {
		s += " · " + c.Tool
	}
	if c.Risk != "" {
		s += " · risk " + c.Risk
	}
	if c.Title != "" {
		s += ": " + c.Title
	}
	if c.State != "" && c.State != "pending" {
		s += " (" + c.State + ")"
	}
	return cutText(escape(s), maxSection)
}

// blocks renders an approval card as Block Kit, within Slack's limits. It
// is pure: the same card gives the same JSON (see the golden files).
func blocks(c adapters.Card, files attached) []slackapi.Block {
	var bs []slackapi.Block
	title := c.Title
	if title == "" {
		title = "Approval " + c.ApprovalID
	}
	bs = append(bs, slackapi.NewHeaderBlock(plain(cutText(title, maxHeader))))

	who := "Asked by " + person(c.Requester)
	if c.Conversation != "" {
		who += " in " + place(c.Conversation)
	}
	who += " · approval `" + escape(c.ApprovalID) + "`"
	if c.Tool != "" {
		who += " · tool `" + escape(c.Tool) + "`"
	}
	bs = append(bs, contextBlock(who))

	// The operation, in monospace, byte for byte as Visible writes it:
	// rich text preformatted, so no mrkdwn or backtick in it changes what
	// shows.
	op, escaped := adapters.Visible(c.Operation)
	label := "*Operation*" // a finished card promises nothing
	switch c.State {
	case "", "pending", "approved":
		label += " (exactly what will run)"
	case "running":
		label += " (exactly what runs)"
	}
	bs = append(bs, mrkdwnSection(label))
	shown := op
	if len(op) > maxShown {
		shown = cutBytes(op, maxShown)
	}
	bs = append(bs, preformatted(shown))
	if len(op) > maxShown {
		note := fmt.Sprintf(":warning: The operation is %d characters long; the first %d are shown.", utf8.RuneCountInString(op), utf8.RuneCountInString(shown))
		if files.Operation != "" {
			note += " Every byte is in *" + files.Operation + "* in this thread: read it before approving."
		} else {
			note += " The rest could not be attached: do not approve what you have not read."
		}
		bs = append(bs, contextBlock(note))
	}
	if escaped {
		bs = append(bs, contextBlock(`:warning: The operation holds control or invisible characters, shown above as \xNN or \uNNNN.`))
	}

	risk := "*Risk:* " + escape(orDash(c.Risk))
	if c.LLMLevel != "" {
		risk += " · the model said " + escape(c.LLMLevel)
	}
	for _, r := range c.Reasons {
		risk += "\n• " + escape(r)
	}
	bs = append(bs, mrkdwnSection(cutText(risk, maxSection)))

	if p := c.Preview; p != nil {
		switch {
		case p.Err != "":
			bs = append(bs, mrkdwnSection(cutText("*Preview:* none ("+escape(p.Err)+")", maxSection)))
		default:
			bs = append(bs, mrkdwnSection(cutText("*Preview:* "+escape(orDash(p.Summary)), maxSection)))
			items := p.Items
			more := p.More
			if len(items) > maxItems {
				more += len(items) - maxItems
				items = items[:maxItems]
			}
			if len(items) > 0 {
				var list []string
				for _, it := range items {
					v, _ := adapters.Visible(it)
					list = append(list, v)
				}
				bs = append(bs, preformatted(cutBytes(strings.Join(list, "\n"), maxShown)))
			}
			if more > 0 {
				bs = append(bs, contextBlock("… and "+strconv.Itoa(more)+" more"))
			}
		}
	}

	if c.State == "pending" && !c.ExpiresAt.IsZero() {
		utc := c.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC")
		bs = append(bs, contextBlock(fmt.Sprintf("Expires <!date^%d^{date_short_pretty} at {time}|%s>", c.ExpiresAt.Unix(), utc)))
	}
	if c.StateLine != "" {
		bs = append(bs, mrkdwnSection(cutText(stateEmoji(c.State)+" "+escape(c.StateLine), maxSection)))
	}
	if c.Output != "" {
		out := visibleOutput(c.Output)
		if len(out) > maxShown {
			tail := cutTail(out, maxShown)
			bs = append(bs, preformatted(tail))
			note := fmt.Sprintf("The output is %d characters long; the last %d are shown.", utf8.RuneCountInString(out), utf8.RuneCountInString(tail))
			if files.Output != "" {
				note += " All of it is in *" + files.Output + "* in this thread."
			}
			bs = append(bs, contextBlock(note))
		} else {
			bs = append(bs, preformatted(out))
		}
	}
	if c.Note != "" {
		bs = append(bs, contextBlock(cutText(escape(c.Note), maxSection)))
	}
	if len(c.Buttons) > 0 {
		var els []slackapi.BlockElement
		for _, b := range c.Buttons {
			els = append(els, button(c, b))
		}
		bs = append(bs, slackapi.NewActionBlock("countersign_decide", els...))
		if slices.ContainsFunc(c.Buttons, func(b adapters.Button) bool { return !b.Approve && !b.Stop && !b.Edit && !b.Reason }) {
			bs = append(bs, contextBlock("To cancel with a reason, type `cancel "+escape(c.ApprovalID)+" &lt;reason&gt;` in this thread."))
		}
	}
	if len(bs) > maxBlocks {
		bs = bs[:maxBlocks]
	}
	return bs
}

func button(c adapters.Card, b adapters.Button) *slackapi.ButtonBlockElement {
	if b.Edit {
		return editButton(b) // modal.go
	}
	label := b.Label
	if label == "" {
		label = "Cancel"
		if b.Approve {
			label = "Approve"
		}
	}
	if b.Stop {
		if b.Label == "" {
			label = "Stop"
		}
		return slackapi.NewButtonBlockElement(ActionStop, b.Value, plain(cutText(label, maxButton))).WithStyle(slackapi.StyleDanger).
			WithConfirm(slackapi.NewConfirmationBlockObject(
				plain(cutText("Stop "+c.ApprovalID+"?", maxConfirmHead)),
				plain("Its whole process group is killed; what it already did stays done."),
				plain("Stop it"),
				plain("Let it run"),
			))
	}
	if !b.Approve {
		return slackapi.NewButtonBlockElement(reasonAction(ActionCancel, b), b.Value, plain(cutText(label, maxButton))).WithStyle(slackapi.StyleDanger)
	}
	el := slackapi.NewButtonBlockElement(reasonAction(ActionApprove, b), b.Value, plain(cutText(label, maxButton))).WithStyle(slackapi.StylePrimary)
	if c.Risk == "high" {
		op, _ := adapters.Visible(c.Operation)
		text := "This is a high-risk operation: " + op
		el = el.WithConfirm(slackapi.NewConfirmationBlockObject(
			plain(cutText("Approve "+c.ApprovalID+"?", maxConfirmHead)),
			plain(cutText(text, maxConfirmText)),
			plain(cutText("Approve and run", maxConfirmBtn)),
			plain(cutText("Go back", maxConfirmBtn)),
		))
	}
	return el
}

func stateEmoji(state string) string {
	switch state {
	case "pending":
		return ":hourglass_flowing_sand:"
	case "approved":
		return ":ballot_box_with_check:"
	case "running":
		return ":gear:"
	case "done":
		return ":white_check_mark:"
	case "failed":
		return ":x:"
	case "cancelled":
		return ":no_entry_sign:"
	case "expired":
		return ":alarm_clock:"
	}
	return ":information_source:"
}

var userIDRE = regexp.MustCompile(`^[UW][A-Z0-9]{2,}$`)

// person shows a Slack user id as a mention (Slack shows the name), and
// anything else as text.
func person(s string) string {
	if userIDRE.MatchString(s) {
		return "<@" + s + ">"
	}
	return escape(orDash(s))
}

var channelIDRE = regexp.MustCompile(`^C[A-Z0-9]{2,}$`)

// place shows a channel id as a channel link (Slack shows its name), and
// anything else as text.
func place(s string) string {
	if channelIDRE.MatchString(s) {
		return "<#" + s + ">"
	}
	return escape(s)
}

func plain(s string) *slackapi.TextBlockObject {
	return slackapi.NewTextBlockObject(slackapi.PlainTextType, s, false, false)
}

func mrkdwnSection(s string) *slackapi.SectionBlock {
	return slackapi.NewSectionBlock(slackapi.NewTextBlockObject(slackapi.MarkdownType, s, false, false), nil, nil)
}

func contextBlock(s string) *slackapi.ContextBlock {
	return slackapi.NewContextBlock("", slackapi.NewTextBlockObject(slackapi.MarkdownType, cutText(s, maxSection), false, false))
}

func preformatted(s string) *slackapi.RichTextBlock {
	if s == "" {
		s = " "
	}
	return slackapi.NewRichTextBlock("", &slackapi.RichTextPreformatted{
		Type:     slackapi.RTEPreformatted,
		Elements: []slackapi.RichTextSectionElement{slackapi.NewRichTextSectionTextElement(s, nil)},
	})
}

// visibleOutput is a run's output as shown: trailing newlines trimmed, and
// what a screen would hide written as escapes.
func visibleOutput(s string) string {
	v, _ := adapters.Visible(strings.TrimRight(s, "\n"))
	return v
}

// escape writes s for mrkdwn: &, < and > as entities, so that text can
// never ping a channel (<!channel>) or forge a link.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// cutText cuts s to at most max bytes, with an ellipsis when cut.
func cutText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return cutBytes(s, max-len("…")) + "…"
}

// cutBytes returns the longest prefix of s of at most max bytes that ends
// on a character boundary.
func cutBytes(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// cutTail returns the longest suffix of s of at most max bytes that starts
// on a character boundary.
func cutTail(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := len(s) - max
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// idTokenRE finds a user group ("@S0ONCALL") or a person ("@U0BOB")
// written by its id in words the bot composed ("Needs an approval from
// @U0BOB or @S0ONCALL."); not the <@U0BOB> of a ping.
var idTokenRE = regexp.MustCompile(`(?:^|[^<\w])(@([SUW][A-Z0-9]{2,}))\b`)

// named is c with every user group written by its id ("@S0ONCALL")
// written by its handle ("@oncall"), and every person written by their id
// ("@U0BOB") by their name ("bob"), so that people read a name, never an
// id. Only the bot's own words are changed (a card's title, state line
// and reasons; a message's text); a ping is Content.Mentions, apart. An
// id whose name cannot be learnt stays.
func (a *Adapter) named(ctx context.Context, c adapters.Content) adapters.Content {
	names := map[string]string{}
	return adapters.IDNames(c, idTokenRE, func(id string) string {
		n, ok := names[id]
		if !ok {
			if id[0] == 'S' {
				n = a.groups.handle(ctx, id)
			} else {
				n = a.people.name(ctx, id)
			}
			names[id] = n
		}
		return n
	})
}

func editButton(b adapters.Button) *slackapi.ButtonBlockElement {
	label := b.Label
	if label == "" {
		label = "Edit"
	}
	return slackapi.NewButtonBlockElement(ActionEdit, b.Value, plain(cutText(label, maxButton)))
}
