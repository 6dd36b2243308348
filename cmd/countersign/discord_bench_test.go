package main

import (
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters/discord/discordtest"
)

var startedAt = regexp.MustCompile(`started (\d{19})`)

// BenchmarkDiscordClickToToolStart measures, through countersign run and
// the fake Discord, the time from an approver's click (the interaction's
// creation) to the approved command's first instruction (it prints the
// clock), with the in-memory store. It reports p50 and p99.
func BenchmarkDiscordClickToToolStart(b *testing.B) {
	dir := discordFiles(b)
	fake := discordtest.New(b)
	startDiscord(b, dir, discordConfig(b, dir, ""),
		"DISCORD_BOT_TOKEN", discordtest.Token, "DISCORD_API_URL", fake.URL)
	ops := fake.AddChannel("ops")
	fake.WaitSessions(b, 1)
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		m := fake.Say(b, dAlice, ops, "!run rm -f ./none_"+strconv.Itoa(i)+"; echo started $(date +%s%N)", true)
		c := card(b, fake, m)
		b.StartTimer()
		id := fake.Click(b, dBob, c.ID, buttonID(c, "cs:a:"))
		var got string
		fake.Wait(b, "the run's output on the card", func() bool {
			m, _ := fake.Message(c.ID)
			if s := startedAt.FindStringSubmatch(text(m)); s != nil {
				got = s[1]
				return true
			}
			return false
		})
		ix, _ := fake.Interaction(id)
		ns, _ := strconv.ParseInt(got, 10, 64)
		lat = append(lat, time.Unix(0, ns).Sub(ix.Created))
	}
	b.StopTimer()
	slices.Sort(lat)
	at := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}
