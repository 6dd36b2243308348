package ops

import (
	"strings"

	"github.com/countersign/countersign/approval"
)

// otherChannel is the label of the spend of every channel not named.
const otherChannel = "other"

// SpendChannels names the channels whose spend countersign_channel_tokens_total
// counts apart, each "platform:channel" or a bare channel id of any
// platform (the keys of bot.channels), and starts their series at zero.
// The spend of every other channel is counted as "other": the bot answers
// in any channel it is invited to and in every direct conversation, so a
// label per channel seen would grow without bound.
func (m *Metrics) SpendChannels(names []string) {
	m.spendNames = names
	for _, n := range names {
		if strings.Contains(n, ":") {
			m.spend.WithLabelValues(n)
		}
	}
}

// spent counts tokens added under key, when key is a channel's day
// (approval.ChannelDayKey): every model call of a turn adds there once.
func (m *Metrics) spent(key string, tokens int64) {
	ch, ok := approval.SpendChannel(key)
	if !ok {
		return
	}
	m.spend.WithLabelValues(m.channelLabel(ch)).Add(float64(tokens))
}

// channelLabel is the label of "platform:channel": itself when
// SpendChannels named it, or named its channel id bare; else "other".
func (m *Metrics) channelLabel(ch string) string {
	_, id, _ := strings.Cut(ch, ":")
	for _, n := range m.spendNames {
		if n == ch || n == id {
			return ch
		}
	}
	return otherChannel
}
