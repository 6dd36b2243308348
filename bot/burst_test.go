package bot_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/agent/llm"
	"github.com/countersign/countersign/approval/memstore"
	"github.com/countersign/countersign/bot"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
)

// BenchmarkBurst1000: 1,000 messages for a slow model (200 ms a turn)
// arrive at once, each in its own thread; the bot answers every one,
// holding at most bot.max_turns turns in flight. It reports the peak
// goroutines and the peak resident memory (VmHWM) of the process.
//
//	.ci/services go test -run '^$' -bench Burst1000 -benchtime 1x ./bot/
func BenchmarkBurst1000(b *testing.B) {
	const n = 1000
	for range b.N {
		replies := make([]agenttest.Reply, n)
		for i := range replies {
			replies[i] = agenttest.Reply{Content: "answer " + strconv.Itoa(i), Delay: 200 * time.Millisecond}
		}
		p := newStalledPlatform()
		p.unstall()
		srv := agenttest.NewServer(b, replies...)
		bt := burstBot(b, p, srv)
		done := make(chan error, 1)
		go func() { done <- bt.Run(context.Background()) }()
		var peak atomic.Int64
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			for {
				if g := int64(runtime.NumGoroutine()); g > peak.Load() {
					peak.Store(g)
				}
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
		}()
		start := time.Now()
		for i := range n {
			p.events <- (adapters.Event{ID: fmt.Sprint("burst", i), User: adaptertest.Alice,
				Place: adapters.Place{Channel: "C1", Thread: fmt.Sprint("T", i)}, Text: "question " + strconv.Itoa(i)})
		}
		waitFor(b, "every answer", func() bool { return strings.Count(flattenAll(p.Fake), "answer ") == n })
		elapsed := time.Since(start)
		close(stop)
		<-sampled
		close(p.events)
		if err := <-done; err != nil {
			b.Fatalf("Run: %v", err)
		}
		b.ReportMetric(float64(peak.Load()), "peak-goroutines")
		b.ReportMetric(float64(vmHWM()), "peak-RSS-KiB")
		b.ReportMetric(elapsed.Seconds(), "s-to-answer-all")
	}
}

// vmHWM is the process's peak resident set, in KiB.
func vmHWM() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return -1
}

// burstBot is a bot with a model at srv on platform p, answering up to
// the default bot.max_turns at once.
func burstBot(b *testing.B, p adapters.Adapter, srv *agenttest.Server) *bot.Bot {
	reg, err := tools.NewRegistry()
	if err != nil {
		b.Fatal(err)
	}
	pol, err := risk.New(risk.Config{})
	if err != nil {
		b.Fatal(err)
	}
	model, err := llm.New(llm.Config{BaseURL: srv.BaseURL(), APIKey: "k", Model: "m", MaxAttempts: 1}, srv.Client())
	if err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store := memstore.New(memstore.Options{Logger: log})
	bt, err := bot.New(bot.Config{QueueSize: 1000}, []adapters.Adapter{p}, agent.Config{}, bot.Deps{Model: model, Tools: reg, Policy: pol, Store: store, Log: log})
	if err != nil {
		b.Fatal(err)
	}
	return bt
}
