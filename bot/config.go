package bot

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/countersign/countersign/approval/rules"
)

// Config is the bot's own section of the configuration (`bot:`). The zero
// value is ready to use: anyone in a channel may approve, but never their
// own call.
//
//	bot:
//	  default:
//	    approvers: []                 # user ids (the terminal's are names), "group:NAME", "role:NAME", "*"; empty: anyone
//	    require_second_person: true   # the requester cannot approve their own call
//	    quiet: false                  # true: calls that need no card are not shown one by one
//	    approvals_required: 1         # distinct people who must approve (rules.Settings: also reason_required,
//	                                  # remind_after, escalate_after, escalate_to, approval_channel)
//	  channels:
//	    C0123PROD:                    # a channel id, or "slack:C0123PROD" for one platform only
//	      approvers: ["group:oncall", "role:dba"]
//	  rules:                          # by what is asked; the first match wins over the channel (approval/rules)
//	    - name: prod-ddl
//	      match: {tool: [execute_sql], sql: [DDL], channel: [C0123PROD]}
//	      approvers: ["group:dba"]
//	      approvals_required: 2
//	  sweep_interval: 5s              # how often overdue approvals expire
//	  dedupe_window: 10m              # how long an event id is remembered
//	  dedupe_size: 10000
//	  shutdown_grace: 60s             # how long a shutdown waits for work in flight; more than llm.total_timeout
//	  card_output: 2000               # bytes of output shown on a card
//	  queue_size: 20                  # messages waiting per conversation
type Config struct {
	// Default is the approver policy of every channel not listed in
	// Channels.
	Default Policy `yaml:"default"`
	// Channels overrides the policy per channel. The key is the channel's
	// id as the platform reports it ("terminal", "C0123ABCD"), or
	// "platform:channel" to name one platform's channel only. Fields left
	// out are taken from Default.
	Channels map[string]Policy `yaml:"channels"`
	// Rules set what a call needs by what it asks (tool, policy rule,
	// risk, SQL statement kind, command name, channel): the first entry
	// that matches wins over the channel's settings (approval/rules).
	Rules []rules.Rule `yaml:"rules"`
	// SweepInterval is how often overdue approvals are expired (default 5s).
	SweepInterval time.Duration `yaml:"sweep_interval"`
	// DedupeWindow is how long an event id is remembered to drop a
	// redelivery (default 10m), in this process and, through the store
	// (approval.Deduper), across replicas; DedupeSize caps how
	// many this process remembers (default 10000).
	DedupeWindow time.Duration `yaml:"dedupe_window"`
	DedupeSize   int           `yaml:"dedupe_size"`
	// ShutdownGrace is how long a shutdown waits for runs in flight before
	// interrupting them (default 60s: longer than the model's own limit,
	// llm.total_timeout 45s, so that a turn in flight can finish). At the end of piped input the bot
	// always waits for the work in flight.
	ShutdownGrace time.Duration `yaml:"shutdown_grace"`
	// CardOutput caps the output shown on a card, in bytes (default 2000).
	CardOutput int `yaml:"card_output"`
	// QueueSize caps the messages waiting in one conversation (default 20).
	QueueSize int `yaml:"queue_size"`
	// InboxLease is how long a process may go without a heartbeat before
	// another replica takes the events it accepted and did not answer
	// (default 30s; see intake.go). A live process beats every quarter of
	// it. Only stores with an inbox (Redis) keep events across a crash.
	InboxLease time.Duration `yaml:"inbox_lease"`
	// MaxTurns caps the model turns in flight at once in this process,
	// across every conversation (default 16). A message beyond it waits
	// its turn; its sender is told how many are ahead after a few
	// seconds.
	MaxTurns int `yaml:"max_turns"`
}

// Policy says who may decide on the approvals of a channel (SPEC §5).
type Policy struct {
	// Approvers lists who may approve: a user id ("U0123", "user:U0123";
	// in the terminal the id is the name, "alice"), a user group
	// ("group:oncall") or a role ("role:admin"); "*" is anyone. Empty means
	// anyone in the channel. Display names never match: on Slack and
	// Discord anyone can take any display name.
	Approvers []string `yaml:"approvers"`
	// RequireSecondPerson: the requester cannot approve their own call
	// (they can always cancel it). Default true.
	RequireSecondPerson *bool `yaml:"require_second_person"`
	// Quiet: calls that run without a card (read-only, the model said
	// low, pre-authorised) are not shown in the conversation one by one;
	// for noisy read-heavy channels. Default false: every call that runs
	// is shown where it was asked.
	Quiet *bool `yaml:"quiet"`
	// Settings are the channel's approval settings: approvals_required,
	// reason_required, remind_after, escalate_after, escalate_to and
	// approval_channel (rules.Settings).
	rules.Settings `yaml:",inline"`
}

// Defaults of the configuration.
const (
	DefaultSweepInterval = 5 * time.Second
	DefaultDedupeWindow  = 10 * time.Minute
	DefaultDedupeSize    = 10000
	DefaultShutdown      = 60 * time.Second // longer than the model's own limit (llm.total_timeout, 45s)
	DefaultCardOutput    = 2000
	DefaultQueueSize     = 20
	DefaultInboxLease    = 30 * time.Second
	DefaultMaxTurns      = 16
)

// WithDefaults returns c with every unset value at its default.
func (c Config) WithDefaults() Config {
	if c.SweepInterval == 0 {
		c.SweepInterval = DefaultSweepInterval
	}
	if c.DedupeWindow == 0 {
		c.DedupeWindow = DefaultDedupeWindow
	}
	if c.DedupeSize == 0 {
		c.DedupeSize = DefaultDedupeSize
	}
	if c.ShutdownGrace == 0 {
		c.ShutdownGrace = DefaultShutdown
	}
	if c.CardOutput == 0 {
		c.CardOutput = DefaultCardOutput
	}
	if c.QueueSize == 0 {
		c.QueueSize = DefaultQueueSize
	}
	if c.InboxLease == 0 {
		c.InboxLease = DefaultInboxLease
	}
	if c.MaxTurns == 0 {
		c.MaxTurns = DefaultMaxTurns
	}
	if c.Default.RequireSecondPerson == nil {
		t := true
		c.Default.RequireSecondPerson = &t
	}
	if c.Default.Quiet == nil {
		f := false
		c.Default.Quiet = &f
	}
	return c
}

// Validate reports the first bad value, naming its key.
func (c Config) Validate() error {
	for _, d := range []struct {
		key string
		v   time.Duration
	}{
		{"bot.sweep_interval", c.SweepInterval},
		{"bot.dedupe_window", c.DedupeWindow},
		{"bot.shutdown_grace", c.ShutdownGrace},
		{"bot.inbox_lease", c.InboxLease},
	} {
		if d.v < 0 {
			return fmt.Errorf("%s: %s is negative", d.key, d.v)
		}
	}
	if c.SweepInterval != 0 && c.SweepInterval < 100*time.Millisecond {
		return fmt.Errorf("bot.sweep_interval: %s is shorter than 100ms", c.SweepInterval)
	}
	for _, n := range []struct {
		key string
		v   int
	}{
		{"bot.dedupe_size", c.DedupeSize},
		{"bot.card_output", c.CardOutput},
		{"bot.queue_size", c.QueueSize},
		{"bot.max_turns", c.MaxTurns},
	} {
		if n.v < 0 {
			return fmt.Errorf("%s: %d is negative", n.key, n.v)
		}
	}
	if err := c.Default.validate("bot.default"); err != nil {
		return err
	}
	for _, name := range sortedKeys(c.Channels) {
		if strings.TrimSpace(name) == "" {
			return fmt.Errorf("bot.channels: a channel has an empty name")
		}
		if err := c.Channels[name].validate("bot.channels." + name); err != nil {
			return err
		}
	}
	_, err := c.compileRules()
	return err
}

// compileRules validates the approval settings of every channel and
// bot.rules, naming the first bad entry, and compiles the rules.
func (c Config) compileRules() (*rules.Rules, error) {
	rc := rules.Config{Default: c.Default.Settings, Channels: map[string]rules.Settings{}, Rules: c.Rules}
	for name, p := range c.Channels {
		rc.Channels[name] = p.Settings
	}
	return rules.New(rc)
}

func (p Policy) validate(key string) error {
	for i, a := range p.Approvers {
		if err := rules.CheckApprover(fmt.Sprintf("%s.approvers[%d]", key, i), a); err != nil {
			return err
		}
	}
	return nil
}

// policy returns the effective policy of a channel.
func (c Config) policy(platform, channel string) Policy {
	p := c.Default
	ch, ok := c.Channels[platform+":"+channel]
	if !ok {
		ch, ok = c.Channels[channel]
	}
	if ok {
		if ch.Approvers != nil {
			p.Approvers = ch.Approvers
		}
		if ch.RequireSecondPerson != nil {
			p.RequireSecondPerson = ch.RequireSecondPerson
		}
		if ch.Quiet != nil {
			p.Quiet = ch.Quiet
		}
		p.Settings = p.Settings.Over(ch.Settings)
	}
	return p
}

// secondPerson reports whether the requester is barred from approving.
func (p Policy) secondPerson() bool {
	return p.RequireSecondPerson == nil || *p.RequireSecondPerson
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
