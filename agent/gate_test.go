package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/tools"
)

// TestEditAnswersTheModelOnce: a person's edit of the model's waiting
// call is judged afresh (the edit's own risk_level "low" does not count,
// nor would the model's) and always becomes a new card whose requester is
// the editor; nothing runs at once. The turn keeps waiting for that new
// card, on any replica (the edit, the decision and the resume each on a
// new one, over Redis too), and the model's next request holds exactly one
// result for its call, naming the edit, the editor, what was asked for
// instead and how that ended.
func TestEditAnswersTheModelOnce(t *testing.T) {
	for _, b := range backends {
		for _, tt := range []struct {
			name   string
			decide func(t *testing.T, e *env, id string)
			want   tools.Status
			ran    bool
			says   string
		}{
			{"approved", func(t *testing.T, e *env, id string) {
				// The editor's own approval does not count: the new card is
				// theirs.
				if r, err := e.agent(e.open()).Approve(ctx, id, approval.Vote{By: bob, Need: 1}); err != nil || r.Won {
					t.Fatalf("the editor's approval = %+v, %v; want it refused", r, err)
				}
				if _, err := approve(ctx, e.agent(e.open()), id, alice); err != nil {
					t.Fatalf("approve: %v", err)
				}
			}, tools.StatusOK, true, "approved by Alice and ran"},
			{"cancelled", func(t *testing.T, e *env, id string) {
				if _, err := e.agent(e.open()).Cancel(ctx, id, alice, "not today"); err != nil {
					t.Fatalf("cancel: %v", err)
				}
			}, tools.StatusCancelled, false, "was cancelled and did not run"},
			{"expired", func(t *testing.T, e *env, id string) {
				e.clock.Advance(time.Hour)
				if err := e.agent(e.open()).Sweep(ctx); err != nil {
					t.Fatalf("sweep: %v", err)
				}
			}, tools.StatusExpired, false, "Nobody approved that edited call in time"},
		} {
			t.Run(b.name+"/"+tt.name, func(t *testing.T) {
				e := newEnv(t, b,
					agenttest.Calls(agenttest.Call("c1", "run_job", `{"job":"migrate","risk_level":"medium"}`)),
					agenttest.Text("Noted."),
				)
				if err := e.agent(e.open()).Handle(ctx, conv, alice, "migrate"); err != nil {
					t.Fatalf("Handle: %v", err)
				}
				cards := e.sink.Cards()
				if len(cards) != 1 {
					t.Fatalf("%d cards, want 1", len(cards))
				}
				old := cards[0]

				res, err := e.agent(e.open()).Edit(ctx, old.ID, bob, json.RawMessage(`{"job":"reindex","risk_level":"low"}`))
				if err != nil || !res.Won || res.New == nil {
					t.Fatalf("Edit = %+v, %v; want a new card", res, err)
				}
				if got := e.job.Runs(); len(got) != 0 {
					t.Fatalf("the edited call ran at once (%d runs); an edit always waits on a new card", len(got))
				}
				cards = e.sink.Cards()
				if len(cards) != 2 || cards[1].ID != res.New.ID {
					t.Fatalf("cards = %d, want the old and the new", len(cards))
				}
				n := cards[1]
				if n.Requester != bob || n.Replaces != old.ID || n.TurnID != old.TurnID {
					t.Errorf("new card: requester %v, replaces %q, turn %q; want Bob, %s, %s", n.Requester, n.Replaces, n.TurnID, old.ID, old.TurnID)
				}
				if strings.Contains(string(n.Args), "risk_level") {
					t.Errorf("the edited call kept a risk_level: %s", n.Args)
				}
				if st := e.sink.States(old.ID); len(st) == 0 || st[len(st)-1] != approval.Cancelled {
					t.Errorf("old card states %v, want it to end cancelled (replaced)", st)
				}
				if got := len(e.srv.Requests()); got != 1 {
					t.Fatalf("the model was asked again after the edit alone (%d requests): the call waits for the new card", got)
				}

				tt.decide(t, e, n.ID)

				r := resumedResult(t, e)
				if r.Status != tt.want || r.Executed != tt.ran {
					t.Errorf("result status %s executed %v, want %s %v: %+v", r.Status, r.Executed, tt.want, tt.ran, r)
				}
				for _, s := range []string{"Bob edited it", `{"job":"reindex"}`, tt.says} {
					if !strings.Contains(r.Message, s) {
						t.Errorf("result message %q does not say %q", r.Message, s)
					}
				}
				if tt.ran && r.Stdout != "job done" {
					t.Errorf("result stdout %q, want the edited run's", r.Stdout)
				}
				if got := e.job.Runs(); len(got) != map[bool]int{true: 1}[tt.ran] {
					t.Errorf("%d runs, want %v", len(got), tt.ran)
				}
			})
		}
	}
}

// TestEditAtTheGate: what the gate refuses changes nothing (an absurd
// edit is blocked, the card still waits); an edit the judge would run at
// once (read-only) still becomes a new card; an edit of a finished card
// is refused with the card's state.
func TestEditAtTheGate(t *testing.T) {
	e := newEnv(t, memoryBackend,
		agenttest.Calls(agenttest.Call("c1", "execute_command", `{"command":"rm a.txt"}`)),
		agenttest.Text("Noted."),
	)
	a := e.agent(e.open())
	if err := a.Handle(ctx, conv, alice, "remove a.txt"); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	id := e.sink.Cards()[0].ID

	res, err := a.Edit(ctx, id, bob, json.RawMessage(`{"command":"rm -rf /"}`))
	if err != nil || res.Won || res.Result == nil || res.Result.Status != tools.StatusBlocked {
		t.Fatalf("absurd edit = %+v, %v; want it blocked", res, err)
	}
	if cur, _ := e.open().Get(ctx, id); cur.State != approval.Pending {
		t.Errorf("after a blocked edit the card is %s, want it still waiting", cur.State)
	}
	if len(e.sink.Cards()) != 1 {
		t.Errorf("a blocked edit posted a card")
	}

	// A read-only edit the judge would run at once still waits on a card.
	res, err = a.Edit(ctx, id, bob, json.RawMessage(`{"command":"cat a.txt"}`))
	if err != nil || !res.Won || res.New == nil || res.New.State != approval.Pending {
		t.Fatalf("read-only edit = %+v, %v; want a new waiting card", res, err)
	}
	if got := len(e.srv.Requests()); got != 1 {
		t.Errorf("%d model requests: the read-only edit ran and resumed the turn; want it waiting on its card", got)
	}

	res, err = a.Edit(ctx, id, bob, json.RawMessage(`{"command":"rm b.txt"}`))
	if err != nil || res.Won || res.New != nil || res.Old == nil || res.Old.State != approval.Cancelled {
		t.Fatalf("edit of a cancelled card = %+v, %v; want it refused with the card's state", res, err)
	}
	if len(e.sink.Cards()) != 2 {
		t.Errorf("an edit of a finished card posted a card")
	}
}

// TestGateBounds: a call larger than agent.max_call_bytes is refused at
// the gate, from any entry, with a result that says its size and the
// limit, and leaves no approval, no card and no copy of itself in the
// audit log; one model answer posts at most agent.max_cards_per_answer
// cards, and each further call that needs one gets a result that says why.
func TestGateBounds(t *testing.T) {
	big := `{"command":"echo ` + strings.Repeat("x", 5<<20) + `"}`
	t.Run("oversize command", func(t *testing.T) {
		e := newEnv(t, memoryBackend)
		s := e.open()
		if err := e.agent(s).Direct(ctx, conv, alice, "execute_command", json.RawMessage(big)); err != nil {
			t.Fatalf("Direct: %v", err)
		}
		assertRefusedBig(t, e, s, strings.Join(e.sink.Replies(), "\n"))
	})
	t.Run("oversize model call", func(t *testing.T) {
		e := newEnv(t, memoryBackend, agenttest.Calls(agenttest.Call("c1", "execute_command", big)), agenttest.Text("Too big."))
		s := e.open()
		if err := e.agent(s).Handle(ctx, conv, alice, "echo a lot"); err != nil {
			t.Fatalf("Handle: %v", err)
		}
		r := resumedResult(t, e)
		assertRefusedBig(t, e, s, r.Error)
		// Nor does the conversation keep it, or send it back.
		if b, _ := json.Marshal(e.srv.Requests()[1]); len(b) > 64<<10 {
			t.Errorf("the model's next request is %d bytes: it holds the refused call", len(b))
		}
	})
	t.Run("oversize edit", func(t *testing.T) {
		e := newEnv(t, memoryBackend)
		s := e.open()
		a := e.agent(s)
		if err := a.Direct(ctx, conv, alice, "run_job", json.RawMessage(`{"job":"migrate"}`)); err != nil {
			t.Fatalf("Direct: %v", err)
		}
		id := e.sink.Cards()[0].ID
		res, err := a.Edit(ctx, id, bob, json.RawMessage(big))
		if err != nil || res.Won || res.Result == nil || !strings.Contains(res.Result.Error, "5.0 MiB") {
			t.Fatalf("oversize edit = %+v, %v; want it refused at the gate", res, err)
		}
		if cur, _ := s.Get(ctx, id); cur.State != approval.Pending || len(e.sink.Cards()) != 1 {
			t.Errorf("an oversize edit changed the card (%s) or posted one", cur.State)
		}
	})
	t.Run("cards per answer", func(t *testing.T) {
		var calls []agenttest.WireToolCall
		for i := range 50 {
			calls = append(calls, agenttest.Call(fmt.Sprintf("c%d", i), "run_job", fmt.Sprintf(`{"job":"job-%d"}`, i)))
		}
		e := newEnv(t, memoryBackend, agenttest.Calls(calls...), agenttest.Text("Waiting."))
		s := e.open() // agent.max_cards_per_answer at its default
		if err := e.agent(s).Handle(ctx, conv, alice, "run fifty jobs"); err != nil {
			t.Fatalf("Handle: %v", err)
		}
		if got := len(e.sink.Cards()); got != agent.DefaultMaxCards {
			t.Errorf("%d cards posted, want %d (agent.max_cards_per_answer)", got, agent.DefaultMaxCards)
		}
		if n, _ := s.CountPending(ctx, conv.Platform, conv.Channel); n != agent.DefaultMaxCards {
			t.Errorf("%d approvals stored, want %d", n, agent.DefaultMaxCards)
		}
		// The turn waits for those cards; the other calls' results are
		// known and say why they got no card.
		turn, err := s.GetTurn(ctx, e.sink.Cards()[0].TurnID)
		if err != nil {
			t.Fatalf("GetTurn: %v", err)
		}
		var st struct {
			Calls []struct {
				Result *tools.Result `json:"result"`
			} `json:"calls"`
		}
		if err := json.Unmarshal(turn.State, &st); err != nil {
			t.Fatal(err)
		}
		refused := 0
		for _, c := range st.Calls {
			if c.Result != nil && !c.Result.Executed && strings.Contains(c.Result.Error, "agent.max_cards_per_answer") {
				refused++
			}
		}
		if refused != 50-agent.DefaultMaxCards {
			t.Errorf("%d calls refused for the card limit, want %d", refused, 50-agent.DefaultMaxCards)
		}
	})
}

// assertRefusedBig checks what a refused 5 MiB call left behind: said is
// what the person or the model was told.
func assertRefusedBig(t *testing.T, e *env, s approval.Store, said string) {
	t.Helper()
	if !strings.Contains(said, "5.0 MiB") || !strings.Contains(said, "64 KiB") {
		t.Errorf("the refusal %q does not say the size and the limit", said)
	}
	if len(e.sink.Cards()) != 0 {
		t.Errorf("a card was posted for an oversize call")
	}
	if n, err := s.CountPending(ctx, "", ""); err != nil || n != 0 {
		t.Errorf("%d approvals stored (%v), want none", n, err)
	}
	log, err := s.AuditLog(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range log {
		if b, _ := json.Marshal(ev); len(b) > 4<<10 {
			t.Errorf("an audit record of %d bytes: the call was copied into the log", len(b))
		}
	}
	if len(events(t, s, approval.KindAssessment)) != 1 {
		t.Errorf("the refusal was not audited once")
	}
}

// failingCreate is a store whose Create fails once armed.
type failingCreate struct {
	approval.Store
	fail bool
}

func (f *failingCreate) Create(ctx context.Context, a *approval.Approval) (*approval.Approval, bool, error) {
	if f.fail {
		return nil, false, errors.New("store unavailable")
	}
	return f.Store.Create(ctx, a)
}

// TestEditWhoseCardCannotBeStored: the old card is replaced first, so when
// the new card cannot be stored nothing runs, and the model still gets its
// one result: its call was cancelled, replaced by an edit that never got a
// card.
func TestEditWhoseCardCannotBeStored(t *testing.T) {
	e := newEnv(t, memoryBackend,
		agenttest.Calls(agenttest.Call("c1", "run_job", `{"job":"migrate"}`)),
		agenttest.Text("Noted."),
	)
	s := &failingCreate{Store: e.open()}
	a := e.agent(s)
	if err := a.Handle(ctx, conv, alice, "migrate"); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	s.fail = true
	res, err := a.Edit(ctx, e.sink.Cards()[0].ID, bob, json.RawMessage(`{"job":"reindex"}`))
	if err != nil || !res.Won || res.New != nil || res.Old.State != approval.Cancelled {
		t.Fatalf("Edit = %+v, %v; want the old card replaced and no new one", res, err)
	}
	r := resumedResult(t, e)
	if r.Status != tools.StatusCancelled || r.Executed || !strings.Contains(r.Reason, agent.ReplacedPrefix) {
		t.Errorf("result %+v, want one cancelled result that names the edit", r)
	}
	if len(e.job.Runs()) != 0 {
		t.Error("something ran")
	}
}

// TestEditOfAnEdit: a card made by an edit can be edited again; the
// model's call waits for the last card, and its one result names both
// edits.
func TestEditOfAnEdit(t *testing.T) {
	e := newEnv(t, redisBackend,
		agenttest.Calls(agenttest.Call("c1", "run_job", `{"job":"migrate"}`)),
		agenttest.Text("Noted."),
	)
	if err := e.agent(e.open()).Handle(ctx, conv, alice, "migrate"); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	first, err := e.agent(e.open()).Edit(ctx, e.sink.Cards()[0].ID, bob, json.RawMessage(`{"job":"reindex"}`))
	if err != nil || first.New == nil {
		t.Fatalf("first edit = %+v, %v", first, err)
	}
	second, err := e.agent(e.open()).Edit(ctx, first.New.ID, alice, json.RawMessage(`{"job":"vacuum"}`))
	if err != nil || second.New == nil {
		t.Fatalf("second edit = %+v, %v", second, err)
	}
	if got := len(e.srv.Requests()); got != 1 {
		t.Fatalf("%d model requests after two edits, want 1: the call waits", got)
	}
	if _, err := approve(ctx, e.agent(e.open()), second.New.ID, bob); err != nil {
		t.Fatal(err)
	}
	r := resumedResult(t, e)
	for _, s := range []string{"Bob edited it", "then Alice edited that", `{"job":"vacuum"}`, "approved by Bob and ran"} {
		if !strings.Contains(r.Message, s) {
			t.Errorf("result message %q does not say %q", r.Message, s)
		}
	}
	if got := len(e.job.Runs()); got != 1 {
		t.Errorf("%d runs, want 1", got)
	}
}
