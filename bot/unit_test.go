package bot

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/rules"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
	"github.com/countersign/countersign/tools/shelltool"
	"github.com/countersign/countersign/tools/sqltool"
)

func TestPolicy(t *testing.T) {
	no := false
	cfg := Config{
		Default: Policy{},
		Channels: map[string]Policy{
			"prod":          {Approvers: []string{"carol", "group:dba", "role:admin"}},
			"slack:lab":     {RequireSecondPerson: &no},
			"lab":           {Approvers: []string{"nobody"}}, // shadowed by slack:lab for slack
			"terminal:solo": {RequireSecondPerson: &no, Approvers: []string{"*"}},
			"spaced":        {Approvers: []string{" dave "}},
		},
	}.WithDefaults()
	alice := adapters.User{ID: "alice", Name: "alice"}
	bob := adapters.User{ID: "U2", Name: "bob"}
	dba := adapters.User{ID: "U3", Groups: []string{"dba"}}
	admin := adapters.User{ID: "U4", Roles: []string{"admin"}}
	tests := []struct {
		name      string
		platform  string
		channel   string
		user      adapters.User
		requester string
		approve   bool
		refused   bool
	}{
		{"anyone approves another's call by default", "terminal", "terminal", bob, "alice", true, false},
		{"own call is refused by default", "terminal", "terminal", alice, "alice", true, true},
		{"own call can always be cancelled", "terminal", "terminal", alice, "alice", false, false},
		{"approver by id", "slack", "prod", adapters.User{ID: "carol", Name: "Carol"}, "alice", true, false},
		{"a display name is not an identity", "slack", "prod", adapters.User{ID: "U9", Name: "carol"}, "alice", true, true},
		{"nor does it let a stranger cancel", "slack", "prod", adapters.User{ID: "U9", Name: "carol"}, "alice", false, true},
		{"ids are case-sensitive", "slack", "prod", adapters.User{ID: "Carol"}, "alice", true, true},
		{"an id that is a prefix is another id", "slack", "prod", adapters.User{ID: "caro"}, "alice", true, true},
		{"an entry's white space is ignored", "slack", "spaced", adapters.User{ID: "dave"}, "alice", true, false},
		{"no user id", "terminal", "terminal", adapters.User{Name: "bob"}, "alice", true, true},
		{"no user id cannot cancel either", "terminal", "terminal", adapters.User{}, "", false, true},
		{"approver by group", "slack", "prod", dba, "alice", true, false},
		{"approver by role", "slack", "prod", admin, "alice", true, false},
		{"not an approver", "slack", "prod", bob, "alice", true, true},
		{"not an approver cannot cancel another's call", "slack", "prod", bob, "alice", false, true},
		{"requester cancels even when not an approver", "slack", "prod", bob, "U2", false, false},
		{"platform-specific key wins", "slack", "lab", alice, "alice", true, false},
		{"plain key for other platforms", "discord", "lab", bob, "alice", true, true},
		{"second person switched off", "terminal", "solo", alice, "alice", true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := cfg.policy(tc.platform, tc.channel)
			why, _ := p.refusalFor(rules.Requirement{Approvers: p.Approvers}, tc.user, tc.requester, tc.approve)
			if (why != "") != tc.refused {
				t.Errorf("refusal = %q, want refused: %v", why, tc.refused)
			}
		})
	}
}

func TestConfigYAMLAndValidate(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		wantErr string
	}{
		{"empty", "", ""},
		{"full", `
default:
  approvers: [alice, "group:oncall"]
  require_second_person: true
channels:
  C0PROD:
    approvers: ["role:dba"]
sweep_interval: 2s
dedupe_window: 5m
dedupe_size: 100
shutdown_grace: 10s
card_output: 1000
queue_size: 5
`, ""},
		{"bad prefix", "default: {approvers: [\"team:x\"]}", "bot.default.approvers[0]"},
		{"empty group", "channels: {ops: {approvers: [\"group:\"]}}", "bot.channels.ops.approvers[0]"},
		{"negative interval", "sweep_interval: -1s", "bot.sweep_interval"},
		{"tiny interval", "sweep_interval: 1ms", "bot.sweep_interval"},
		{"negative size", "card_output: -5", "bot.card_output"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var c Config
			dec := yaml.NewDecoder(strings.NewReader(tc.yaml))
			dec.KnownFields(true)
			if err := dec.Decode(&c); err != nil && tc.yaml != "" {
				t.Fatalf("decode: %v", err)
			}
			err := c.Validate()
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("Validate() = %v, want an error naming %q", err, tc.wantErr)
			}
		})
	}
}

func TestDedupe(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	d := newDedupe(3, time.Minute)
	steps := []struct {
		id    string
		at    time.Duration
		first bool
	}{
		{"a", 0, true},
		{"a", time.Second, false},     // a redelivery
		{"b", 2 * time.Second, true},  //
		{"c", 3 * time.Second, true},  //
		{"d", 4 * time.Second, true},  // evicts a: the set holds 3
		{"a", 5 * time.Second, true},  // forgotten by size
		{"b", 6 * time.Second, true},  // evicted by a's return
		{"b", 7 * time.Second, false}, //
		{"b", 2 * time.Minute, true},  // forgotten by time
	}
	for i, st := range steps {
		if got := d.first(st.id, t0.Add(st.at)); got != st.first {
			t.Errorf("step %d: first(%q) = %v, want %v", i, st.id, got, st.first)
		}
	}
	if len(d.seen) > 3 || len(d.order) > 3 {
		t.Errorf("the set grew past its bound: %d ids, %d in order", len(d.seen), len(d.order))
	}
}

func TestCard(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 5, 40, 0, 0, time.UTC)
	code0 := 0
	base := func() *approval.Approval {
		return &approval.Approval{
			ID: "abcdefghijklmnopqrstuvwxyz", Tool: "execute_command",
			Args:         json.RawMessage(`{"command":"rm -rf ./tmp_*","risk_level":"high","workdir":"sub"}`),
			Verdict:      risk.Verdict{Decision: risk.Confirm, Risk: risk.High, Rule: risk.RuleDanger, Reasons: []string{"recursive rm"}, LLMLevel: risk.High},
			Preview:      &tools.Preview{Summary: "2 paths match", Items: []string{"tmp_a", "tmp_b"}, Total: 5},
			Requester:    approval.User{ID: "alice", Name: "alice"},
			Conversation: approval.Conversation{Platform: "terminal", Channel: "terminal", Thread: "main"},
			CreatedAt:    t0, ExpiresAt: t0.Add(15 * time.Minute), State: approval.Pending,
		}
	}
	bob := &approval.User{ID: "bob", Name: "bob"}
	tests := []struct {
		name   string
		a      func() *approval.Approval
		p      *tools.Progress
		want   adapters.Card
		fields func(adapters.Card) adapters.Card // picks the fields compared
	}{
		{
			name: "pending",
			a:    base,
			want: adapters.Card{
				ApprovalID: "abcdefghijklmnopqrstuvwxyz", Title: "Run this command?", Requester: "alice", Conversation: "terminal",
				Tool: "execute_command", Operation: "rm -rf ./tmp_*\n(workdir: sub)", Risk: "high", Reasons: []string{"recursive rm"},
				LLMLevel: "high", Preview: &adapters.Preview{Summary: "2 paths match", Items: []string{"tmp_a", "tmp_b"}, More: 3},
				ExpiresAt: t0.Add(15 * time.Minute), State: "pending", StateLine: "waiting for a decision · Needs an approval from anyone in the channel.",
				Buttons: []adapters.Button{{Label: "Approve", Approve: true, Value: "abcdefghijklmnopqrstuvwxyz"}, {Label: "Cancel", Value: "abcdefghijklmnopqrstuvwxyz"},
					{Label: "Edit", Edit: true, Value: "abcdefghijklmnopqrstuvwxyz"}},
			},
			fields: func(c adapters.Card) adapters.Card { return c },
		},
		{
			name: "people are named by name, never by id",
			a: func() *approval.Approval {
				a := base()
				a.Requester = approval.User{ID: "U1", Name: "alice"}
				a.State, a.DecidedBy, a.DecidedAt = approval.Cancelled, &approval.User{ID: "U2", Name: "bob"}, t0.Add(time.Minute)
				return a
			},
			want:   adapters.Card{Requester: "alice", State: "cancelled", StateLine: "cancelled by bob at 05:41:00 UTC"},
			fields: func(c adapters.Card) adapters.Card { o := outcomeFields(c); o.Requester = c.Requester; return o },
		},
		{
			name: "running with progress",
			a: func() *approval.Approval {
				a := base()
				a.State, a.DecidedBy, a.DecidedAt, a.StartedAt = approval.Running, bob, t0.Add(time.Minute), t0.Add(time.Minute)
				return a
			},
			p: &tools.Progress{ElapsedMS: 4200, Tail: "removing tmp_a"},
			want: adapters.Card{State: "running", StateLine: "approved by bob at 05:41:00 UTC · running for 4s", Output: "removing tmp_a",
				Buttons: []adapters.Button{{Label: "Stop", Stop: true, Value: "abcdefghijklmnopqrstuvwxyz"}}},
			fields: outcomeFields,
		},
		{
			name: "done",
			a: func() *approval.Approval {
				a := base()
				a.State, a.DecidedBy, a.DecidedAt = approval.Done, bob, t0.Add(time.Minute)
				a.Result = &tools.Result{Status: tools.StatusOK, Executed: true, ExitCode: &code0, Stdout: "removed\n", DurationMS: 12}
				return a
			},
			want:   adapters.Card{State: "done", StateLine: "approved by bob at 05:41:00 UTC · done: exit code 0 in 12ms", Output: "removed\n"},
			fields: outcomeFields,
		},
		{
			name: "failed with long output",
			a: func() *approval.Approval {
				a := base()
				code := 1
				a.State, a.DecidedBy, a.DecidedAt = approval.Failed, bob, t0.Add(time.Minute)
				a.Result = &tools.Result{Status: tools.StatusError, Executed: true, ExitCode: &code, Stderr: strings.Repeat("x", 30), DurationMS: 1500,
					Truncated: true, Note: "stderr was 1,000,000 bytes; only the first 65,536 are shown"}
				return a
			},
			want: adapters.Card{State: "failed", StateLine: "approved by bob at 05:41:00 UTC · failed: exit code 1 in 1.5s",
				Output: "stderr:\nxxxxxxxxxxxx", Note: "stderr was 1,000,000 bytes; only the first 65,536 are shown; output cut to the first 20 of 38 bytes on this card"},
			fields: outcomeFields,
		},
		{
			name: "cancelled with a reason",
			a: func() *approval.Approval {
				a := base()
				a.State, a.DecidedBy, a.DecidedAt, a.Reason = approval.Cancelled, &approval.User{ID: "alice"}, t0.Add(2*time.Minute), "wrong folder"
				return a
			},
			want:   adapters.Card{State: "cancelled", StateLine: "cancelled by alice at 05:42:00 UTC: wrong folder"},
			fields: outcomeFields,
		},
		{
			name: "expired",
			a: func() *approval.Approval {
				a := base()
				a.State, a.DecidedAt = approval.Expired, t0.Add(15*time.Minute)
				return a
			},
			want:   adapters.Card{State: "expired", StateLine: "expired at 05:55:00 UTC: nobody decided in time"},
			fields: outcomeFields,
		},
		{
			name: "sql rows",
			a: func() *approval.Approval {
				a := base()
				n := 2
				a.Tool, a.Args = "execute_sql", json.RawMessage(`{"sql":"SELECT id, name FROM t"}`)
				a.State, a.DecidedBy, a.DecidedAt = approval.Done, bob, t0.Add(time.Minute)
				a.Result = &tools.Result{Status: tools.StatusOK, Executed: true, Columns: []tools.Column{{Name: "id"}, {Name: "name"}},
					Rows: [][]any{{1, "a"}, {2, nil}}, RowCount: &n, DurationMS: 3}
				return a
			},
			want: adapters.Card{Operation: "SELECT id, name FROM t", State: "done", StateLine: "approved by bob at 05:41:00 UTC · done: 2 rows in 3ms",
				Output: "id | name\n1  | a   \n", Note: "output cut to the first 20 of 30 bytes on this card"},
			fields: func(c adapters.Card) adapters.Card {
				o := outcomeFields(c)
				o.Operation = c.Operation
				return o
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.fields(cardBot(t, t0.Add(10*time.Minute), 20).card(tc.a(), tc.p))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("card (-want +got):\n%s", diff)
			}
		})
	}
}

func outcomeFields(c adapters.Card) adapters.Card {
	return adapters.Card{State: c.State, StateLine: c.StateLine, Output: c.Output, Note: c.Note, Buttons: c.Buttons}
}

func BenchmarkCard(b *testing.B) {
	t0 := time.Date(2026, 11, 22, 5, 40, 0, 0, time.UTC)
	code := 0
	a := &approval.Approval{
		ID: "abcdefghijklmnopqrstuvwxyz", Tool: "execute_command", Args: json.RawMessage(`{"command":"rm -rf ./tmp_*"}`),
		Verdict:   risk.Verdict{Decision: risk.Confirm, Risk: risk.High, Reasons: []string{"recursive rm"}},
		Preview:   &tools.Preview{Summary: "2 paths", Items: []string{"tmp_a", "tmp_b"}},
		Requester: approval.User{ID: "alice"}, DecidedBy: &approval.User{ID: "bob"}, DecidedAt: t0,
		State: approval.Done, Result: &tools.Result{Status: tools.StatusOK, Executed: true, ExitCode: &code, Stdout: strings.Repeat("line\n", 100)},
	}
	bot := cardBot(b, t0, DefaultCardOutput)
	b.ReportAllocs()
	for b.Loop() {
		_ = bot.card(a, nil)
	}
}

// TestCardSaysTheOutcomeOfTheChat: a finished card says how the run ended
// in the same words as the chat (tools.Result.Outcome; the chat's side is
// agent's TestRenderSaysTheOutcomeOfTheCard).
func TestCardSaysTheOutcomeOfTheChat(t *testing.T) {
	zero, two := 0, 2
	var one int64 = 1
	t0 := time.Date(2026, 11, 22, 5, 40, 0, 0, time.UTC)
	for _, r := range []tools.Result{
		{Status: tools.StatusOK, Executed: true, ExitCode: &zero, DurationMS: 12},
		{Status: tools.StatusError, Executed: true, ExitCode: &two, Error: "no such file"},
		{Status: tools.StatusOK, Executed: true, RowsAffected: &one},
		{Status: tools.StatusOK, Executed: true, RowCount: &two},
		{Status: tools.StatusOK, Executed: true, HTTPStatus: 200},
	} {
		state := approval.Done
		if r.Status != tools.StatusOK {
			state = approval.Failed
		}
		a := &approval.Approval{ID: "a1", Tool: "execute_command", Args: json.RawMessage(`{"command":"true"}`),
			State: state, Result: &r, StartedAt: t0, EndedAt: t0.Add(time.Second)}
		c := cardBot(t, t0, 2000).card(a, nil)
		if !strings.Contains(c.StateLine, ": "+r.Outcome()) {
			t.Errorf("state line %q, want it to say %q", c.StateLine, r.Outcome())
		}
	}
}

// cardBot is a bot with only what drawing a card needs: the clock, the
// output cap, and the four tools, which describe their calls.
func cardBot(t testing.TB, now time.Time, outputCap int) *Bot {
	t.Helper()
	sh, err := shelltool.New(shelltool.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	sq, err := sqltool.New(sqltool.Config{Connections: map[string]sqltool.Connection{"main": {DSN: "u:p@tcp(127.0.0.1:1)/db"}}})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tools.NewRegistry(sh, sq)
	if err != nil {
		t.Fatal(err)
	}
	return &Bot{tools: reg, now: func() time.Time { return now }, cfg: Config{CardOutput: outputCap}}
}
