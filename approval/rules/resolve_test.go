package rules

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/risk/shell"
	"github.com/countersign/countersign/risk/sqlrisk"
)

// botFile is the bot: section as the bot will decode it: its Policy
// embeds Settings inline beside approvers and its own keys.
type botFile struct {
	Bot struct {
		Default  policy            `yaml:"default"`
		Channels map[string]policy `yaml:"channels"`
		Rules    []Rule            `yaml:"rules"`
	} `yaml:"bot"`
}

type policy struct {
	Approvers           []string `yaml:"approvers"`
	RequireSecondPerson *bool    `yaml:"require_second_person"`
	Quiet               *bool    `yaml:"quiet"`
	Settings            `yaml:",inline"`
}

// loadExample reads configs/rules.example.yaml strictly (an unknown key is
// an error) and builds its rules.
func loadExample(t *testing.T) (botFile, *Rules) {
	t.Helper()
	f, err := os.Open("../../configs/rules.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var bf botFile
	dec := yaml.NewDecoder(f)
	dec.KnownFields(true)
	if err := dec.Decode(&bf); err != nil {
		t.Fatalf("decode configs/rules.example.yaml: %v", err)
	}
	cfg := Config{Default: bf.Bot.Default.Settings, Channels: map[string]Settings{}, Rules: bf.Bot.Rules}
	for id, p := range bf.Bot.Channels {
		cfg.Channels[id] = p.Settings
	}
	rs, err := New(cfg)
	if err != nil {
		t.Fatalf("configs/rules.example.yaml: %v", err)
	}
	return bf, rs
}

// channelOf is the bot's effective policy of a channel: bot.default with
// the channel's entry over it.
func channelOf(bf botFile, id string) Channel {
	ch := Channel{Approvers: bf.Bot.Default.Approvers, Settings: bf.Bot.Default.Settings}
	if p, ok := bf.Bot.Channels[id]; ok {
		if p.Approvers != nil {
			ch.Approvers = p.Approvers
		}
		ch.Settings = ch.Settings.Over(p.Settings)
	}
	return ch
}

// facts judges a call with the default policy, as the bot will.
func facts(t *testing.T, tool, args, channel string) Facts {
	t.Helper()
	p, err := risk.New(risk.Config{})
	if err != nil {
		t.Fatal(err)
	}
	c := risk.Call{Tool: tool, Args: json.RawMessage(args), Channel: channel}
	return Facts{Tool: tool, Platform: "slack", Channel: channel, Verdict: p.Assess(c), Call: p.Facts(c)}
}

// TestReadmeExample is the worked example of the README, from
// configs/rules.example.yaml: two of group:dba for SQL DDL in prod, one of
// group:oncall for a service restart, the channel's settings otherwise.
func TestReadmeExample(t *testing.T) {
	bf, rs := loadExample(t)
	prod := channelOf(bf, "C0123PROD")
	other := channelOf(bf, "C0999DEV")
	ddl := Requirement{
		Rule: "prod-ddl", Approvers: []string{"group:dba"}, Need: 2,
		Reasons: []Decision{Approve, Cancel}, Expiry: time.Hour,
		RemindAfter: 10 * time.Minute, EscalateAfter: 30 * time.Minute, EscalateTo: []string{"group:oncall-leads"},
		ApprovalChannel: "C0456OPS",
	}
	tests := []struct {
		name string
		ch   Channel
		f    Facts
		want Requirement
	}{
		{"DDL in prod: two DBAs", prod, facts(t, risk.ToolSQL, `{"sql": "ALTER TABLE orders ADD COLUMN note TEXT"}`, "C0123PROD"), ddl},
		{"DROP TABLE in prod is DDL", prod, facts(t, risk.ToolSQL, `{"sql": "DROP TABLE orders_old"}`, "C0123PROD"), ddl},
		{"SQL that cannot be read in prod: treated as DDL", prod, facts(t, risk.ToolSQL, `{"sql": "ALTER TABL orders"}`, "C0123PROD"), ddl},
		{"DML in prod: the channel's settings", prod, facts(t, risk.ToolSQL, `{"sql": "UPDATE orders SET state = 'x' WHERE id = 7"}`, "C0123PROD"),
			Requirement{Approvers: []string{"group:oncall", "group:dba"}, Need: 1, Reasons: []Decision{Cancel},
				RemindAfter: 10 * time.Minute, EscalateAfter: 30 * time.Minute, EscalateTo: []string{"group:oncall-leads"}, ApprovalChannel: "C0456OPS"}},
		{"DDL elsewhere: the default", other, facts(t, risk.ToolSQL, `{"sql": "ALTER TABLE t ADD c INT"}`, "C0999DEV"),
			Requirement{Approvers: []string{}, Need: 1, Reasons: []Decision{Cancel}, RemindAfter: 15 * time.Minute}},
		{"systemctl restart: one of on-call", other, facts(t, risk.ToolCommand, `{"command": "sudo systemctl restart nginx"}`, "C0999DEV"),
			Requirement{Rule: "service-restart", Approvers: []string{"group:oncall"}, Need: 1, Reasons: []Decision{Cancel}, RemindAfter: 15 * time.Minute}},
		{"service NAME restart in prod: one of on-call, prod's reminders", prod, facts(t, risk.ToolCommand, `{"command": "service nginx restart"}`, "C0123PROD"),
			Requirement{Rule: "service-restart", Approvers: []string{"group:oncall"}, Need: 1, Reasons: []Decision{Cancel},
				RemindAfter: 10 * time.Minute, EscalateAfter: 30 * time.Minute, EscalateTo: []string{"group:oncall-leads"}, ApprovalChannel: "C0456OPS"}},
		{"systemctl status is no restart", other, facts(t, risk.ToolCommand, `{"command": "systemctl stop nginx"}`, "C0999DEV"),
			Requirement{Approvers: []string{}, Need: 1, Reasons: []Decision{Cancel}, RemindAfter: 15 * time.Minute}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := rs.Resolve(tc.ch, tc.f)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Resolve (-want +got):\n%s", diff)
			}
		})
	}
}

// TestResolve: each match key, first match wins, unset fields keep the
// channel's.
func TestResolve(t *testing.T) {
	sqlFacts := func(unread bool, kinds ...string) Facts {
		f := Facts{Tool: risk.ToolSQL, Platform: "slack", Channel: "C1", Verdict: risk.Verdict{Rule: risk.RuleDanger, Risk: risk.High}}
		for _, k := range kinds {
			row, _, _ := sqlrisk.KindClass(k)
			f.Call.Statements = append(f.Call.Statements, row)
		}
		f.Call.Unread = unread
		return f
	}
	cmdFacts := func(unread bool, cmds ...shell.Command) Facts {
		return Facts{Tool: risk.ToolCommand, Platform: "discord", Channel: "D1", Verdict: risk.Verdict{Rule: risk.RuleDefault, Risk: risk.Medium},
			Call: risk.Facts{Commands: cmds, Unread: unread}}
	}
	httpFacts := Facts{Tool: risk.ToolHTTP, Platform: "slack", Channel: "C1", Verdict: risk.Verdict{Rule: risk.RuleLLM, Risk: risk.High}}
	two := ptr(2)
	rules := []Rule{
		{Name: "drop", Match: Match{SQL: []string{"drop table"}}, ApprovalsRequired: ptr(3), Approvers: []string{"group:dba"}},
		{Name: "ddl", Match: Match{Tool: []string{risk.ToolSQL}, SQL: []string{"DDL"}}, ApprovalsRequired: two},
		{Name: "restart", Match: Match{Command: []string{"kubectl rollout restart"}}, Approvers: []string{"group:oncall"}},
		{Name: "rm", Match: Match{Command: []string{"rm"}, Channel: []string{"discord:D1"}}, ReasonRequired: []Decision{Approve, Cancel}},
		{Name: "danger", Match: Match{Rule: []risk.Rule{risk.RuleDanger}}, Expiry: time.Hour},
		{Name: "high-llm", Match: Match{Rule: []risk.Rule{risk.RuleLLM}, Risk: []risk.Level{risk.High}}, RemindAfter: ptr(time.Minute)},
	}
	rs, err := New(Config{Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	base := Channel{Approvers: []string{"U9"}, Settings: Settings{ReasonRequired: []Decision{Cancel}, RemindAfter: ptr(5 * time.Minute)}}
	req := func(rule string, approvers []string, need int, reasons []Decision, expiry, remind time.Duration) Requirement {
		return Requirement{Rule: rule, Approvers: approvers, Need: need, Reasons: reasons, Expiry: expiry, RemindAfter: remind}
	}
	u9, cancel := []string{"U9"}, []Decision{Cancel}
	tests := []struct {
		name string
		f    Facts
		want Requirement
	}{
		{"a kind wins before its class", sqlFacts(false, "DROP TABLE"), req("drop", []string{"group:dba"}, 3, cancel, 0, 5*time.Minute)},
		{"a class", sqlFacts(false, "CREATE INDEX"), req("ddl", u9, 2, cancel, 0, 5*time.Minute)},
		{"any statement of several", sqlFacts(false, "SELECT", "ALTER TABLE"), req("ddl", u9, 2, cancel, 0, 5*time.Minute)},
		{"unread SQL matches the first sql rule", sqlFacts(true), req("drop", []string{"group:dba"}, 3, cancel, 0, 5*time.Minute)},
		{"no sql rule: the policy rule", sqlFacts(false, "DELETE"), req("danger", u9, 1, cancel, time.Hour, 5*time.Minute)},
		{"command with words in order", cmdFacts(false, shell.Command{Name: "kubectl", Args: []string{"-n", "prod", "rollout", "restart", "deploy/api"}}),
			req("restart", []string{"group:oncall"}, 1, cancel, 0, 5*time.Minute)},
		{"command words out of order", cmdFacts(false, shell.Command{Name: "kubectl", Args: []string{"restart", "rollout"}}),
			req("", u9, 1, cancel, 0, 5*time.Minute)},
		{"command name and platform channel", cmdFacts(false, shell.Command{Name: "rm", Args: []string{"-f", "x"}}),
			req("rm", u9, 1, []Decision{Approve, Cancel}, 0, 5*time.Minute)},
		{"unread command matches the first command rule", cmdFacts(true), req("restart", []string{"group:oncall"}, 1, cancel, 0, 5*time.Minute)},
		{"rule and risk together", httpFacts, req("high-llm", u9, 1, cancel, 0, time.Minute)},
		{"no rule matches", Facts{Tool: "file_operations", Verdict: risk.Verdict{Rule: risk.RuleDefault, Risk: risk.Medium}}, req("", u9, 1, cancel, 0, 5*time.Minute)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, rs.Resolve(base, tc.f)); diff != "" {
				t.Errorf("Resolve (-want +got):\n%s", diff)
			}
		})
	}
	// No rules at all: the channel's settings alone.
	var none *Rules
	if got := none.Resolve(base, sqlFacts(false, "DROP TABLE")); got.Rule != "" || got.Need != 1 {
		t.Errorf("nil rules resolved to %+v", got)
	}
}

func TestEscalated(t *testing.T) {
	tests := []struct {
		name string
		req  Requirement
		want []string
	}{
		{"joins", Requirement{Approvers: []string{"group:dba"}, EscalateTo: []string{"group:leads", "group:dba"}}, []string{"group:dba", "group:leads"}},
		{"anyone stays anyone", Requirement{Approvers: nil, EscalateTo: []string{"group:leads"}}, nil},
		{"star stays star", Requirement{Approvers: []string{"*"}, EscalateTo: []string{"group:leads"}}, []string{"*"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := slices.Clone(tc.req.Approvers)
			if diff := cmp.Diff(tc.want, tc.req.Escalated().Approvers); diff != "" {
				t.Errorf("Escalated approvers (-want +got):\n%s", diff)
			}
			if !slices.Equal(before, tc.req.Approvers) {
				t.Errorf("Escalated changed its receiver's approvers to %v", tc.req.Approvers)
			}
		})
	}
}
