package main

import (
	"maps"
	"slices"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/bot"
	"github.com/countersign/countersign/cmd/internal/ops"
)

// meter puts the metrics decorators around the store, the model and the
// adapters the bot is about to get, and returns the server that reports
// them with the adapters to give the bot. The server probes the
// undecorated ones. The decorators switch nothing off: the store's does
// every method of approval.Store (the journal, the count of approvals and
// the pins are part of it), an adapter's forwards every extra it declares
// (adapters.Extras), and cmd/internal/ops's tests prove both.
func (a *app) meter(ads []adapters.Adapter, deps *bot.Deps) (*ops.Server, []adapters.Adapter) {
	m := ops.NewMetrics(a.names, a.log)
	m.Agents(slices.Sorted(maps.Keys(a.cfg.Gateway.Agents)))
	m.SpendChannels(slices.Sorted(maps.Keys(a.cfg.Bot.Channels))) // a bounded label: ops/spend.go
	modelURL := ""
	if deps.Model != nil {
		modelURL = a.cfg.LLM.BaseURL
	}
	o := ops.NewServer(m, deps.Store, ads, modelURL, a.log.With("component", "ops"))
	deps.Store = m.MeterStore(deps.Store)
	deps.Model = m.MeterModel(deps.Model)
	metered := make([]adapters.Adapter, len(ads))
	for i, ad := range ads {
		metered[i] = m.MeterAdapter(ad)
	}
	return o, metered
}
