package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/countersign/countersign/approval/rules"
	"github.com/countersign/countersign/bot"
	"github.com/countersign/countersign/risk"
)

// validateConfig checks everything in the configuration that can be
// judged before anything is built or reached, and reports every problem at
// once (errors.Join), each naming its key and the fix. build calls it
// first, so `run` never starts with a value `config check` refuses.
func validateConfig(cfg fileConfig, getenv func(string) string) error {
	errs := sectionErrors(cfg)
	errs = append(errs, boundErrors(cfg)...)
	errs = append(errs, approverErrors(cfg.Bot)...)
	errs = append(errs, tokenErrors(cfg, getenv)...)
	errs = append(errs, onCallErrors(cfg, getenv)...) // oncall.go
	return errors.Join(errs...)
}

// sectionErrors are the sections' own checks, each section judged apart
// from the others.
func sectionErrors(cfg fileConfig) []error {
	errs := []error{validateSections(cfg)}
	if _, err := risk.New(cfg.Risk); err != nil {
		errs = append(errs, err)
	}
	if _, err := cfg.Agent.WithDefaults(); err != nil {
		errs = append(errs, err)
	}
	if err := cfg.LLM.Budget.Validate(); err != nil { // whether or not a model is configured
		errs = append(errs, err)
	}
	if _, err := cfg.Audit.WithDefaults(); err != nil {
		errs = append(errs, err)
	}
	if _, err := cfg.MCP.WithDefaults(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, cfg.Telemetry.Validate())
	t := cfg.Tools
	for _, tool := range []struct {
		key string
		on  bool
		err func() error
	}{
		{"tools.execute_command", on(t.Command.Enabled, true), func() error { _, err := t.Command.Config.WithDefaults(); return err }},
		{"tools.file_operations", on(t.Files.Enabled, true), func() error { _, err := t.Files.Config.WithDefaults(); return err }},
		{"tools.execute_sql", on(t.SQL.Enabled, len(t.SQL.Config.Connections) > 0), func() error { _, err := t.SQL.Config.WithDefaults(); return err }},
		{"tools.http_request", on(t.HTTP.Enabled, false), func() error { _, err := t.HTTP.Config.WithDefaults(); return err }},
	} {
		if !tool.on {
			continue
		}
		if err := tool.err(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", tool.key, err))
		}
	}
	return errs
}

// bound is the least value a duration or count may be set to (0 keeps its
// default): below it the setting cannot work.
type bound struct {
	key  string
	v    time.Duration // a duration, or a count as a Duration
	min  time.Duration
	why  string
	unit bool // v and min are counts, not durations
}

// bounds are the settings whose small values cannot work, as written (0 is
// the default and always passes).
func bounds(cfg fileConfig) []bound {
	b, ag := cfg.Bot, cfg.Agent
	return []bound{
		{key: "bot.sweep_interval", v: b.SweepInterval, min: 100 * time.Millisecond,
			why: "the sweep would run without pause"},
		{key: "bot.card_output", v: time.Duration(b.CardOutput), min: 1, unit: true},
		{key: "bot.queue_size", v: time.Duration(b.QueueSize), min: 1, unit: true},
		{key: "bot.max_turns", v: time.Duration(b.MaxTurns), min: 1, unit: true},
		{key: "bot.inbox_lease", v: b.InboxLease, min: time.Second,
			why: "a live process beats every quarter of it, and a shorter lease hands its events to another replica while it still works on them"},
		{key: "bot.dedupe_window", v: b.DedupeWindow, min: time.Minute,
			why: "the platforms deliver an event again for minutes after it is sent, and each delivery past the window is acted on twice"},
		{key: "bot.shutdown_grace", v: b.ShutdownGrace, min: time.Second,
			why: "a shutdown would interrupt every call in flight at once"},
		{key: "bot.dedupe_size", v: time.Duration(b.DedupeSize), min: 100, unit: true,
			why: "fewer remembered event ids than a busy minute brings lets redeliveries through"},
		{key: "agent.run_lease", v: ag.RunLease, min: time.Second,
			why: "a run beats every quarter of it, and a shorter lease ends live runs as interrupted"},
		{key: "agent.recovery_grace", v: ag.RecoveryGrace, min: time.Second,
			why: "a sweep would take a live click's carrier for dead while it claims the call"},
		{key: "agent.approval_ttl", v: ag.ApprovalTTL, min: 10 * time.Second,
			why: "a card would expire before anyone can read it"},
		{key: "agent.conversation_ttl", v: ag.ConversationTTL, min: time.Minute,
			why: "a conversation would be forgotten between one message and the next"},
		{key: "llm.timeout", v: cfg.LLM.Timeout, min: time.Second,
			why: "no model answers that fast, so every turn would fail"},
		{key: "llm.total_timeout", v: cfg.LLM.TotalTimeout, min: time.Second,
			why: "no model answers that fast, so every turn would fail"},
		{key: "tools.execute_command.timeout", v: cfg.Tools.Command.Config.Timeout, min: time.Second,
			why: "every command would be killed as it starts"},
		{key: "tools.execute_command.max_timeout", v: cfg.Tools.Command.Config.MaxTimeout, min: time.Second,
			why: "every command would be killed as it starts"},
		{key: "tools.execute_sql.statement_timeout", v: cfg.Tools.SQL.Config.StatementTimeout, min: 100 * time.Millisecond,
			why: "every statement would be cancelled as it starts"},
		{key: "tools.execute_sql.approved_timeout", v: cfg.Tools.SQL.Config.ApprovedTimeout, min: 100 * time.Millisecond,
			why: "every approved statement would be cancelled as it starts"},
		{key: "tools.http_request.timeout", v: cfg.Tools.HTTP.Config.Timeout, min: 100 * time.Millisecond,
			why: "every request would time out as it starts"},
		{key: "discord.max_body_bytes", v: time.Duration(cfg.Discord.MaxBodyBytes), min: 16 << 10, unit: true,
			why: "Discord's interactions are several kilobytes, and every one over the cap is refused"},
		{key: "store.audit_max_len", v: time.Duration(cfg.Store.AuditMaxLen), min: 1000, unit: true,
			why: "the audit stream would keep only the last few records"},
	}
}

// boundErrors refuses the values below their bound.
func boundErrors(cfg fileConfig) []error {
	var errs []error
	for _, b := range bounds(cfg) {
		if b.v < 0 && strings.HasPrefix(b.key, "bot.") { // agent's are its section's own error
			if b.unit {
				errs = append(errs, fmt.Errorf("%s: %d is negative; use a positive number, or leave it out for the default", b.key, int64(b.v)))
			} else {
				errs = append(errs, fmt.Errorf("%s: %s is negative; use a positive duration, or leave it out for the default", b.key, b.v))
			}
		}
		if b.v <= 0 || b.v >= b.min {
			continue
		}
		if b.unit {
			errs = append(errs, fmt.Errorf("%s: %d is too small: %s; use at least %d, or leave it out for the default", b.key, int64(b.v), b.why, int64(b.min)))
		} else {
			errs = append(errs, fmt.Errorf("%s: %s is too short: %s; use at least %s, or leave it out for the default", b.key, b.v, b.why, b.min))
		}
	}
	return errs
}

// approverErrors refuses an approvals_required that no card can reach:
// more approvals than the people its approver list names, where the list
// names only people (a group, a role, "*" or no list at all can grow).
func approverErrors(c bot.Config) []error {
	var errs []error
	check := func(key string, approvers []string, required *int) {
		if required == nil {
			return
		}
		n, known := countApprovers(approvers)
		if known && *required > n {
			errs = append(errs, fmt.Errorf("%s.approvals_required: %d approvals, but its approvers name only %d %s (%s), so no card could ever run; "+
				"lower approvals_required, or add approvers (a group:NAME or role:NAME grows with its members)",
				key, *required, n, plural(n, "person", "people"), strings.Join(approvers, ", ")))
		}
	}
	check("bot.default", c.Default.Approvers, c.Default.ApprovalsRequired)
	nudge := func(key string, remind, escalate *time.Duration) {
		for _, d := range []struct {
			name string
			v    *time.Duration
		}{{"remind_after", remind}, {"escalate_after", escalate}} {
			if d.v != nil && *d.v > 0 && *d.v < time.Minute {
				errs = append(errs, fmt.Errorf("%s.%s: %s is too short: people would be pinged about a card before they could read it; use at least 1m, or 0s for none", key, d.name, *d.v))
			}
		}
	}
	nudge("bot.default", c.Default.RemindAfter, c.Default.EscalateAfter)
	for _, name := range sortedKeys(c.Channels) {
		nudge("bot.channels."+name, c.Channels[name].RemindAfter, c.Channels[name].EscalateAfter)
	}
	for i, r := range c.Rules {
		nudge(fmt.Sprintf("bot.rules[%d]", i), r.RemindAfter, r.EscalateAfter)
	}
	for _, name := range sortedKeys(c.Channels) {
		ch := c.Channels[name]
		approvers := ch.Approvers
		if approvers == nil {
			approvers = c.Default.Approvers
		}
		required := c.Default.Settings.Over(ch.Settings).ApprovalsRequired
		if ch.Approvers == nil && ch.ApprovalsRequired == nil {
			continue // the default's, checked above
		}
		check("bot.channels."+name, approvers, required)
	}
	for i, r := range c.Rules {
		if r.Approvers == nil {
			continue // the channel's approvers: which channel is known only per call
		}
		key := fmt.Sprintf("bot.rules[%d]", i)
		if r.Name != "" {
			key = fmt.Sprintf("bot.rules[%d] (%s)", i, r.Name)
		}
		check(key, r.Approvers, r.ApprovalsRequired)
	}
	return errs
}

// countApprovers counts the distinct people an approver list names; known
// is false when the list can grow (a group, a role, anyone).
func countApprovers(approvers []string) (n int, known bool) {
	if len(approvers) == 0 {
		return 0, false // anyone in the channel
	}
	seen := map[string]bool{}
	for _, a := range approvers {
		a = strings.TrimSpace(a)
		if rules.IsGroup(a) {
			return 0, false
		}
		seen[strings.TrimPrefix(a, "user:")] = true
	}
	return len(seen), true
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// tokenErrors refuses a chat platform configured by halves: a platform
// starts when its bot token is set, so its other secrets without it would
// start the terminal instead, silently.
func tokenErrors(cfg fileConfig, getenv func(string) string) []error {
	var errs []error
	s := cfg.Slack.WithDefaults()
	if getenv(s.BotTokenEnv) == "" {
		for _, other := range []struct{ env, what string }{
			{s.AppTokenEnv, "an app-level token (xapp-)"},
			{s.SigningSecretEnv, "a signing secret"},
		} {
			if strings.TrimSpace(getenv(other.env)) != "" {
				errs = append(errs, fmt.Errorf("slack: $%s holds %s but $%s, the bot token (xoxb-), is not set, so Slack cannot start; "+
					"set $%s (OAuth & Permissions → Bot User OAuth Token), or unset $%s to run without Slack",
					other.env, other.what, s.BotTokenEnv, s.BotTokenEnv, other.env))
			}
		}
	}
	d := cfg.Discord.WithDefaults()
	if getenv(d.TokenEnv) == "" && strings.TrimSpace(getenv(d.PublicKeyEnv)) != "" {
		errs = append(errs, fmt.Errorf("discord: $%s holds the application's public key but $%s, the bot token, is not set, so Discord cannot start; "+
			"set $%s (Developer Portal → Bot → Token), or unset $%s to run without Discord",
			d.PublicKeyEnv, d.TokenEnv, d.TokenEnv, d.PublicKeyEnv))
	}
	return errs
}

// sortedKeys are m's keys in order, so that problems are listed the same
// way every time.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
