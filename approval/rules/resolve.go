package rules

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/risk/shell"
	"github.com/countersign/countersign/risk/sqlrisk"
)

// Config is what the rules are built from: the settings of bot.default and
// of each bot.channels entry (as the bot's policies hold them), and
// bot.rules.
type Config struct {
	Default  Settings
	Channels map[string]Settings
	Rules    []Rule
}

// Rules is bot.rules validated and compiled once at start; Resolve is then
// pure and safe for concurrent use.
type Rules struct {
	rules []compiled
}

// compiled is one rule ready to match.
type compiled struct {
	name     string
	rule     Rule
	sqlKinds []string   // kinds and classes, as sqlrisk names them
	commands [][]string // name, then the words that must follow in order
}

// New validates c, naming the first bad key ("bot.rules[2].approvals_required:
// must be at least 1"), and compiles the rules.
func New(c Config) (*Rules, error) {
	if err := c.Default.Validate("bot.default"); err != nil {
		return nil, err
	}
	if err := checkEscalation("bot.default", "", c.Default); err != nil {
		return nil, err
	}
	ids := sortedKeys(c.Channels)
	for _, id := range ids {
		key := "bot.channels." + id
		if err := c.Channels[id].Validate(key); err != nil {
			return nil, err
		}
		if err := checkEscalation(key, " (with bot.default)", c.Default.Over(c.Channels[id])); err != nil {
			return nil, err
		}
	}
	out := &Rules{rules: make([]compiled, 0, len(c.Rules))}
	names := map[string]int{}
	for i, r := range c.Rules {
		key := fmt.Sprintf("bot.rules[%d]", i)
		if err := r.validate(key); err != nil {
			return nil, err
		}
		name := cmp.Or(strings.TrimSpace(r.Name), key)
		if j, dup := names[name]; dup {
			return nil, fmt.Errorf("%s.name: %q is also the name of bot.rules[%d]; names must be unique", key, name, j)
		}
		names[name] = i
		if err := checkInEffect(key, r, c); err != nil {
			return nil, err
		}
		cr := compiled{name: name, rule: r}
		for _, s := range r.Match.SQL {
			cr.sqlKinds = append(cr.sqlKinds, sqlName(s))
		}
		for _, p := range r.Match.Command {
			cr.commands = append(cr.commands, strings.Fields(p))
		}
		out.rules = append(out.rules, cr)
	}
	return out, nil
}

// checkInEffect checks rule r over the settings of every channel it can
// apply to: its escalation must be whole, and its expiry must leave time
// for the reminder and the escalation in effect.
func checkInEffect(key string, r Rule, c Config) error {
	bases := []struct {
		where string
		s     Settings
	}{{" (with bot.default)", c.Default}}
	for _, id := range sortedKeys(c.Channels) {
		if len(r.Match.Channel) == 0 || slices.Contains(r.Match.Channel, id) {
			bases = append(bases, struct {
				where string
				s     Settings
			}{" (with bot.channels." + id + ")", c.Default.Over(c.Channels[id])})
		}
	}
	for _, b := range bases {
		eff := r.over(b.s)
		if err := checkEscalation(key, b.where, eff); err != nil {
			return err
		}
		if r.Expiry == 0 {
			continue
		}
		for _, d := range []struct {
			name string
			v    *time.Duration
		}{{"remind_after", eff.RemindAfter}, {"escalate_after", eff.EscalateAfter}} {
			if d.v != nil && *d.v > 0 && *d.v >= r.Expiry {
				return fmt.Errorf("%s.expiry: %s ends the card before %s %s%s; set a longer expiry or the rule's own %s",
					key, r.Expiry, d.name, *d.v, b.where, d.name)
			}
		}
	}
	return nil
}

// over returns s with the settings r sets taken from r.
func (r Rule) over(s Settings) Settings {
	return s.Over(Settings{
		ApprovalsRequired: r.ApprovalsRequired, ReasonRequired: r.ReasonRequired,
		RemindAfter: r.RemindAfter, EscalateAfter: r.EscalateAfter, EscalateTo: r.EscalateTo,
	})
}

// Channel is a channel's policy as the bot holds it: bot.default with the
// channel's own entry over it.
type Channel struct {
	Approvers []string
	Settings  Settings
}

// Facts are what Resolve matches a call on.
type Facts struct {
	// Tool is the tool's name.
	Tool string
	// Platform and Channel are where the call was asked ("slack",
	// "C0123PROD").
	Platform, Channel string
	// Verdict is the risk policy's judgement (Rule and Risk are matched).
	Verdict risk.Verdict
	// Call is what the call asks for (risk.Policy.Facts): statement kinds,
	// command names, or Unread.
	Call risk.Facts
}

// Requirement is what a call needs before it runs.
type Requirement struct {
	// Rule names the rule of bot.rules that matched, "" when none did and
	// the channel's settings apply.
	Rule string `json:"rule,omitempty"`
	// Approvers are who may approve (the bot's syntax); empty is anyone.
	Approvers []string `json:"approvers,omitempty"`
	// Need is how many distinct people must approve, at least 1.
	Need int `json:"need"`
	// Reasons are the decisions that need a reason.
	Reasons []Decision `json:"reasons,omitempty"`
	// Expiry is how long the card waits; 0 is the agent's default.
	Expiry time.Duration `json:"expiry,omitempty"`
	// RemindAfter and EscalateAfter are counted from when the card was
	// posted; 0 is never.
	RemindAfter   time.Duration `json:"remind_after,omitempty"`
	EscalateAfter time.Duration `json:"escalate_after,omitempty"`
	// EscalateTo join the approvers at EscalateAfter.
	EscalateTo []string `json:"escalate_to,omitempty"`
	// ApprovalChannel is where a card nobody in its conversation could
	// decide is sent; "" is none.
	ApprovalChannel string `json:"approval_channel,omitempty"`
}

// ReasonRequired reports whether decision d needs a reason.
func (r Requirement) ReasonRequired(d Decision) bool { return slices.Contains(r.Reasons, d) }

// Resolve returns what a call with facts f in channel ch needs: the
// channel's settings, with those of the first rule that matches f over
// them.
func (rs *Rules) Resolve(ch Channel, f Facts) Requirement {
	s, approvers, rule, expiry := ch.Settings, ch.Approvers, "", time.Duration(0)
	if rs != nil {
		for i := range rs.rules {
			cr := &rs.rules[i]
			if !cr.matches(f) {
				continue
			}
			s, rule, expiry = cr.rule.over(s), cr.name, cr.rule.Expiry
			if cr.rule.Approvers != nil {
				approvers = cr.rule.Approvers
			}
			break
		}
	}
	req := Requirement{
		Rule:            rule,
		Approvers:       slices.Clone(approvers),
		Need:            1,
		Reasons:         slices.Clone(s.ReasonRequired),
		Expiry:          expiry,
		EscalateTo:      slices.Clone(s.EscalateTo),
		ApprovalChannel: s.ApprovalChannel,
	}
	if s.ApprovalsRequired != nil {
		req.Need = max(*s.ApprovalsRequired, 1)
	}
	if s.RemindAfter != nil {
		req.RemindAfter = *s.RemindAfter
	}
	if s.EscalateAfter != nil && len(s.EscalateTo) > 0 {
		req.EscalateAfter = *s.EscalateAfter
	}
	return req
}

// Names returns the names of the rules in order, for logs and help.
func (rs *Rules) Names() []string {
	if rs == nil {
		return nil
	}
	out := make([]string, len(rs.rules))
	for i, r := range rs.rules {
		out[i] = r.name
	}
	return out
}

// matches reports whether every key of the rule's match holds for f.
func (cr *compiled) matches(f Facts) bool {
	m := cr.rule.Match
	if len(m.Tool) > 0 && !slices.Contains(m.Tool, f.Tool) {
		return false
	}
	if len(m.Rule) > 0 && !slices.Contains(m.Rule, f.Verdict.Rule) {
		return false
	}
	if len(m.Risk) > 0 && !slices.Contains(m.Risk, f.Verdict.Risk) {
		return false
	}
	if len(m.Channel) > 0 && !slices.Contains(m.Channel, f.Channel) && !slices.Contains(m.Channel, f.Platform+":"+f.Channel) {
		return false
	}
	if len(cr.sqlKinds) > 0 && (f.Tool != risk.ToolSQL || !f.Call.Unread && !slices.ContainsFunc(f.Call.Statements, cr.sqlMatch)) {
		return false
	}
	if len(cr.commands) > 0 && (f.Tool != risk.ToolCommand || !f.Call.Unread && !slices.ContainsFunc(f.Call.Commands, cr.commandMatch)) {
		return false
	}
	return true
}

// sqlMatch reports whether statement s is of a kind or class the rule
// names.
func (cr *compiled) sqlMatch(s sqlrisk.Statement) bool {
	return slices.Contains(cr.sqlKinds, s.Kind) || slices.Contains(cr.sqlKinds, s.Class)
}

// commandMatch reports whether c has the name of one of the rule's command
// patterns and its words include the pattern's, in order.
func (cr *compiled) commandMatch(c shell.Command) bool {
	for _, p := range cr.commands {
		if c.Name != p[0] {
			continue
		}
		want := p[1:]
		for _, a := range c.Args {
			if len(want) > 0 && a == want[0] {
				want = want[1:]
			}
		}
		if len(want) == 0 {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Escalated returns r once its escalation time has passed: EscalateTo join
// the approvers (each once). Approvers that were anyone stay anyone.
func (r Requirement) Escalated() Requirement {
	if len(r.Approvers) == 0 || slices.Contains(r.Approvers, "*") {
		return r
	}
	out := r
	out.Approvers = slices.Clone(r.Approvers)
	for _, e := range r.EscalateTo {
		if !slices.Contains(out.Approvers, e) {
			out.Approvers = append(out.Approvers, e)
		}
	}
	return out
}

// Record returns r as the approval record keeps it, its reminder and
// escalation as times counted from posted (when the card was made).
func (r Requirement) Record(posted time.Time) approval.Requirement {
	out := approval.Requirement{
		Rule:            r.Rule,
		Approvers:       slices.Clone(r.Approvers),
		Need:            max(r.Need, 1),
		EscalateTo:      slices.Clone(r.EscalateTo),
		ApprovalChannel: r.ApprovalChannel,
	}
	for _, d := range r.Reasons {
		out.Reasons = append(out.Reasons, string(d))
	}
	if r.RemindAfter > 0 {
		out.RemindAt = posted.Add(r.RemindAfter)
	}
	if r.EscalateAfter > 0 && len(r.EscalateTo) > 0 {
		out.EscalateAt = posted.Add(r.EscalateAfter)
	}
	return out
}

// FromRecord returns the requirement an approval record keeps, its times
// as durations from posted. A record without one (Need 0: made before
// rules existed) is the channel's: the approvers given, one approval.
func FromRecord(rec approval.Requirement, posted time.Time, approvers []string) Requirement {
	if rec.Need == 0 {
		return Requirement{Approvers: slices.Clone(approvers), Need: 1}
	}
	out := Requirement{
		Rule:            rec.Rule,
		Approvers:       slices.Clone(rec.Approvers),
		Need:            rec.Need,
		EscalateTo:      slices.Clone(rec.EscalateTo),
		ApprovalChannel: rec.ApprovalChannel,
	}
	for _, d := range rec.Reasons {
		out.Reasons = append(out.Reasons, Decision(d))
	}
	if !rec.RemindAt.IsZero() {
		out.RemindAfter = rec.RemindAt.Sub(posted)
	}
	if !rec.EscalateAt.IsZero() {
		out.EscalateAfter = rec.EscalateAt.Sub(posted)
	}
	return out
}

// At returns r as it stands at now: escalated once its escalation time has
// passed (posted + EscalateAfter).
func (r Requirement) At(posted, now time.Time) Requirement {
	if r.EscalateAfter > 0 && !now.Before(posted.Add(r.EscalateAfter)) {
		return r.Escalated()
	}
	return r
}
