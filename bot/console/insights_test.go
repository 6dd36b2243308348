package console

import (
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/tools"
)

func TestInsights(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	var events []approval.Event
	ask := func(id, ch, op string, at time.Time) {
		events = append(events, approval.Event{At: at, Kind: approval.KindAssessment, Decision: approval.DecisionConfirm,
			ApprovalID: id, Tool: "execute_command", Operation: op, Channel: ch})
	}
	decide := func(id, ch, who string, approve bool, at time.Time) {
		e := approval.Event{At: at, Kind: approval.KindClick, Actor: who, ApprovalID: id, Channel: ch,
			Decision: approval.DecisionCancel, Outcome: approval.Outcome(approval.Cancelled)}
		if approve {
			e.Decision, e.Outcome = approval.DecisionApprove, approval.Outcome(approval.Approved)
		}
		events = append(events, e)
	}
	// Three approvals of one restart, never cancelled: a suggestion.
	for i, wait := range []time.Duration{10 * time.Second, 20 * time.Second, 90 * time.Second} {
		id := "r" + string(rune('a'+i))
		at := t0.Add(time.Duration(i) * 24 * time.Hour)
		ask(id, "C1", "systemctl restart nginx", at)
		decide(id, "C1", "bob", true, at.Add(wait))
		// A late click loses: not a second decision.
		events = append(events, approval.Event{At: at.Add(wait + time.Second), Kind: approval.KindClick, Actor: "carol",
			ApprovalID: id, Decision: approval.DecisionApprove, Outcome: approval.OutcomeLost})
	}
	// Approved three times but cancelled once: no suggestion.
	for i := range 4 {
		id := "d" + string(rune('a'+i))
		ask(id, "C2", "rm -rf ./tmp_*", t0)
		decide(id, "C2", "alice", i < 3, t0.Add(time.Minute))
	}
	// Masked: never suggested.
	for i := range 3 {
		id := "m" + string(rune('a'+i))
		ask(id, "C2", "curl -H 'Authorization: "+tools.Mask+"' https://x", t0)
		decide(id, "C2", "alice", true, t0.Add(time.Minute))
	}
	ask("ex", "C1", "reboot", t0)
	events = append(events, approval.Event{At: t0.Add(time.Hour), Kind: approval.KindExpiry, ApprovalID: "ex"})
	// A decision on a card asked before the window: not counted.
	decide("old", "C1", "bob", true, t0)

	// The model's levels: said low on the restarts (the code said high:
	// raised), high on one delete (agreed), and nothing on the rest.
	for i := range events {
		e := &events[i]
		if e.Kind != approval.KindAssessment {
			continue
		}
		switch {
		case strings.HasPrefix(e.ApprovalID, "r"):
			e.LLMLevel, e.Risk = "low", "high"
		case e.ApprovalID == "dd":
			e.LLMLevel, e.Risk = "high", "high"
		}
	}
	events = append(events, approval.Event{At: t0, Kind: approval.KindAssessment, Decision: approval.DecisionAuto,
		Tool: "execute_command", Operation: "ls", LLMLevel: "low", Risk: "low"})

	r := insights(events, 3)
	want := []calibration{
		{Level: "low", Calls: 4, Agreed: 1, Raised: 3, Carded: 3, Approved: 3},
		{Level: "high", Calls: 1, Agreed: 1, Carded: 1, Cancelled: 1},
	}
	if len(r.Calibration) != len(want) || r.Calibration[0] != want[0] || r.Calibration[1] != want[1] {
		t.Errorf("calibration %+v, want %+v", r.Calibration, want)
	}
	if r.Asked != 11 || r.Expired != 1 {
		t.Errorf("asked %d, expired %d; want 11 and 1", r.Asked, r.Expired)
	}
	if len(r.Suggestions) != 1 || r.Suggestions[0].Operation != "systemctl restart nginx" || r.Suggestions[0].Approved != 3 ||
		!strings.Contains(r.Suggestions[0].YAML, "execute_command:\n      preauthorized:\n        - \"systemctl restart nginx\"") {
		t.Errorf("suggestions %+v; want the restart alone, as a preauthorized entry", r.Suggestions)
	}
	if len(r.Channels) != 2 || r.Channels[0].Channel != "C1" || r.Channels[0].P50 != 20*time.Second || r.Channels[0].P95 != 90*time.Second {
		t.Errorf("times to decision %+v; want C1 p50 20s p95 90s", r.Channels)
	}
	if len(r.Days) != 3 || r.Days[0] != (dayCount{"2026-11-20", 9}) {
		t.Errorf("cards per day %+v", r.Days)
	}
	if len(r.Approvers) != 2 || r.Approvers[0] != (count{"alice", 6}) || r.Approvers[1] != (count{"bob", 3}) {
		t.Errorf("approvers %+v; want alice 6, bob 3: who decided (the lost clicks and the card before the window left out)", r.Approvers)
	}
}
