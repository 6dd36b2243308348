package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/tools/fence"
)

// TestFencedCallGetsACardNextTime: a call run on the model's low that the
// kernel's fence stopped comes back saying so, in words the model can act
// on; the same call asked for again in that turn is not run on its own
// again, but waits for a person, and the card says why.
func TestFencedCallGetsACardNextTime(t *testing.T) {
	if _, err := fence.Probe(); err != nil {
		t.Skipf("no kernel fence here: %v", err)
	}
	outside := filepath.Join(t.TempDir(), "x")
	call := `{"command":"touch ` + outside + `","risk_level":"low"}`
	e := newEnv(t, memoryBackend,
		agenttest.Calls(agenttest.Call("c1", "execute_command", call)),
		agenttest.Calls(agenttest.Call("c2", "execute_command", call)),
		agenttest.Text("waiting"),
	)
	a := e.agent(e.open())
	if err := a.Handle(context.Background(), conv, alice, "make the file"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Fatal("the write outside the root happened")
	}
	reqs := e.srv.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d model requests, want at least 2", len(reqs))
	}
	first := toolResults(t, reqs[1])
	if len(first) != 1 || !strings.Contains(first[0].Fence, "the fence refused a write to "+outside) ||
		!strings.Contains(first[0].Fence, "risk_level high") {
		t.Fatalf("the model was not told the fence stopped the call: %+v", first)
	}
	cards := e.sink.Cards()
	if len(cards) != 1 {
		t.Fatalf("%d cards, want 1 for the second call", len(cards))
	}
	if why := strings.Join(cards[0].Verdict.Reasons, "; "); !strings.Contains(why, "fence stopped this same call") {
		t.Errorf("the card's reasons %q do not say the fence stopped it before", why)
	}
}

// TestUnfencedHostAsksAPerson: on a host whose kernel cannot fence the
// command tool (agent.Config.Unfenced), a command that would have run
// without a card, even one judged read-only, waits for a person instead,
// and the card says why; it never runs unfenced on its own.
func TestUnfencedHostAsksAPerson(t *testing.T) {
	e := newEnv(t, memoryBackend,
		agenttest.Calls(agenttest.Call("c1", "execute_command", `{"command":"ls"}`)),
		agenttest.Text("waiting"),
	)
	e.cfg.Unfenced = map[string]string{"execute_command": "this host's kernel cannot fence a command"}
	a := e.agent(e.open())
	if err := a.Handle(context.Background(), conv, alice, "list the files"); err != nil {
		t.Fatal(err)
	}
	cards := e.sink.Cards()
	if len(cards) != 1 {
		t.Fatalf("%d cards, want 1: the read ran without the fence", len(cards))
	}
	if why := strings.Join(cards[0].Verdict.Reasons, "; "); !strings.Contains(why, "cannot fence") {
		t.Errorf("the card's reasons %q do not say the host cannot fence", why)
	}
}

// TestNotOfflineHostAsksAPerson: on a host that fences but cannot keep a
// run off the network (agent.Config.NotOffline: a container's seccomp
// profile refuses the namespace), a command on the model's low alone
// waits for a person, while a read-only one still runs fenced.
func TestNotOfflineHostAsksAPerson(t *testing.T) {
	e := newEnv(t, memoryBackend,
		agenttest.Calls(
			agenttest.Call("c1", "execute_command", `{"command":"touch ./made","risk_level":"low"}`),
			agenttest.Call("c2", "execute_command", `{"command":"ls"}`),
		),
		agenttest.Text("waiting"),
	)
	e.cfg.NotOffline = map[string]string{"execute_command": "this host cannot keep a command the model alone rated low off the network"}
	a := e.agent(e.open())
	if err := a.Handle(context.Background(), conv, alice, "make a file, then list"); err != nil {
		t.Fatal(err)
	}
	cards := e.sink.Cards()
	if len(cards) != 1 {
		t.Fatalf("%d cards, want 1 (the model's low alone)", len(cards))
	}
	if op := string(cards[0].Args); !strings.Contains(op, "touch") {
		t.Errorf("the card is for %q, want the touch", op)
	}
	if why := strings.Join(cards[0].Verdict.Reasons, "; "); !strings.Contains(why, "off the network") {
		t.Errorf("the card's reasons %q do not say the host cannot keep it offline", why)
	}
}
