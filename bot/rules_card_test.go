package bot

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/memstore"
	"github.com/countersign/countersign/approval/rules"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
)

// TestCardHeadlines: a card's title asks while it waits and says what
// happened once something did; a waiting card says who may decide and how
// far the count is.
func TestCardHeadlines(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 5, 40, 0, 0, time.UTC)
	mem := memstore.New(memstore.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { _ = mem.Close() })
	b := cardBot(t, t0.Add(time.Minute), 2000)
	b.store, b.work, b.log = mem, context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil))
	bob := &approval.User{ID: "U2", Name: "bob"}
	code0, code1 := 0, 1
	base := func() *approval.Approval {
		return &approval.Approval{
			ToolCallID: approval.NewID(), Tool: "execute_command",
			Args:         json.RawMessage(`{"command":"rm -rf ./tmp_*"}`),
			Verdict:      risk.Verdict{Decision: risk.Confirm, Risk: risk.High, Rule: risk.RuleDanger},
			Requester:    approval.User{ID: "U1", Name: "alice"},
			Conversation: approval.Conversation{Platform: "slack", Channel: "C1", Thread: "T1"},
			CreatedAt:    t0, ExpiresAt: t0.Add(time.Hour), State: approval.Pending,
			Requirement: approval.Requirement{Rule: "prod-ddl", Approvers: []string{"group:dba"}, Need: 2},
		}
	}
	stored, _, err := mem.Create(context.Background(), base())
	if err != nil {
		t.Fatal(err)
	}
	c := b.card(stored, nil)
	if c.Title != "Run this command?" || c.StateLine != "waiting for a decision · Needs two approvals from @dba." {
		t.Errorf("pending card: %q / %q", c.Title, c.StateLine)
	}
	if _, err := mem.Approve(context.Background(), stored.ID, approval.Vote{By: *bob, At: t0.Add(time.Minute), Need: 2}); err != nil {
		t.Fatal(err)
	}
	if c := b.card(stored, nil); c.StateLine != "waiting for a decision · 1 of 2: bob ✓ — one more from @dba" {
		t.Errorf("counted card: %q", c.StateLine)
	}

	at := t0.Add(2 * time.Minute)
	for _, tc := range []struct {
		name, want string
		set        func(a *approval.Approval)
	}{
		{"approved", "Approved by bob: starting", func(a *approval.Approval) { a.State, a.DecidedBy = approval.Approved, bob }},
		{"running", "Running: approved by bob", func(a *approval.Approval) { a.State, a.DecidedBy = approval.Running, bob }},
		{"ran", "Ran: approved by bob", func(a *approval.Approval) {
			a.State, a.DecidedBy = approval.Done, bob
			a.Result = &tools.Result{Status: tools.StatusOK, Executed: true, ExitCode: &code0}
		}},
		{"failed", "Failed: approved by bob", func(a *approval.Approval) {
			a.State, a.DecidedBy = approval.Failed, bob
			a.Result = &tools.Result{Status: tools.StatusError, Executed: true, ExitCode: &code1}
		}},
		{"not run", "Did not run: approved by bob", func(a *approval.Approval) {
			a.State, a.DecidedBy = approval.Failed, bob
			r := tools.NotRun(tools.StatusError, "the tool is gone")
			a.Result = &r
		}},
		{"stopped", "Stopped by carol", func(a *approval.Approval) {
			a.State, a.DecidedBy = approval.Failed, bob
			a.Result = &tools.Result{Status: tools.StatusError, Executed: true, Error: "stopped by carol while it ran"}
		}},
		{"cancelled", "Cancelled by bob", func(a *approval.Approval) { a.State, a.DecidedBy, a.Reason = approval.Cancelled, bob, "wrong folder" }},
		{"expired", "Expired: nobody decided in time", func(a *approval.Approval) { a.State = approval.Expired }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := base()
			a.ID, a.DecidedAt = approval.NewID(), at
			tc.set(a)
			if got := b.card(a, nil).Title; got != tc.want {
				t.Errorf("title = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRulesConfig: bot.rules and the channel settings are read from YAML
// (the settings inline beside approvers), merged channel over default, and
// validated at start with errors that name the entry.
func TestRulesConfig(t *testing.T) {
	var cfg Config
	err := yaml.Unmarshal([]byte(`
default:
  approvals_required: 1
  reason_required: [cancel]
channels:
  C0123PROD:
    approvers: ["group:oncall"]
    approvals_required: 2
    remind_after: 10m
rules:
  - name: prod-ddl
    match: {tool: [execute_sql], sql: [DDL], channel: [C0123PROD]}
    approvers: ["group:dba"]
    approvals_required: 2
    reason_required: [approve, cancel]
`), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	p := cfg.policy("slack", "C0123PROD")
	if *p.ApprovalsRequired != 2 || *p.RemindAfter != 10*time.Minute || len(p.ReasonRequired) != 1 {
		t.Errorf("merged policy = %+v", p.Settings)
	}
	b := &Bot{cfg: cfg}
	if b.rules, err = cfg.compileRules(); err != nil {
		t.Fatal(err)
	}
	pol, _ := risk.New(risk.Config{})
	call := func(tool, args string) risk.Call {
		return risk.Call{Tool: tool, Args: json.RawMessage(args), Channel: "C0123PROD"}
	}
	ddl := b.require(rulesFacts(pol, "slack", call("execute_sql", `{"sql":"ALTER TABLE t ADD c int"}`)))
	if ddl.Rule != "prod-ddl" || ddl.Need != 2 || ddl.Approvers[0] != "group:dba" || len(ddl.Reasons) != 2 || ddl.RemindAfter != 10*time.Minute {
		t.Errorf("DDL in prod = %+v", ddl)
	}
	dml := b.require(rulesFacts(pol, "slack", call("execute_sql", `{"sql":"DELETE FROM t"}`)))
	if dml.Rule != "" || dml.Need != 2 || dml.Approvers[0] != "group:oncall" {
		t.Errorf("DML in prod = %+v", dml)
	}

	cfg.Rules[0].Match.SQL = []string{"TRUNCATE THE LOT"}
	if err := cfg.Validate(); err == nil || err.Error()[:len("bot.rules[0].match.sql[0]")] != "bot.rules[0].match.sql[0]" {
		t.Errorf("a bad rule: Validate = %v, want an error naming bot.rules[0].match.sql[0]", err)
	}
}

func rulesFacts(pol *risk.Policy, platform string, c risk.Call) rules.Facts {
	return rules.Facts{Tool: c.Tool, Platform: platform, Channel: c.Channel, Verdict: pol.Assess(c), Call: pol.Facts(c)}
}
