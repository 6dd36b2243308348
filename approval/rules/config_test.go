package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/risk"
)

func ptr[T any](v T) *T { return &v }

// TestNewErrors: every bad value is refused at start with an error that
// names the entry and the key.
func TestNewErrors(t *testing.T) {
	ok := Rule{Match: Match{Tool: []string{risk.ToolSQL}}, ApprovalsRequired: ptr(2)}
	tests := []struct {
		name string
		cfg  Config
		want string // the start of the error
	}{
		{"zero approvals in a rule", Config{Rules: []Rule{ok, ok, {Match: Match{Tool: []string{"x"}}, ApprovalsRequired: ptr(0)}}},
			"bot.rules[2].approvals_required: must be at least 1"},
		{"negative approvals in a channel", Config{Channels: map[string]Settings{"C1": {ApprovalsRequired: ptr(-1)}}},
			"bot.channels.C1.approvals_required: must be at least 1"},
		{"too many approvals", Config{Default: Settings{ApprovalsRequired: ptr(11)}},
			"bot.default.approvals_required: 11 is more than 10"},
		{"more approvals than listed people", Config{Rules: []Rule{{Match: Match{Risk: []risk.Level{risk.High}}, Approvers: []string{"U1", "user:U2", "U1"}, ApprovalsRequired: ptr(3)}}},
			"bot.rules[0].approvals_required: 3 approvals from 2 listed people can never be reached"},
		{"an on-call entry of an unknown service", Config{Rules: []Rule{{Match: Match{Risk: []risk.Level{risk.High}}, Approvers: []string{"oncall:victorops:X"}}}},
			`bot.rules[0].approvers[0]: "oncall:victorops:X": the service must be one of pagerduty, opsgenie`},
		{"a rule that matches everything", Config{Rules: []Rule{{ApprovalsRequired: ptr(2)}}},
			"bot.rules[0].match: matches nothing"},
		{"a rule that sets nothing", Config{Rules: []Rule{{Match: Match{Tool: []string{"execute_sql"}}}}},
			"bot.rules[0]: sets nothing"},
		{"unknown sql kind", Config{Rules: []Rule{ok, {Match: Match{SQL: []string{"ddl", "ALTER TABL"}}, ApprovalsRequired: ptr(2)}}},
			`bot.rules[1].match.sql[1]: "ALTER TABL" is not a statement kind or class`},
		{"sql on a tool without sql", Config{Rules: []Rule{{Match: Match{Tool: []string{"execute_command"}, SQL: []string{"DDL"}}, ApprovalsRequired: ptr(2)}}},
			"bot.rules[0].match.sql: only execute_sql calls have SQL"},
		{"command on a tool without commands", Config{Rules: []Rule{{Match: Match{Tool: []string{"execute_sql"}, Command: []string{"rm"}}, ApprovalsRequired: ptr(2)}}},
			"bot.rules[0].match.command: only execute_command calls have commands"},
		{"command path", Config{Rules: []Rule{{Match: Match{Command: []string{"/bin/systemctl restart"}}, ApprovalsRequired: ptr(2)}}},
			`bot.rules[0].match.command[0]: "/bin/systemctl restart" names a path; give the command's name (systemctl)`},
		{"empty command", Config{Rules: []Rule{{Match: Match{Command: []string{" "}}, ApprovalsRequired: ptr(2)}}},
			"bot.rules[0].match.command[0]: is empty"},
		{"rule that never reaches a card", Config{Rules: []Rule{{Match: Match{Rule: []risk.Rule{risk.RuleDanger, risk.RuleWhitelist}}, ApprovalsRequired: ptr(2)}}},
			`bot.rules[0].match.rule[1]: "whitelist" is not a rule that sends a call to a person`},
		{"low risk", Config{Rules: []Rule{{Match: Match{Risk: []risk.Level{"low"}}, ApprovalsRequired: ptr(2)}}},
			`bot.rules[0].match.risk[0]: "low" is not a level a card shows`},
		{"unknown level", Config{Rules: []Rule{{Match: Match{Risk: []risk.Level{"HIGH"}}, ApprovalsRequired: ptr(2)}}},
			`bot.rules[0].match.risk[0]: "HIGH" is not a level a card shows`},
		{"blank tool", Config{Rules: []Rule{{Match: Match{Tool: []string{"execute sql"}}, ApprovalsRequired: ptr(2)}}},
			`bot.rules[0].match.tool[0]: "execute sql" is not a tool name`},
		{"blank channel", Config{Rules: []Rule{{Match: Match{Channel: []string{""}}, ApprovalsRequired: ptr(2)}}},
			`bot.rules[0].match.channel[0]: "" is not a channel id`},
		{"bad approver", Config{Rules: []Rule{{Match: Match{Tool: []string{"x"}}, Approvers: []string{"team:dba"}}}},
			`bot.rules[0].approvers[0]: "team:dba": the prefix must be one of user, group, role`},
		{"approver naming nobody", Config{Rules: []Rule{{Match: Match{Tool: []string{"x"}}, Approvers: []string{"group: "}}}},
			`bot.rules[0].approvers[0]: "group: " names nobody`},
		{"bad reason decision", Config{Channels: map[string]Settings{"C1": {ReasonRequired: []Decision{"cancel", "stop"}}}},
			`bot.channels.C1.reason_required[1]: "stop" is not a decision; use [cancel] or [approve, cancel]`},
		{"reason twice", Config{Rules: []Rule{{Match: Match{Tool: []string{"x"}}, ReasonRequired: []Decision{"cancel", "cancel"}}}},
			`bot.rules[0].reason_required[1]: "cancel" is listed twice`},
		{"negative expiry", Config{Rules: []Rule{{Match: Match{Tool: []string{"x"}}, Expiry: -time.Minute}}},
			"bot.rules[0].expiry: -1m0s is negative"},
		{"short expiry", Config{Rules: []Rule{{Match: Match{Tool: []string{"x"}}, Expiry: time.Second}}},
			"bot.rules[0].expiry: 1s leaves no time to decide"},
		{"reminder after the expiry", Config{Rules: []Rule{{Match: Match{Tool: []string{"x"}}, Expiry: 10 * time.Minute, RemindAfter: ptr(10 * time.Minute)}}},
			"bot.rules[0].remind_after: 10m0s is not before the expiry 10m0s"},
		{"channel reminder after a rule's expiry", Config{
			Channels: map[string]Settings{"C1": {RemindAfter: ptr(20 * time.Minute)}},
			Rules:    []Rule{{Match: Match{Tool: []string{"x"}}, Expiry: 10 * time.Minute}}},
			"bot.rules[0].expiry: 10m0s ends the card before remind_after 20m0s (with bot.channels.C1)"},
		{"negative reminder", Config{Default: Settings{RemindAfter: ptr(-time.Second)}},
			"bot.default.remind_after: -1s is negative; 0s turns it off"},
		{"escalation without people", Config{Default: Settings{EscalateAfter: ptr(time.Hour)}},
			"bot.default.escalate_to: escalate_after is 1h0m0s but nobody is listed"},
		{"escalation people without time", Config{Channels: map[string]Settings{"C1": {EscalateTo: []string{"group:leads"}}}},
			"bot.channels.C1.escalate_after: escalate_to is set (with bot.default) but not when"},
		{"rule escalation without people anywhere", Config{Rules: []Rule{{Match: Match{Tool: []string{"x"}}, EscalateAfter: ptr(time.Hour)}}},
			"bot.rules[0].escalate_to: escalate_after is 1h0m0s (with bot.default) but nobody"},
		{"escalate to anyone", Config{Default: Settings{EscalateAfter: ptr(time.Hour), EscalateTo: []string{"*"}}},
			`bot.default.escalate_to[0]: "*" mentions nobody`},
		{"approval channel with spaces", Config{Default: Settings{ApprovalChannel: " C1"}},
			`bot.default.approval_channel: " C1" has spaces around it`},
		{"duplicate names", Config{Rules: []Rule{{Name: "ddl", Match: Match{Tool: []string{"x"}}, Expiry: time.Hour}, {Name: "ddl", Match: Match{Tool: []string{"y"}}, Expiry: time.Hour}}},
			`bot.rules[1].name: "ddl" is also the name of bot.rules[0]`},
		{"blank name", Config{Rules: []Rule{{Name: "  ", Match: Match{Tool: []string{"x"}}, Expiry: time.Hour}}},
			"bot.rules[0].name: is blank"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if err == nil {
				t.Fatalf("New accepted it; want an error starting %q", tc.want)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error\n  %s\nwant it to start\n  %s", err, tc.want)
			}
		})
	}
}

// TestNewAccepts: the settings that are whole are accepted, including an
// escalation split between bot.default (when) and a channel (whom), and
// an explicit 0s that turns the default's off.
func TestNewAccepts(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"empty", Config{}},
		{"escalation split", Config{
			Default:  Settings{EscalateAfter: ptr(time.Hour), EscalateTo: []string{"group:leads"}},
			Channels: map[string]Settings{"C1": {EscalateTo: []string{"group:dba-leads"}}},
		}},
		{"escalation off in a channel", Config{
			Default:  Settings{EscalateAfter: ptr(time.Hour), EscalateTo: []string{"group:leads"}},
			Channels: map[string]Settings{"C1": {EscalateAfter: ptr(time.Duration(0))}},
		}},
		{"sql kinds in any case", Config{Rules: []Rule{{Match: Match{SQL: []string{"ddl", "drop  table", "Delete"}}, ApprovalsRequired: ptr(2)}}}},
		{"approvers [] is anyone", Config{Rules: []Rule{{Match: Match{Tool: []string{"x"}}, Approvers: []string{}}}}},
		{"on call, two approvals", Config{Rules: []Rule{{Match: Match{Tool: []string{"x"}}, Approvers: []string{"oncall:opsgenie:S1"}, ApprovalsRequired: ptr(2)}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.cfg); err != nil {
				t.Errorf("New: %v", err)
			}
		})
	}
}
