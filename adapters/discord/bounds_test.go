package discord

import (
	"strconv"
	"testing"

	"github.com/countersign/countersign/adapters/discord/discordtest"
)

// Every per-process memory of the adapter is bounded in size (and in age:
// each is an expiring LRU): a long-lived bot meeting many channels, users
// and threads keeps at most maxRemembered of each.
func TestMemoriesAreBounded(t *testing.T) {
	a := newAdapter(t, discordtest.New(t), Config{})
	for i := range maxRemembered + 100 {
		k := strconv.Itoa(i)
		a.channels.Add(k, channelInfo{})
		a.clicks.Add(k, nil)
		a.dms.Add(k, k)
		a.told.Add(k, struct{}{})
	}
	for name, n := range map[string]int{"channels": a.channels.Len(), "clicks": a.clicks.Len(), "dms": a.dms.Len(), "told": a.told.Len()} {
		if n != maxRemembered {
			t.Errorf("%s holds %d; want at most %d", name, n, maxRemembered)
		}
	}
	if _, ok := a.told.Get("0"); ok {
		t.Error("the oldest thread told was kept past the bound")
	}
}
