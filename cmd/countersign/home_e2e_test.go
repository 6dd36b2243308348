package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/adapters/slack/slacktest"
	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/internal/testenv"
)

// TestSlackAppHomeAfterARestart: the App Home is read from the store, not
// from what the process drew: a card one process posted is in the inbox a
// person opens after that process stopped and another started on the same
// Redis (a restart, or another replica).
func TestSlackAppHomeAfterARestart(t *testing.T) {
	t.Setenv("CS_TEST_HOME_REDIS", testenv.RedisURL(t))
	config := fmt.Sprintf(`
store:
  redis_url_env: CS_TEST_HOME_REDIS
  prefix: cst-home-%d
bot:
  default:
    approvers: ["U0BOB"]
`, time.Now().UnixNano())
	fake := slacktest.New(t)
	fake.SetMembers(slackChannel, alice.ID, bob.ID, slacktest.BotUserID)
	var id string
	t.Run("the first process posts a card and stops", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "tmp_a"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		model := agenttest.NewServer(t,
			agenttest.Calls(agenttest.Call("call-1", "execute_command", `{"command":"rm -f ./tmp_a","risk_level":"high"}`)),
		)
		slackRun(t, dir, config, fake, model)
		thread := fake.Mention(alice, slackChannel, "", "remove tmp_a")
		id = approvalID(t, threadHas(t, fake, thread, "rm -f ./tmp_a"))
	})
	if id == "" {
		t.FailNow()
	}
	slackRun(t, t.TempDir(), config, fake, agenttest.NewServer(t))
	fake.Deliver(map[string]any{"type": "app_home_opened", "user": bob.ID, "channel": "D0BOB", "tab": "home", "event_ts": "1700000200.000001"})
	var last string
	fake.Wait(t, "bob's home listing the card the first process posted", func() bool {
		vs := fake.Views()
		for i := len(vs) - 1; i >= 0; i-- {
			if vs[i].Method == "views.publish" && vs[i].UserID == bob.ID {
				raw, _ := json.Marshal(vs[i].View)
				last = string(raw)
				return strings.Contains(last, "approval `"+id+"`")
			}
		}
		return false
	})
}
