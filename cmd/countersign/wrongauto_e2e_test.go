package main

import (
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/countersign/countersign/agent/agenttest"
)

// TestWrongAutoCannotHurt is the rest of issue 25's "tried as a new user
// would", on the bot as shipped (no configuration), with the model saying
// low each time: a copy into a cron folder and an inspect of a container
// (which prints its environment) each get a card that says why, whatever
// the model said; a replica-status query through the mysql client is a
// read and runs at once. (The fence's half — a write outside the root and
// a connection, stopped by the kernel — is TestRunFencesTheModelsLow.)
func TestWrongAutoCannotHurt(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/job", []byte("* * * * * root id\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := agenttest.NewServer(t,
		agenttest.Calls(agenttest.Call("c1", "execute_command", `{"command":"cp ./job /etc/cron.d/job","risk_level":"low"}`)),
		agenttest.Text("The copy waits for you."),
		agenttest.Calls(agenttest.Call("c2", "execute_command", `{"command":"docker inspect web","risk_level":"low"}`)),
		agenttest.Text("The inspect waits for you."),
		agenttest.Calls(agenttest.Call("c3", "execute_command", `{"command":"mysql -e 'SHOW REPLICA STATUS\\G'"}`)),
		agenttest.Text("That is the replica's status."),
	)
	t.Setenv(DefaultRedisURLEnv, "")
	in, out, done := startRun(t, dir, "", "OPENAI_BASE_URL", srv.BaseURL(), "OPENAI_MODEL", "m", "OPENAI_API_KEY", "k")
	say := func(line string) {
		t.Helper()
		if _, err := io.WriteString(in, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, out, regexp.MustCompile(`approvals: memory`))

	cardID := regexp.MustCompile(`approve ([a-z0-9]{20,})`)
	say("install the cron job")
	id := waitFor(t, out, cardID)
	copyCard := lastCard(out.String(), "cp ./job /etc/cron.d/job")
	if copyCard == "" || !strings.Contains(copyCard, "why:") {
		t.Fatalf("no card for the copy into a cron folder, or it does not say why:\n%s", out)
	}
	if _, err := os.Stat("/etc/cron.d/job"); err == nil {
		t.Fatal("the copy into the cron folder ran")
	}
	say("cancel " + id + " not now")
	waitFor(t, out, regexp.MustCompile(`The copy waits for you\.`))

	say("what is in the web container's config?")
	waitFor(t, out, regexp.MustCompile(`(?s)docker inspect web.*approve ([a-z0-9]{20,})`))
	if card := lastCard(out.String(), "docker inspect web"); card == "" || !strings.Contains(card, "why:") {
		t.Fatalf("no card for docker inspect, which prints the container's environment:\n%s", out)
	}
	id = lastMatch(out.String(), cardID)
	say("cancel " + id + " not now")
	waitFor(t, out, regexp.MustCompile(`The inspect waits for you\.`))

	say("how is the replica?")
	waitFor(t, out, regexp.MustCompile(`That is the replica's status\.`))
	if !regexp.MustCompile(`mysql -e 'SHOW REPLICA STATUS\\G'[^\n]*ran without a card: read-only`).MatchString(out.String()) {
		t.Errorf("the replica-status query did not run at once:\n%s", out)
	}
	in.Close()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
}

// lastMatch returns the first group of re's last match in out.
func lastMatch(out string, re *regexp.Regexp) string {
	m := re.FindAllStringSubmatch(out, -1)
	if len(m) == 0 {
		return ""
	}
	return m[len(m)-1][1]
}

// lastCard returns the last terminal card whose operation holds op, from
// its first line to its last ("└"), or "".
func lastCard(out, op string) string {
	cards := strings.Split(out, "┌ approval ")
	for i := len(cards) - 1; i > 0; i-- {
		if strings.Contains(cards[i], op) {
			card, _, _ := strings.Cut(cards[i], "\n└")
			return card
		}
	}
	return ""
}
