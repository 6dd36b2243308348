package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/countersign/countersign/adapters/slack"
	"github.com/countersign/countersign/adapters/slack/slacktest"
	"github.com/countersign/countersign/agent/agenttest"
)

// TestSecretsNeverLeaveTheTool is issue 16's done-when for mechanism 7,
// tried as a new user would: the model reads a log file holding an AWS key
// pair, a Slack token and a private key, once with the file tool (auto-run)
// and once through an approved shell command whose card shows the output.
// Neither the model, the chat (messages, cards, notices, uploaded files),
// the audit log nor the bot's own log ever holds them.
func TestSecretsNeverLeaveTheTool(t *testing.T) {
	// Put together at run time, so this file is no finding for a scanner.
	secrets := map[string]string{
		"aws key id":     "AKIA" + "QX3ZT7WNBV2MRL5K",
		"aws secret":     "wJa7Xr" + "Utn9FEMI/K7MDENG/bPxRfiCYq3Xk2LpZ",
		"slack token":    "xoxb-" + "2345678901234-2345678901234-" + "Zk3dE5fG7hJ9kL1mN3pQ5rS7",
		"private key":    "MC4CAQAwBQYDK2VwBCIEINHmIDttzqrFI86G+J72K2QrZPpQeH7AQt2G/MeE47ck",
		"private key #2": "MIICeQIBADANBgkqhkiG9w0BAQEFAASCAmMwggJfAgEAAoGBANue53/ojJBu4Tm7",
	}
	logText := "2026-11-26T09:58:01Z INFO deploy starting\n" +
		"2026-11-26T09:58:02Z DEBUG env AWS_ACCESS_KEY_ID=" + secrets["aws key id"] + "\n" +
		"2026-11-26T09:58:02Z DEBUG env AWS_SECRET_ACCESS_KEY=" + secrets["aws secret"] + "\n" +
		"2026-11-26T09:58:03Z INFO posting to slack with " + secrets["slack token"] + "\n" +
		"2026-11-26T09:58:04Z DEBUG loaded signing key:\n" +
		"-----BEGIN " + "PRIVATE KEY-----\n" + secrets["private key"] + "\n-----END PRIVATE KEY-----\n" +
		"2026-11-26T09:58:05Z DEBUG loaded tls key:\n" +
		"-----BEGIN RSA " + "PRIVATE KEY-----\n" + secrets["private key #2"] + "\n" +
		"LMNF4h7wPQpZ16xzKswy4PPWHNHQnr/Mir06QehL1Yy2MHKsih3yPkFcUxVvk+pD\n-----END RSA PRIVATE KEY-----\n" +
		"2026-11-26T09:58:06Z ERROR deploy failed: connection refused\n"

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "deploy.log"), []byte(logText), 0o644); err != nil {
		t.Fatal(err)
	}
	fake := slacktest.New(t)
	fake.AddGroup("S0ONCALL", "oncall", bob.ID)
	model := agenttest.NewServer(t,
		agenttest.Calls(agenttest.Call("call-1", "file_operations", `{"operation":"read","path":"deploy.log","risk_level":"low"}`)),
		agenttest.Calls(agenttest.Call("call-2", "execute_command", `{"command":"cp deploy.log saved.log && cat saved.log","risk_level":"high"}`)),
		agenttest.Text("The deploy failed: connection refused."),
	)
	logs := slackRunLogged(t, dir, fake, model)

	thread := fake.Mention(alice, slackChannel, "", "why did the deploy fail? read deploy.log")
	card := threadHas(t, fake, thread, "cp deploy.log saved.log")
	fake.Acked(t, fake.Click(bob, slackChannel, card.TS, slack.ActionApprove, approvalID(t, card)))
	threadHas(t, fake, thread, "The deploy failed: connection refused.")
	fake.Wait(t, "the card's final state", func() bool {
		m, _ := fake.Message(slackChannel, card.TS)
		return strings.Contains(slacktest.View(m), "exit code 0")
	})

	// What the model was sent: both tool results, redacted, with a count.
	reqs := model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("model requests = %d, want 3", len(reqs))
	}
	var results []string
	for _, m := range reqs[2].Messages {
		if m.Role == "tool" {
			results = append(results, m.Content)
		}
	}
	if len(results) != 2 {
		t.Fatalf("the model got %d tool results, want 2", len(results))
	}
	for _, r := range results {
		for _, w := range []string{"[redacted: aws-access-token]", "[redacted: slack-bot-token]", "[redacted: private-key]", `"redacted":`, "connection refused"} {
			if !strings.Contains(r, w) {
				t.Errorf("a tool result the model got lacks %q:\n%s", w, r)
			}
		}
	}

	// Everything anyone could see.
	seen := logs.seen(t, fake)
	b, _ := json.Marshal(reqs)
	seen["the model's requests"] = string(b)
	if !strings.Contains(seen["the chat"], "[redacted: slack-bot-token]") {
		t.Errorf("the card does not show the redacted output:\n%s", seen["the chat"])
	}
	if !strings.Contains(seen["the audit log"], "cp deploy.log saved.log") {
		t.Fatalf("the audit log does not record the run:\n%s", seen["the audit log"])
	}
	for where, text := range seen {
		for what, secret := range secrets {
			if strings.Contains(text, secret) {
				t.Errorf("%s holds the %s", where, what)
			}
		}
	}
}

// TestConfigCheckShowsRedaction: the effective configuration shows the
// scanner on by default and risk.taint on, and never the allowed values,
// which look like secrets; an empty allowed value is refused with its key.
func TestConfigCheckShowsRedaction(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv(DefaultRedisURLEnv, "")
	t.Chdir(t.TempDir())
	allowed := "xoxb-" + "1234567890123-1234567890123-abcdefabcdefabcdefabcdef"
	var stdout, stderr bytes.Buffer
	conf := writeConfig(t, "tools:\n  redact:\n    allow: [\""+allowed+"\"]\n")
	if code := dispatch([]string{"config", "check", "--config", conf}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	out := stdout.String()
	if strings.Contains(out, allowed) || !strings.Contains(out, "redact:\n        enabled: true\n        allow:\n            - ••••••") ||
		!strings.Contains(out, "taint: true") {
		t.Errorf("the effective configuration does not show redaction as it applies:\n%s", out)
	}
	stdout.Reset()
	stderr.Reset()
	conf = writeConfig(t, "tools:\n  redact:\n    allow: [\"\"]\n")
	if code := dispatch([]string{"config", "check", "--config", conf}, strings.NewReader(""), &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "tools.redact.allow: allow entry #1 is empty") {
		t.Errorf("an empty allowed value: exit %d, %s", code, stderr.String())
	}
}

// TestSecretsInArgumentsMasked is issue 25's item 4 for a call's own
// arguments: a password the model put on a command line is masked on the
// card, in the chat, in the audit log and in the bot's log, while what
// runs after the approval is exactly the command as asked.
func TestSecretsInArgumentsMasked(t *testing.T) {
	secret := "Hunter2#x$y" + "Q9"
	command := `DB_PASSWORD='` + secret + `' sh -c 'printf %s "$DB_PASSWORD" > got.txt'`
	args, _ := json.Marshal(map[string]string{"command": command, "risk_level": "high"})
	dir := t.TempDir()
	fake := slacktest.New(t)
	fake.AddGroup("S0ONCALL", "oncall", bob.ID)
	model := agenttest.NewServer(t,
		agenttest.Calls(agenttest.Call("call-1", "execute_command", string(args))),
		agenttest.Text("Saved."),
	)
	logs := slackRunLogged(t, dir, fake, model)

	thread := fake.Mention(alice, slackChannel, "", "save the password to got.txt")
	card := threadHas(t, fake, thread, "printf %s")
	if v := slacktest.View(card); strings.Contains(v, secret) || !strings.Contains(v, "[redacted: ") {
		t.Fatalf("the card shows the password, or no mark:\n%s", v)
	}
	fake.Acked(t, fake.Click(bob, slackChannel, card.TS, slack.ActionApprove, approvalID(t, card)))
	threadHas(t, fake, thread, "Saved.")

	got, err := os.ReadFile(filepath.Join(dir, "got.txt"))
	if err != nil || string(got) != secret {
		t.Fatalf("what ran wrote %q (%v), want the password exactly as asked", got, err)
	}
	seen := logs.seen(t, fake)
	if !strings.Contains(seen["the audit log"], "printf %s") {
		t.Fatalf("the audit log does not record the run:\n%s", seen["the audit log"])
	}
	for where, text := range seen {
		if strings.Contains(text, secret) {
			t.Errorf("%s holds the password", where)
		}
	}
}

// loggedRun is where a run started by slackRunLogged writes its audit
// file and its own log.
type loggedRun struct{ audit, log string }

// slackRunLogged runs the bot on the fake Slack with @oncall as approvers
// (a second person required), an audit file and a debug log in a folder of
// their own.
func slackRunLogged(t *testing.T, dir string, fake *slacktest.Server, model *agenttest.Server) loggedRun {
	t.Helper()
	logs := t.TempDir()
	l := loggedRun{audit: filepath.Join(logs, "audit.jsonl"), log: filepath.Join(logs, "bot.log")}
	slackRun(t, dir, `
bot:
  default:
    approvers: ["group:@oncall"]
    require_second_person: true
audit:
  file:
    path: `+l.audit+`
log:
  file: `+l.log+`
  level: debug
`, fake, model)
	return l
}

// seen is everything anyone could see of the run: the chat (messages,
// cards, private notices, uploaded files), the audit log and the bot's
// own log, by name.
func (l loggedRun) seen(t *testing.T, fake *slacktest.Server) map[string]string {
	t.Helper()
	var chat strings.Builder
	for _, m := range fake.Messages(slackChannel) {
		chat.WriteString(m.Text + "\n" + string(m.Blocks) + "\n" + slacktest.View(m) + "\n")
	}
	for _, u := range []string{alice.ID, bob.ID} {
		for _, e := range fake.Ephemerals(u) {
			chat.WriteString(e.Text + "\n")
		}
	}
	for _, f := range fake.Files() {
		chat.WriteString(f.Comment + "\n" + f.Content + "\n")
	}
	seen := map[string]string{"the chat": chat.String()}
	for name, path := range map[string]string{"the audit log": l.audit, "the bot's log": l.log} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		seen[name] = string(b)
	}
	return seen
}
