package ops

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/countersign/countersign/adapters"
)

// undeliveredCollector reports countersign_chat_undelivered_total: the
// cards, results and notices a platform kept refusing (429, 5xx) until
// their deadline passed, read from each adapter that counts them
// (Extras.Undelivered) at scrape time. An adapter that cannot lose a
// send (the terminal) reports 0.
type undeliveredCollector struct {
	desc *prometheus.Desc

	mu      sync.Mutex
	sources map[string]func() uint64 // platform → its count
}

func newUndeliveredCollector() *undeliveredCollector {
	return &undeliveredCollector{
		desc: prometheus.NewDesc("countersign_chat_undelivered_total",
			"Cards, results and notices a chat platform refused (429, 5xx) until their deadline passed; each is said to its requester once the platform answers again. By platform.",
			[]string{"platform"}, nil),
		sources: map[string]func() uint64{},
	}
}

// add starts reporting the count u of platform; nil counts 0.
func (c *undeliveredCollector) add(platform string, u adapters.Undeliverable) {
	count := func() uint64 { return 0 }
	if u != nil {
		count = u.Undelivered
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sources[platform] = count
}

func (c *undeliveredCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *undeliveredCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for platform, count := range c.sources {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(count()), platform)
	}
}
