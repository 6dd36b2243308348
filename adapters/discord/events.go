package discord

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/countersign/countersign/adapters"
)

// Event ids: Discord's own snowflakes, the same on every delivery and
// unique across every process, with a prefix saying which kind.
const (
	prefixMessage     = "discord-m-"
	prefixInteraction = "discord-i-"
)

// messageRef is the Reply of a message event.
type messageRef struct {
	Channel, ID string
}

// channelInfo is what the adapter knows of a channel.
type channelInfo struct {
	thread bool
	parent string // a thread's channel
	ours   bool   // a thread the bot started: a conversation
	guild  string // the guild it is in ("" for a DM, or when unknown)
}

// Channel types (https://discord.com/developers/docs/resources/channel#channel-object-channel-types).
const (
	channelDM            = 1
	channelAnnounceThrd  = 10
	channelPublicThread  = 11
	channelPrivateThread = 12
)

func (a *Adapter) onMessage(_ *discordgo.Session, m *discordgo.MessageCreate) {
	if m.Message == nil || m.Author == nil || m.Author.Bot {
		return // bots, the bot itself included, never start a turn
	}
	a.q.push(item{msg: m.Message})
}

// prepare turns a delivery into an event: for a message, it finds or
// starts the conversation's thread. It reports false for a message that is
// not for the bot.
func (a *Adapter) prepare(ctx context.Context, it item) (adapters.Event, bool) {
	if it.ix != nil {
		return a.prepareInteraction(ctx, it.ix)
	}
	m := it.msg
	bot, _ := a.ids()
	if m.Author.ID == bot {
		return adapters.Event{}, false
	}
	e := adapters.Event{
		ID: prefixMessage + m.ID,
		// The gateway delivers at least once: a resume replays, and
		// every replica's session receives every message.
		Redelivered: true,
		Reply:       messageRef{Channel: m.ChannelID, ID: m.ID},
		User:        user(m.Author, m.Member),
	}
	mentioned := mentions(m, bot)
	e.Text = stripMention(m.Content, bot)
	if m.GuildID == "" {
		e.Direct = true
		e.Place = adapters.Place{Channel: m.ChannelID, Thread: m.ChannelID}
		return e, a.hasText(ctx, e, m)
	}
	info := a.channel(ctx, m.ChannelID)
	switch {
	case info.thread && (info.ours || mentioned):
		e.Place = adapters.Place{Channel: info.parent, Thread: m.ChannelID}
	case !info.thread && mentioned:
		e.Place = adapters.Place{Channel: m.ChannelID, Thread: a.startThread(ctx, m.ChannelID, m.ID, e.Text)}
	default:
		return adapters.Event{}, false
	}
	return e, a.hasText(ctx, e, m)
}

// hasText reports whether a message can be read. Without the Message
// Content intent, Discord sends an empty text for a message that does not
// mention the bot: the thread is told, once, to mention it.
func (a *Adapter) hasText(ctx context.Context, e adapters.Event, m *discordgo.Message) bool {
	if strings.TrimSpace(m.Content) != "" || len(m.Attachments) > 0 {
		return true
	}
	a.log.Warn("a message arrived without its text: mention the bot, or enable the Message Content intent and discord.message_content", "channel", m.ChannelID, "message", m.ID)
	a.mu.Lock()
	told := a.told.Contains(e.Place.Thread)
	a.told.Add(e.Place.Thread, struct{}{})
	a.mu.Unlock()
	if !told && !a.cfg.MessageContent {
		// Aside, so that a busy Discord never holds the events behind it.
		go func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			_, err := a.Post(ctx, e.Place, adapters.Content{Text: "I can only read messages that mention me here: start yours with @" + a.botName() + "."})
			if err != nil {
				a.log.Warn("tell the thread to mention the bot", "err", err)
			}
		}()
	}
	return false
}

func (a *Adapter) botName() string {
	if u := a.s.State; u != nil && u.User != nil {
		return u.User.Username
	}
	return "countersign"
}

// startThread starts a thread from the message that started a
// conversation and returns its id (Discord gives a thread started from a
// message that message's id). A thread that exists already (a redelivery,
// or another replica was first) is used as it is; a thread that cannot be
// started leaves the conversation in the channel itself.
func (a *Adapter) startThread(ctx context.Context, channel, msgID, text string) string {
	name := strings.Join(strings.Fields(text), " ")
	if name == "" {
		name = "countersign"
	}
	var out struct {
		ID string `json:"id"`
	}
	err := a.api.do(ctx, http.MethodPost, "/channels/"+channel+"/messages/"+msgID+"/threads",
		map[string]any{"name": cut(name, 100), "auto_archive_duration": 1440}, nil, &out)
	switch {
	case err == nil:
	case isCode(err, codeThreadExists):
		out.ID = msgID
	default:
		a.log.Error("start a thread for the conversation; answering in the channel instead: give the bot Create Public Threads and Send Messages in Threads", "channel", channel, "err", err)
		return channel
	}
	if out.ID == "" {
		out.ID = msgID
	}
	a.channels.Add(out.ID, channelInfo{thread: true, parent: channel, ours: true})
	return out.ID
}

// channel finds what a channel is, once; a channel that cannot be read is
// taken for a plain channel.
func (a *Adapter) channel(ctx context.Context, id string) channelInfo {
	if info, ok := a.channels.Get(id); ok {
		return info
	}
	var ch struct {
		Type     int    `json:"type"`
		ParentID string `json:"parent_id"`
		OwnerID  string `json:"owner_id"`
		GuildID  string `json:"guild_id"`
	}
	if err := a.api.do(ctx, http.MethodGet, "/channels/"+id, nil, nil, &ch); err != nil {
		a.log.Warn("read a channel; taking it for a plain channel", "channel", id, "err", err)
		return channelInfo{}
	}
	bot, _ := a.ids()
	info := channelInfo{guild: ch.GuildID}
	switch ch.Type {
	case channelAnnounceThrd, channelPublicThread, channelPrivateThread:
		info = channelInfo{thread: true, parent: ch.ParentID, ours: ch.OwnerID == bot, guild: ch.GuildID}
	}
	a.channels.Add(id, info)
	return info
}

// place is where an interaction in channel happened.
func (a *Adapter) place(ctx context.Context, guild, channel string) adapters.Place {
	if guild == "" {
		return adapters.Place{Channel: channel, Thread: channel}
	}
	if info := a.channel(ctx, channel); info.thread {
		return adapters.Place{Channel: info.parent, Thread: channel}
	}
	return adapters.Place{Channel: channel, Thread: channel}
}

func mentions(m *discordgo.Message, bot string) bool {
	if bot == "" {
		return false
	}
	for _, u := range m.Mentions {
		if u != nil && u.ID == bot {
			return true
		}
	}
	return strings.Contains(m.Content, "<@"+bot+">") || strings.Contains(m.Content, "<@!"+bot+">")
}

func stripMention(s, bot string) string {
	if bot != "" {
		s = strings.ReplaceAll(s, "<@"+bot+">", "")
		s = strings.ReplaceAll(s, "<@!"+bot+">", "")
	}
	return strings.TrimSpace(s)
}

// user is the person behind a message or an interaction, with their roles
// in the guild (ids: approvers name roles as role:<id>).
func user(u *discordgo.User, m *discordgo.Member) adapters.User {
	if u == nil && m != nil {
		u = m.User
	}
	var out adapters.User
	if u != nil {
		out.ID = u.ID
		out.Name = u.Username
		if u.GlobalName != "" {
			out.Name = u.GlobalName
		}
	}
	if m != nil {
		if m.Nick != "" {
			out.Name = m.Nick
		}
		out.Roles = append([]string(nil), m.Roles...)
	}
	return out
}
