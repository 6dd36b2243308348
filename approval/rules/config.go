// Package rules decides what a call needs before it runs (issue 19): who may
// approve it, how many distinct people, whether a decision needs a reason,
// how long the card waits, when the approvers are reminded and when the
// call is escalated. It owns the configuration of bot.rules (an ordered
// list: the first entry whose match holds wins) and of the per-channel
// settings (Settings, which the bot's channel policy embeds), validates both
// at start with errors that name the entry, and resolves a call's facts to
// a Requirement. It also writes the platform-neutral sentences that say who
// may decide (text.go).
//
// It knows nothing of chat platforms, the bot or the agent: the bot hands
// it the channel's policy and the call's facts (risk.Verdict, risk.Facts),
// and gets back a value.
package rules

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/countersign/countersign/approval/oncall"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/risk/sqlrisk"
)

// Decision is a decision a person makes on a card.
type Decision string

// The decisions a reason can be required for.
const (
	Approve Decision = "approve"
	Cancel  Decision = "cancel"
)

// Settings are the approval settings of a channel: the fields of
// bot.default and bot.channels.<id> beside approvers. The bot's Policy
// embeds it inline (`yaml:",inline"`). A field left out (nil, "") is taken
// from bot.default, and there from the defaults: one approval, no reason,
// no reminder, no escalation, no approval channel.
type Settings struct {
	// ApprovalsRequired is how many distinct people must approve (the
	// requester never counts). Default 1.
	ApprovalsRequired *int `yaml:"approvals_required"`
	// ReasonRequired lists the decisions that need a reason: [cancel] or
	// [approve, cancel]. [] requires none (and overrides the default).
	ReasonRequired []Decision `yaml:"reason_required"`
	// RemindAfter: this long after the card was posted, the approvers who
	// have not decided are mentioned once. 0s: never.
	RemindAfter *time.Duration `yaml:"remind_after"`
	// EscalateAfter: this long after the card was posted, EscalateTo are
	// added to the approvers and mentioned. 0s: never.
	EscalateAfter *time.Duration `yaml:"escalate_after"`
	// EscalateTo are the people or groups escalated to, written like
	// approvers ("U0123", "group:oncall-leads", "role:sre").
	EscalateTo []string `yaml:"escalate_to"`
	// ApprovalChannel is where a card that nobody in its conversation
	// could decide (a DM that needs a second person) is sent to be decided,
	// as a channel id ("C0123OPS", or "slack:C0123OPS").
	ApprovalChannel string `yaml:"approval_channel"`
}

// Rule is one entry of bot.rules: a match, and what a call that matches
// needs. A field left out keeps the channel's value.
type Rule struct {
	// Name names the rule in cards, audit records and errors; default
	// bot.rules[i].
	Name string `yaml:"name"`
	// Match says which calls the rule is for.
	Match Match `yaml:"match"`
	// Approvers replaces the channel's approvers (same syntax); [] is
	// anyone in the channel.
	Approvers []string `yaml:"approvers"`
	// ApprovalsRequired, ReasonRequired, RemindAfter, EscalateAfter and
	// EscalateTo are those of Settings, for the calls the rule matches.
	ApprovalsRequired *int           `yaml:"approvals_required"`
	ReasonRequired    []Decision     `yaml:"reason_required"`
	RemindAfter       *time.Duration `yaml:"remind_after"`
	EscalateAfter     *time.Duration `yaml:"escalate_after"`
	EscalateTo        []string       `yaml:"escalate_to"`
	// Expiry is how long the card waits for its decision, instead of
	// agent.approval_ttl.
	Expiry time.Duration `yaml:"expiry"`
}

// Match says which calls a rule is for. Every key given must hold; a key
// holds when the call has any one of the key's values. At least one key is
// needed.
//
// The values are compared exactly, with these vocabularies:
//   - tool: the tool's name (execute_sql, execute_command, file_operations,
//     http_request, or a tool added later).
//   - rule: the risk policy's rule that sent the call to a person: mode,
//     danger, llm or default (absurd calls are blocked, whitelisted and
//     preauthorized ones run: they never reach a card).
//   - risk: the assessed level, medium or high (a low call runs without a
//     card).
//   - sql: a statement kind of sqlrisk.Kinds ("ALTER TABLE", "DROP
//     TABLE", "DELETE"…) or a class (DDL, DML, DCL, READ, TCL, ADMIN,
//     OTHER); case and spaces are not significant. It holds when any
//     statement of an execute_sql call is of that kind or class.
//   - command: a command name, optionally followed by words ("systemctl
//     restart"): it holds when any command of an execute_command call has
//     that name (rm matches /bin/rm, and the systemctl under sudo) and its
//     words include the given ones, in that order, not necessarily
//     adjacent ("systemctl restart" matches systemctl --now restart nginx).
//   - channel: a channel id as the platform reports it, or
//     "platform:channel".
//
// A call whose SQL or command text cannot be read to the end (it does not
// parse, a command name is computed at run time) could be anything: it
// matches every sql or command value (fail closed).
type Match struct {
	Tool    []string     `yaml:"tool"`
	Rule    []risk.Rule  `yaml:"rule"`
	Risk    []risk.Level `yaml:"risk"`
	SQL     []string     `yaml:"sql"`
	Command []string     `yaml:"command"`
	Channel []string     `yaml:"channel"`
}

// cardRules are the policy rules whose calls wait for a person.
var cardRules = []risk.Rule{risk.RuleMode, risk.RuleDanger, risk.RuleLLM, risk.RuleDefault}

// cardLevels are the risk levels a card can show.
var cardLevels = []risk.Level{risk.Medium, risk.High}

// Validate reports the first bad value of a channel's settings, naming its
// key under key ("bot.channels.C0123").
func (s Settings) Validate(key string) error {
	if err := checkCount(key, s.ApprovalsRequired); err != nil {
		return err
	}
	if err := checkReasons(key, s.ReasonRequired); err != nil {
		return err
	}
	if err := checkTimers(key, s.RemindAfter, s.EscalateAfter, s.EscalateTo, 0); err != nil {
		return err
	}
	if s.ApprovalChannel != "" && strings.TrimSpace(s.ApprovalChannel) != s.ApprovalChannel {
		return fmt.Errorf("%s.approval_channel: %q has spaces around it; give the channel id alone", key, s.ApprovalChannel)
	}
	return nil
}

// Over returns s with every field that o sets taken from o: a channel's
// settings over bot.default's.
func (s Settings) Over(o Settings) Settings {
	if o.ApprovalsRequired != nil {
		s.ApprovalsRequired = o.ApprovalsRequired
	}
	if o.ReasonRequired != nil {
		s.ReasonRequired = o.ReasonRequired
	}
	if o.RemindAfter != nil {
		s.RemindAfter = o.RemindAfter
	}
	if o.EscalateAfter != nil {
		s.EscalateAfter = o.EscalateAfter
	}
	if o.EscalateTo != nil {
		s.EscalateTo = o.EscalateTo
	}
	if o.ApprovalChannel != "" {
		s.ApprovalChannel = o.ApprovalChannel
	}
	return s
}

// validate reports the first bad value of rule i of the list at key.
func (r Rule) validate(key string) error {
	if r.Name != "" && strings.TrimSpace(r.Name) == "" {
		return fmt.Errorf("%s.name: is blank; leave it out or name the rule", key)
	}
	if err := r.Match.validate(key + ".match"); err != nil {
		return err
	}
	if r.Approvers == nil && r.ApprovalsRequired == nil && r.ReasonRequired == nil && r.RemindAfter == nil &&
		r.EscalateAfter == nil && r.EscalateTo == nil && r.Expiry == 0 {
		return fmt.Errorf("%s: sets nothing; give at least one of approvers, approvals_required, reason_required, expiry, remind_after, escalate_after", key)
	}
	for i, a := range r.Approvers {
		if err := CheckApprover(fmt.Sprintf("%s.approvers[%d]", key, i), a); err != nil {
			return err
		}
	}
	if err := checkCount(key, r.ApprovalsRequired); err != nil {
		return err
	}
	if r.ApprovalsRequired != nil && len(r.Approvers) > 0 && !slices.ContainsFunc(r.Approvers, IsGroup) {
		if people := len(distinct(r.Approvers)); *r.ApprovalsRequired > people {
			return fmt.Errorf("%s.approvals_required: %d approvals from %d listed people can never be reached; lower it or add approvers (a group or role)",
				key, *r.ApprovalsRequired, people)
		}
	}
	if err := checkReasons(key, r.ReasonRequired); err != nil {
		return err
	}
	if r.Expiry < 0 {
		return fmt.Errorf("%s.expiry: %s is negative", key, r.Expiry)
	}
	if r.Expiry != 0 && r.Expiry < time.Minute {
		return fmt.Errorf("%s.expiry: %s leaves no time to decide; give at least 1m", key, r.Expiry)
	}
	return checkTimers(key, r.RemindAfter, r.EscalateAfter, r.EscalateTo, r.Expiry)
}

// validate reports the first bad match value.
func (m Match) validate(key string) error {
	if len(m.Tool)+len(m.Rule)+len(m.Risk)+len(m.SQL)+len(m.Command)+len(m.Channel) == 0 {
		return fmt.Errorf("%s: matches nothing; give at least one of tool, rule, risk, sql, command, channel (settings for every call belong in bot.default)", key)
	}
	for i, t := range m.Tool {
		if t == "" || strings.TrimSpace(t) != t || strings.ContainsAny(t, " \t") {
			return fmt.Errorf("%s.tool[%d]: %q is not a tool name (execute_sql, execute_command, file_operations, http_request…)", key, i, t)
		}
	}
	for i, r := range m.Rule {
		if !slices.Contains(cardRules, r) {
			return fmt.Errorf("%s.rule[%d]: %q is not a rule that sends a call to a person; use one of mode, danger, llm, default", key, i, r)
		}
	}
	for i, l := range m.Risk {
		if !slices.Contains(cardLevels, l) {
			return fmt.Errorf("%s.risk[%d]: %q is not a level a card shows; use medium or high", key, i, l)
		}
	}
	if len(m.SQL) > 0 && len(m.Tool) > 0 && !slices.Contains(m.Tool, risk.ToolSQL) {
		return fmt.Errorf("%s.sql: only %s calls have SQL, and tool does not include it", key, risk.ToolSQL)
	}
	if len(m.Command) > 0 && len(m.Tool) > 0 && !slices.Contains(m.Tool, risk.ToolCommand) {
		return fmt.Errorf("%s.command: only %s calls have commands, and tool does not include it", key, risk.ToolCommand)
	}
	for i, s := range m.SQL {
		if _, _, ok := sqlrisk.KindClass(sqlName(s)); !ok {
			return fmt.Errorf("%s.sql[%d]: %q is not a statement kind or class; use a class (DDL, DML, DCL, READ, TCL, ADMIN, OTHER) or a kind such as \"ALTER TABLE\", \"DROP TABLE\", \"DELETE\"", key, i, s)
		}
	}
	for i, c := range m.Command {
		words := strings.Fields(c)
		switch {
		case len(words) == 0:
			return fmt.Errorf("%s.command[%d]: is empty; give a command name, optionally with words (\"systemctl restart\")", key, i)
		case strings.Contains(words[0], "/"):
			return fmt.Errorf("%s.command[%d]: %q names a path; give the command's name (%s), which matches it wherever it lives", key, i, c, words[0][strings.LastIndex(words[0], "/")+1:])
		}
	}
	for i, ch := range m.Channel {
		if ch == "" || strings.TrimSpace(ch) != ch {
			return fmt.Errorf("%s.channel[%d]: %q is not a channel id", key, i, ch)
		}
	}
	return nil
}

// sqlName is a sql match value as sqlrisk names kinds: upper case, single
// spaces.
func sqlName(s string) string { return strings.Join(strings.Fields(strings.ToUpper(s)), " ") }

// CheckApprover reports whether a is an approver entry: a user id
// ("U0123" or "user:U0123"), "group:NAME", "role:NAME", the people on
// call in a schedule ("oncall:pagerduty:P123", approval/oncall) or "*".
// The bot's approvers follow the same syntax.
func CheckApprover(key, a string) error {
	kind, name, found := strings.Cut(a, ":")
	if _, ok, err := oncall.Parse(a); ok {
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		return nil
	}
	switch {
	case strings.TrimSpace(a) == "":
		return fmt.Errorf("%s: empty entry", key)
	case !found:
	case kind != "user" && kind != "group" && kind != "role":
		return fmt.Errorf("%s: %q: the prefix must be one of user, group, role, oncall", key, a)
	case strings.TrimSpace(name) == "":
		return fmt.Errorf("%s: %q names nobody", key, a)
	}
	return nil
}

// IsGroup reports whether an approver entry stands for more than one
// person: a group, a role, whoever is on call, or anyone.
func IsGroup(a string) bool {
	a = strings.TrimSpace(a)
	return a == "*" || strings.HasPrefix(a, "group:") || strings.HasPrefix(a, "role:") || oncall.Is(a)
}

// distinct returns the people of a list of user entries, each once.
func distinct(entries []string) []string {
	var out []string
	for _, e := range entries {
		e = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(e), "user:"))
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

func checkCount(key string, n *int) error {
	if n == nil {
		return nil
	}
	switch {
	case *n < 1:
		return fmt.Errorf("%s.approvals_required: must be at least 1", key)
	case *n > MaxApprovals:
		return fmt.Errorf("%s.approvals_required: %d is more than %d; no card should wait for that many people", key, *n, MaxApprovals)
	}
	return nil
}

// MaxApprovals caps approvals_required.
const MaxApprovals = 10

func checkReasons(key string, ds []Decision) error {
	for i, d := range ds {
		if d != Approve && d != Cancel {
			return fmt.Errorf("%s.reason_required[%d]: %q is not a decision; use [cancel] or [approve, cancel]", key, i, d)
		}
		if slices.Contains(ds[:i], d) {
			return fmt.Errorf("%s.reason_required[%d]: %q is listed twice", key, i, d)
		}
	}
	return nil
}

// checkTimers checks the values of remind_after, escalate_after and
// escalate_to; expiry, when not 0, is the card's life, which both must
// fall within. Whether an escalation has both a time and people is
// checked on the settings in effect (checkEscalation).
func checkTimers(key string, remind, escalate *time.Duration, to []string, expiry time.Duration) error {
	for _, d := range []struct {
		name string
		v    *time.Duration
	}{{"remind_after", remind}, {"escalate_after", escalate}} {
		if d.v == nil {
			continue
		}
		if *d.v < 0 {
			return fmt.Errorf("%s.%s: %s is negative; 0s turns it off", key, d.name, *d.v)
		}
		if expiry != 0 && *d.v >= expiry {
			return fmt.Errorf("%s.%s: %s is not before the expiry %s, so it would never happen", key, d.name, *d.v, expiry)
		}
	}
	for i, a := range to {
		if err := CheckApprover(fmt.Sprintf("%s.escalate_to[%d]", key, i), a); err != nil {
			return err
		}
		if strings.TrimSpace(a) == "*" {
			return fmt.Errorf("%s.escalate_to[%d]: \"*\" mentions nobody; list people or groups", key, i)
		}
	}
	return nil
}

// checkEscalation reports an escalation that is half configured in the
// settings in effect: a time without people, or people without a time.
// where names the source of the effective settings for the message.
func checkEscalation(key, where string, s Settings) error {
	on := s.EscalateAfter != nil && *s.EscalateAfter > 0
	switch {
	case on && len(s.EscalateTo) == 0:
		return fmt.Errorf("%s.escalate_to: escalate_after is %s%s but nobody is listed to escalate to; list people or groups", key, *s.EscalateAfter, where)
	case s.EscalateAfter == nil && len(s.EscalateTo) > 0:
		return fmt.Errorf("%s.escalate_after: escalate_to is set%s but not when; give a duration such as 30m", key, where)
	}
	return nil
}
