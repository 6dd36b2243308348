package ops

import (
	"context"
	"testing"
	"time"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/memstore"
)

// TestSpendByChannel: the tokens added to a channel's day count under
// that channel when bot.channels names it (bare or with its platform),
// under "other" when not, and a conversation's total counts nowhere (it
// is the same spend again).
func TestSpendByChannel(t *testing.T) {
	m := NewMetrics(nil, quietLog())
	m.SpendChannels([]string{"slack:CPROD", "CDEV"})
	s := m.MeterStore(memstore.New(memstore.Options{Logger: quietLog()}))
	ctx, now := context.Background(), time.Now()
	for _, add := range []struct {
		key    string
		tokens int64
	}{
		{approval.ChannelDayKey("slack", "CPROD", now), 100},
		{approval.ChannelDayKey("discord", "CDEV", now), 20},
		{approval.ChannelDayKey("slack", "CRANDOM", now), 7},
		{approval.ChannelDayKey("discord", "CPROD", now), 3}, // CPROD is named for slack only
		{approval.ConversationKey(approval.Conversation{Platform: "slack", Channel: "CPROD", Thread: "1"}), 100},
	} {
		if _, err := s.AddSpend(ctx, add.key, add.tokens, now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	for label, want := range map[string]float64{"slack:CPROD": 100, "discord:CDEV": 20, "other": 10} {
		if got := value(t, m, "countersign_channel_tokens_total", map[string]string{"channel": label}); got != want {
			t.Errorf("countersign_channel_tokens_total{channel=%q} = %v, want %v", label, got, want)
		}
	}
}
