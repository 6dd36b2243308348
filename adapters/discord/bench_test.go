package discord

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
	"github.com/countersign/countersign/adapters/discord/discordtest"
)

// BenchmarkFirstResponse measures a click's first response as Discord
// sees it: from the interaction's creation (before the gateway dispatch or
// the HTTP request) to the deferred update's arrival, with a handler that
// takes the event and returns. It reports p50 and p99.
func BenchmarkFirstResponse(b *testing.B) {
	for _, mode := range []string{"gateway", "http"} {
		b.Run(mode, func(b *testing.B) {
			fake := discordtest.New(b)
			cfg := Config{}
			if mode == "http" {
				cfg = Config{Interactions: "http", Listen: "127.0.0.1:0"}
			}
			a, err := New(cfg, testEnv(fake), quiet())
			if err != nil {
				b.Fatal(err)
			}
			events := make(chan adapters.Event, 1024)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				done <- a.Run(ctx, adapters.HandlerFunc(func(_ context.Context, e adapters.Event) { events <- e }))
			}()
			defer func() { cancel(); <-done }()
			ch := fake.AddChannel("ops")
			fake.WaitSessions(b, 1)
			// Once an event has come through, Run serves interactions.
			fake.Say(b, alice, ch, "hello", true)
			<-events
			if mode == "http" {
				fake.SetInteractionsURL("http://" + a.Addr() + InteractionsPath)
			}
			c := adaptertest.PendingCard("a1b2c3")
			ref, err := a.Post(ctx, adapters.Place{Channel: ch}, adapters.Content{Card: &c})
			if err != nil {
				b.Fatal(err)
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				id := fake.Click(b, bob, ref, idApprove+"a1b2c3")
				lat = append(lat, fake.WaitResponse(b, id).After)
				<-events
			}
			b.StopTimer()
			reportPercentiles(b, lat)
		})
	}
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	at := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}
