package risk

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// want is the expected verdict of a case. An empty field is not checked;
// reason, when set, must be a substring of one of the reasons.
type want struct {
	decision Decision
	risk     Level
	rule     Rule
	reason   string
	llm      Level
}

type policyCase struct {
	name    string
	tool    string
	args    string
	channel string
	mode    Mode
	want    want
}

func mustPolicy(t testing.TB, cfg Config) *Policy {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func runCases(t *testing.T, p *Policy, cases []policyCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tool := tc.tool
			v := p.Assess(Call{Tool: tool, Args: json.RawMessage(tc.args), Channel: tc.channel, Mode: tc.mode})
			checkVerdict(t, v, tc.want)
		})
	}
}

func checkVerdict(t *testing.T, v Verdict, w want) {
	t.Helper()
	if v.Decision != w.decision {
		t.Errorf("decision = %s, want %s (verdict %+v)", v.Decision, w.decision, v)
	}
	if w.risk != "" && v.Risk != w.risk {
		t.Errorf("risk = %s, want %s (verdict %+v)", v.Risk, w.risk, v)
	}
	if w.rule != "" && v.Rule != w.rule {
		t.Errorf("rule = %s, want %s (verdict %+v)", v.Rule, w.rule, v)
	}
	if w.llm != v.LLMLevel {
		t.Errorf("llm level = %q, want %q", v.LLMLevel, w.llm)
	}
	if len(v.Reasons) == 0 {
		t.Errorf("no reasons in %+v", v)
	}
	if w.reason != "" && !hasReason(v.Reasons, w.reason) {
		t.Errorf("reasons %q lack %q", v.Reasons, w.reason)
	}
}

func hasReason(reasons []string, sub string) bool {
	for _, r := range reasons {
		if strings.Contains(r, sub) {
			return true
		}
	}
	return false
}

var (
	autoWL   = want{decision: Auto, risk: Low, rule: RuleWhitelist}
	blockAbs = want{decision: Block, risk: High, rule: RuleAbsurd}
	danger   = want{decision: Confirm, risk: High, rule: RuleDanger}
	deflt    = want{decision: Confirm, risk: Medium, rule: RuleDefault}
)

func with(w want, reason string) want { w.reason = reason; return w }
func llm(w want, l Level) want        { w.llm = l; return w }

func TestAssessCommand(t *testing.T) {
	p := mustPolicy(t, Config{Tools: map[string]ToolConfig{
		ToolCommand: {Preauthorized: []string{
			"systemctl restart nginx",
			"rm -rf build",
			`re:rm -rf /.*`,
		}},
	}})
	cases := []policyCase{
		{name: "reader runs", args: `{"command":"ls -la"}`, want: autoWL},
		{name: "absurd inside a list", args: `{"command":"ls; rm -rf /"}`, want: blockAbs},
		{name: "recursive delete is danger", args: `{"command":"rm -r ./cache"}`, want: danger},
		{name: "unknown command is confirmed", args: `{"command":"./deploy.sh prod"}`, want: deflt},
		{name: "kubectl get is a look", args: `{"command":"kubectl get pods -n prod"}`, want: autoWL},
		{name: "kubectl delete is danger", args: `{"command":"kubectl delete pod web-1"}`, want: danger},
		// The shell has no connect-time fence: its HTTP clients share the
		// http_request tool's host checks (issue 11).
		{name: "curl to a decimal metadata address", args: `{"command":"curl -s http://2852039166/latest/meta-data/"}`, want: blockAbs},
		{name: "wget to a mapped IPv6 metadata address", args: `{"command":"wget -qO- http://[::ffff:a9fe:a9fe]/"}`, want: blockAbs},
		{name: "mysql -e of a plain read is a look", args: `{"command":"mysql -h db -e 'SHOW FULL PROCESSLIST'"}`, want: autoWL},
		{name: "mysql -e of a write is not", args: `{"command":"mysql -e 'DELETE FROM t'"}`, want: danger},
		{name: "mysql -e of a password hash is not", args: `{"command":"mysql -e 'SELECT authentication_string FROM mysql.user'"}`, want: danger},
		{name: "mysqladmin status is a look", args: `{"command":"mysqladmin -h db status"}`, want: autoWL},
		{name: "curl to sslip.io", args: `{"command":"curl 169-254-169-254.sslip.io/latest/"}`, want: blockAbs},

		// Rule order.
		{name: "absurd beats pre-authorisation", args: `{"command":"rm -rf /"}`, want: blockAbs},
		{name: "pre-authorised exact text", args: `{"command":"systemctl restart nginx"}`,
			want: with(want{decision: Auto, risk: Low, rule: RulePreauthorized}, "systemctl restart nginx")},
		{name: "pre-authorised ignores surrounding space", args: `{"command":"  systemctl restart nginx\n"}`,
			want: want{decision: Auto, risk: Low, rule: RulePreauthorized}},
		{name: "a non-ASCII space is text, not space", args: `{"command":"systemctl restart nginx\u00a0"}`,
			want: want{decision: Confirm}},
		{name: "pre-authorisation beats strict", mode: Strict, args: `{"command":"systemctl restart nginx"}`,
			want: want{decision: Auto, risk: Low, rule: RulePreauthorized}},
		{name: "pre-authorisation beats danger", args: `{"command":"rm -rf build"}`,
			want: want{decision: Auto, risk: Low, rule: RulePreauthorized}},
		{name: "strict confirms a reader", mode: Strict, args: `{"command":"ls"}`,
			want: with(want{decision: Confirm, risk: Medium, rule: RuleMode}, "strict")},
		{name: "strict beats danger but shows high", mode: Strict, args: `{"command":"rm -r ./cache"}`,
			want: want{decision: Confirm, risk: High, rule: RuleMode}},
		{name: "strict shows the assistant's high", mode: Strict, args: `{"command":"ls","risk_level":"high"}`,
			want: llm(want{decision: Confirm, risk: High, rule: RuleMode}, High)},
		{name: "strict still blocks absurd", mode: Strict, args: `{"command":"ls && rm -rf /"}`, want: blockAbs},
		{name: "danger not lowered by low", args: `{"command":"rm -r ./cache","risk_level":"low"}`,
			want: llm(with(danger, "does not lower"), Low)},
		{name: "absurd not lowered by low", args: `{"command":"rm -rf /","risk_level":"low"}`, want: llm(blockAbs, Low)},
		{name: "low cannot wave through what does not parse", args: `{"command":"if then rm -rf data","risk_level":"low"}`,
			want: llm(with(danger, "does not parse"), Low)},
		{name: "low runs an unknown command in smart", args: `{"command":"./deploy.sh","risk_level":"low"}`,
			want: llm(want{decision: Auto, risk: Low, rule: RuleLLM}, Low)},
		{name: "low is case-insensitive", args: `{"command":"./deploy.sh","risk_level":"LoW"}`,
			want: llm(want{decision: Auto, risk: Low, rule: RuleLLM}, Low)},
		{name: "low ignored in guarded", mode: Guarded, args: `{"command":"./deploy.sh","risk_level":"low"}`,
			want: llm(with(deflt, "not trusted in guarded mode"), Low)},
		{name: "guarded still whitelists", mode: Guarded, args: `{"command":"ls","risk_level":"low"}`, want: llm(autoWL, Low)},
		{name: "high raises a reader", args: `{"command":"ls","risk_level":"high"}`,
			want: llm(want{decision: Confirm, risk: High, rule: RuleLLM}, High)},
		{name: "medium raises a reader", args: `{"command":"ls","risk_level":"Medium"}`,
			want: llm(want{decision: Confirm, risk: Medium, rule: RuleLLM}, Medium)},
		{name: "medium raises in guarded", mode: Guarded, args: `{"command":"ls","risk_level":"medium"}`,
			want: llm(want{decision: Confirm, risk: Medium, rule: RuleLLM}, Medium)},
		{name: "invalid level ignored with a reason", args: `{"command":"./deploy.sh","risk_level":"lowish"}`,
			want: with(deflt, `risk_level "lowish" is not low, medium or high`)},
		{name: "invalid level on a reader", args: `{"command":"ls","risk_level":"none"}`, want: with(autoWL, "ignored")},
		{name: "non-string level ignored", args: `{"command":"./deploy.sh","risk_level":1}`, want: with(deflt, "risk_level 1")},
		{name: "risk_level key in capitals", args: `{"command":"ls","RISK_LEVEL":"high"}`,
			want: llm(want{decision: Confirm, risk: High, rule: RuleLLM}, High)},
		{name: "null level is no level", args: `{"command":"ls","risk_level":null}`, want: autoWL},
		{name: "unknown call mode is strict", mode: "lax", args: `{"command":"ls"}`,
			want: with(want{decision: Confirm, rule: RuleMode}, `mode "lax"`)},

		// Fences around the command.
		{name: "workdir inside the root", args: `{"command":"ls","workdir":"logs/app"}`, want: autoWL},
		{name: "absolute workdir", args: `{"command":"ls","workdir":"/etc"}`, want: with(blockAbs, "workdir")},
		{name: "workdir climbs out", args: `{"command":"ls","workdir":"logs/../../x"}`, want: blockAbs},
		{name: "secret read by its base name in the workdir", args: `{"command":"cat credentials","workdir":".aws"}`,
			want: with(danger, "the workdir .aws holds .aws/credentials")},
		{name: "docker config by its base name", args: `{"command":"cat config.json","workdir":"home/bob/.docker"}`, want: danger},
		{name: "workdir inside .ssh", args: `{"command":"ls","workdir":".ssh"}`, want: danger},
		{name: "key by its base name in a workdir inside .ssh", args: `{"command":"cat id_rsa","workdir":"home/u/.ssh"}`, want: danger},
		{name: "secret read by its base name after a cd", args: `{"command":"cd .aws && cat credentials"}`,
			want: with(danger, "cat credentials reads a secret")},
		{name: "secret directory listed", args: `{"command":"ls -la ~/.ssh"}`,
			want: with(danger, "lists a directory that holds secrets")},
		{name: "home directory listed", args: `{"command":"ls -la /home/u"}`, want: autoWL},
		{name: "workdir secret not lowered by low", args: `{"command":"cat credentials","workdir":".aws","risk_level":"low"}`,
			want: llm(danger, Low)},
		{name: "workdir named etc is inside the root", args: `{"command":"cat shadow","workdir":"etc"}`, want: autoWL},
		{name: "NUL in command", args: `{"command":"ls\u0000 -la"}`, want: with(blockAbs, "NUL")},

		// Malformed arguments.
		{name: "args not an object", args: `["ls"]`, want: with(deflt, "not a JSON object")},
		{name: "args not JSON", args: `{"command":`, want: with(deflt, "not a JSON object")},
		{name: "command missing", args: `{}`, want: with(deflt, `"command" is missing`)},
		{name: "command null", args: `{"command":null}`, want: with(deflt, `"command" is missing`)},
		{name: "command not a string", args: `{"command":["rm","-rf","/"]}`, want: with(deflt, `"command" is not a string`)},
		{name: "command empty", args: `{"command":"  "}`, want: with(deflt, `"command" is empty`)},
		{name: "command given twice", args: `{"command":"ls","COMMAND":"rm -rf /data"}`, want: with(deflt, "more than once")},
		{name: "escaped duplicate key", args: `{"command":"ls","\u0063ommand":"rm -rf /data"}`, want: with(deflt, "more than once")},
		{name: "workdir not a string", args: `{"command":"ls","workdir":1}`, want: with(deflt, `"workdir" is not a string`)},
		{name: "timeout not a number", args: `{"command":"ls","timeout_seconds":"5"}`, want: with(deflt, `"timeout_seconds" is not a number`)},
		{name: "malformed wins over low", args: `{"command":5,"risk_level":"low"}`, want: llm(deflt, Low)},
	}
	for i := range cases {
		cases[i].tool = ToolCommand
	}
	runCases(t, p, cases)
}

func TestAssessSQL(t *testing.T) {
	p := mustPolicy(t, Config{Tools: map[string]ToolConfig{
		ToolSQL: {Preauthorized: []string{"DROP TABLE scratch_tmp", `re:OPTIMIZE TABLE [a-z_]+`}},
	}})
	cases := []policyCase{
		{name: "select runs", args: `{"sql":"SELECT id, name FROM users WHERE id = 7"}`, want: autoWL},
		{name: "show runs", args: `{"sql":"SHOW TABLES","database":"main"}`, want: autoWL},
		{name: "drop is danger", args: `{"sql":"DROP TABLE users"}`, want: danger},
		{name: "drop not lowered by low", args: `{"sql":"DROP TABLE users","risk_level":"low"}`, want: llm(danger, Low)},
		{name: "insert is confirmed", args: `{"sql":"INSERT INTO t (a) VALUES (1)"}`, want: deflt},
		{name: "executable comment not lowered by low", args: `{"sql":"SELECT 1 /*!50000 , SLEEP(100) */","risk_level":"low"}`,
			want: llm(with(danger, "executable comment"), Low)},
		{name: "unparsable SQL not lowered by low", args: `{"sql":"DELET FROM users","risk_level":"low"}`,
			want: llm(with(danger, "does not accept"), Low)},
		{name: "password hashes not lowered by low", args: `{"sql":"SELECT * FROM mysql.user","risk_level":"low"}`,
			want: llm(with(danger, "password hashes"), Low)},
		{name: "show grants not lowered by low", args: `{"sql":"SHOW GRANTS FOR 'app'@'%'","risk_level":"low"}`,
			want: llm(with(danger, "password hash"), Low)},
		{name: "get_lock not lowered by low", args: `{"sql":"SELECT GET_LOCK('deploy', 0)","risk_level":"low"}`,
			want: llm(with(danger, "GET_LOCK"), Low)},
		{name: "mariadb analyze delete not lowered by low", args: `{"sql":"ANALYZE DELETE FROM orders","risk_level":"low"}`,
			want: llm(with(danger, "DELETE without WHERE"), Low)},
		{name: "mysql.user named columns run", args: `{"sql":"SELECT user, host FROM mysql.user"}`, want: autoWL},
		{name: "date literal runs", args: `{"sql":"SELECT COUNT(*) FROM orders WHERE created_at >= DATE '2026-11-01'"}`, want: autoWL},
		{name: "insert low in smart", args: `{"sql":"INSERT INTO t (a) VALUES (1)","risk_level":"low"}`,
			want: llm(want{decision: Auto, rule: RuleLLM}, Low)},
		{name: "pre-authorised drop", args: `{"sql":"DROP TABLE scratch_tmp"}`, want: want{decision: Auto, rule: RulePreauthorized}},
		{name: "pre-authorised pattern", args: `{"sql":"OPTIMIZE TABLE orders"}`, want: want{decision: Auto, rule: RulePreauthorized}},
		{name: "pattern does not carry a second statement", args: `{"sql":"OPTIMIZE TABLE orders;DROP TABLE x"}`,
			want: want{decision: Confirm}},
		{name: "strict confirms a select", mode: Strict, args: `{"sql":"SELECT 1"}`, want: want{decision: Confirm, rule: RuleMode}},
		{name: "sql missing", args: `{"query":"SELECT 1"}`, want: with(deflt, `"sql" is missing`)},
		{name: "sql not a string", args: `{"sql":1}`, want: with(deflt, `"sql" is not a string`)},
		{name: "sql empty", args: `{"sql":""}`, want: with(deflt, `"sql" is empty`)},
		{name: "database not a string", args: `{"sql":"SELECT 1","database":["a"]}`, want: with(deflt, `"database" is not a string`)},
	}
	for i := range cases {
		cases[i].tool = ToolSQL
	}
	runCases(t, p, cases)
}

func TestAssessFile(t *testing.T) {
	p := mustPolicy(t, Config{
		SensitivePaths: []string{"*.secret"},
		Tools: map[string]ToolConfig{
			ToolFile: {Preauthorized: []string{"delete tmp/cache.db", `re:write reports/[a-z0-9-]+\.csv`}},
		},
	})
	cases := []policyCase{
		{name: "read runs", args: `{"operation":"read","path":"logs/app.log"}`, want: with(autoWL, "read is a read-only")},
		{name: "list runs", args: `{"operation":"list","path":"logs"}`, want: autoWL},
		{name: "list of the root", args: `{"operation":"list"}`, want: autoWL},
		{name: "exists runs", args: `{"operation":"exists","path":"a"}`, want: autoWL},
		{name: "stat runs", args: `{"operation":"stat","path":"a"}`, want: autoWL},
		{name: "write is confirmed", args: `{"operation":"write","path":"a.txt","content":"x"}`, want: with(deflt, "write changes files")},
		{name: "append is confirmed", args: `{"operation":"append","path":"a.txt","content":"x"}`, want: deflt},
		{name: "mkdir is confirmed", args: `{"operation":"mkdir","path":"a","recursive":true}`, want: deflt},
		{name: "delete is confirmed", args: `{"operation":"delete","path":"a.txt"}`, want: deflt},
		{name: "recursive delete is danger", args: `{"operation":"delete","path":"build","recursive":true}`,
			want: with(danger, "recursive delete of build")},
		{name: "inner dots stay inside", args: `{"operation":"read","path":"logs/../README.md"}`, want: autoWL},

		// Sensitive paths, for every operation.
		{name: "read .env", args: `{"operation":"read","path":".env"}`, want: with(danger, ".env")},
		{name: "stat a key", args: `{"operation":"stat","path":"certs/server.key"}`, want: danger},
		{name: "list .ssh", args: `{"operation":"list","path":"home/.ssh"}`, want: danger},
		{name: "write id_rsa", args: `{"operation":"write","path":"id_rsa","content":"x"}`, want: danger},
		{name: "dots onto .env", args: `{"operation":"read","path":"config/../.env"}`, want: danger},
		{name: "extra pattern from config", args: `{"operation":"read","path":"db.secret"}`, want: danger},
		{name: "sensitive not lowered by low", args: `{"operation":"read","path":".env","risk_level":"low"}`, want: llm(danger, Low)},
		{name: "exists on a secret", args: `{"operation":"exists","path":".aws/credentials"}`, want: danger},
		{name: "list .ssh itself", args: `{"operation":"list","path":".ssh"}`, want: with(danger, ".ssh/")},
		{name: "list .ssh with a slash", args: `{"operation":"list","path":".ssh/"}`, want: danger},
		{name: "list a directory that holds secrets", args: `{"operation":"list","path":"home/u/.aws"}`,
			want: with(danger, "home/u/.aws holds .aws/credentials")},
		{name: "list the home that holds .aws", args: `{"operation":"list","path":"home/u"}`, want: autoWL},
		{name: "stat a directory that holds secrets", args: `{"operation":"stat","path":".aws"}`, want: autoWL},
		{name: "doubled slash", args: `{"operation":"read","path":"./.ssh//id_rsa"}`, want: danger},
		{name: "dots through .ssh", args: `{"operation":"read","path":".ssh/../.ssh/id_rsa"}`, want: danger},
		{name: "env in capitals", args: `{"operation":"read","path":".ENV"}`, want: with(danger, ".env")},
		{name: "key in capitals", args: `{"operation":"read","path":"certs/SERVER.KEY"}`, want: danger},
		{name: "env production", args: `{"operation":"read","path":"config/.env.production"}`, want: danger},
		{name: "app key", args: `{"operation":"read","path":"secrets/app.key"}`, want: danger},
		{name: "ecdsa key", args: `{"operation":"read","path":"keys/id_ecdsa"}`, want: danger},
		{name: "git credentials", args: `{"operation":"read","path":".git-credentials"}`, want: danger},
		{name: "git config holds remote tokens", args: `{"operation":"read","path":".git/config"}`, want: with(danger, ".git/config")},
		{name: "kube config", args: `{"operation":"read","path":".kube/config"}`, want: danger},
		{name: "kubeconfig yaml", args: `{"operation":"read","path":"deploy/kubeconfig.yaml"}`, want: danger},
		{name: "credentials json", args: `{"operation":"read","path":"credentials.json"}`, want: danger},
		{name: "gcp credentials json", args: `{"operation":"read","path":"gcp-credentials.json"}`, want: danger},
		{name: "docker config", args: `{"operation":"read","path":".docker/config.json"}`, want: danger},
		{name: "bash history", args: `{"operation":"read","path":".bash_history"}`, want: with(danger, "_history")},
		{name: "zsh history", args: `{"operation":"read","path":"home/bob/.zsh_history"}`, want: danger},
		{name: "psql history", args: `{"operation":"read","path":".psql_history"}`, want: danger},
		{name: "mysql history", args: `{"operation":"read","path":".mysql_history"}`, want: danger},
		{name: "redis-cli history", args: `{"operation":"read","path":".rediscli_history"}`, want: danger},
		{name: "python history", args: `{"operation":"read","path":".python_history"}`, want: danger},
		{name: "terraform state", args: `{"operation":"read","path":"infra/terraform.tfstate"}`, want: danger},
		{name: "htpasswd", args: `{"operation":"read","path":"nginx/.htpasswd"}`, want: danger},
		{name: "mounted service account token", args: `{"operation":"read","path":"var/run/secrets/kubernetes.io/serviceaccount/token"}`, want: danger},
		{name: "a file named like history is not one", args: `{"operation":"read","path":"reports/order_history.csv"}`, want: autoWL},
		{name: "an ordinary config", args: `{"operation":"read","path":"config/app.yaml"}`, want: autoWL},

		// Writes that plant code to run later.
		{name: "write bashrc", args: `{"operation":"write","path":".bashrc","content":"curl x | sh"}`, want: with(danger, "runs later")},
		{name: "append profile low", args: `{"operation":"append","path":"home/bob/.profile","content":"x","risk_level":"low"}`, want: llm(danger, Low)},
		{name: "write a git hook", args: `{"operation":"write","path":".git/hooks/pre-commit","content":"x"}`, want: with(danger, "runs later")},
		{name: "write authorized_keys", args: `{"operation":"append","path":"home/bob/.ssh/authorized_keys","content":"ssh-ed25519 x"}`, want: danger},
		{name: "write a user systemd unit", args: `{"operation":"write","path":".config/systemd/user/x.service","content":"x"}`, want: danger},
		{name: "write envrc", args: `{"operation":"write","path":"app/.envrc","content":"x"}`, want: danger},
		{name: "read bashrc is a look", args: `{"operation":"read","path":".bashrc"}`, want: autoWL},
		{name: "low write elsewhere runs in smart mode", args: `{"operation":"write","path":"notes.txt","content":"x","risk_level":"low"}`,
			want: llm(want{decision: Auto, rule: RuleLLM}, Low)},

		// Leaving the root.
		{name: "absolute path", args: `{"operation":"read","path":"/etc/passwd"}`, want: with(blockAbs, "absolute")},
		{name: "parent", args: `{"operation":"read","path":".."}`, want: blockAbs},
		{name: "climbs out", args: `{"operation":"read","path":"logs/../../etc/passwd"}`, want: with(blockAbs, "climbs out")},
		{name: "home", args: `{"operation":"list","path":"~/.ssh"}`, want: blockAbs},
		{name: "home bare", args: `{"operation":"list","path":"~"}`, want: blockAbs},
		{name: "NUL byte", args: `{"operation":"read","path":"a\u0000.txt"}`, want: with(blockAbs, "NUL")},
		{name: "escape beats pre-authorisation", args: `{"operation":"delete","path":"/tmp/cache.db"}`, want: blockAbs},
		{name: "escape beats low", args: `{"operation":"read","path":"../x","risk_level":"low"}`, want: llm(blockAbs, Low)},
		{name: "dot then parent", args: `{"operation":"read","path":"./.."}`, want: blockAbs},
		{name: "parent after a dir", args: `{"operation":"read","path":"a/../../x"}`, want: blockAbs},
		{name: "another user's home", args: `{"operation":"read","path":"~root/.bashrc"}`, want: blockAbs},
		{name: "escaped dots are a name to the tool", args: `{"operation":"read","path":"%2e%2e/x"}`, want: autoWL},
		{name: "backslashes are a name to the tool", args: `{"operation":"read","path":"..\\x"}`, want: autoWL},
		{name: "proc environ is absolute", args: `{"operation":"read","path":"/proc/self/environ"}`, want: blockAbs},
		{name: "json-escaped dots", args: `{"operation":"read","path":"\u002e\u002e/x"}`, want: blockAbs},

		// Pre-authorisation matches the cleaned path.
		{name: "pre-authorised delete", args: `{"operation":"delete","path":"tmp/cache.db"}`, want: want{decision: Auto, rule: RulePreauthorized}},
		{name: "pre-authorised after cleaning", args: `{"operation":"delete","path":"tmp/./cache.db"}`, want: want{decision: Auto, rule: RulePreauthorized}},
		{name: "pre-authorised pattern", args: `{"operation":"write","path":"reports/q3-sales.csv","content":"a,b"}`,
			want: want{decision: Auto, rule: RulePreauthorized}},
		{name: "pattern does not reach through dots", args: `{"operation":"write","path":"reports/../.env.csv","content":"a"}`,
			want: danger},

		// Malformed arguments.
		{name: "operation missing", args: `{"path":"a"}`, want: with(deflt, `"operation" is missing`)},
		{name: "operation unknown", args: `{"operation":"chmod","path":"a"}`, want: with(deflt, `"chmod" is not one of`)},
		{name: "operation in capitals", args: `{"operation":"READ","path":"a"}`, want: deflt},
		{name: "path missing", args: `{"operation":"read"}`, want: with(deflt, `"path" is missing`)},
		{name: "path not a string", args: `{"operation":"read","path":7}`, want: with(deflt, `"path" is not a string`)},
		{name: "recursive not a bool", args: `{"operation":"delete","path":"a","recursive":"yes"}`, want: with(deflt, `"recursive"`)},
		{name: "content not a string", args: `{"operation":"write","path":"a","content":{}}`, want: with(deflt, `"content"`)},
	}
	for i := range cases {
		cases[i].tool = ToolFile
	}
	runCases(t, p, cases)
}

func TestAssessHTTP(t *testing.T) {
	p := mustPolicy(t, Config{Tools: map[string]ToolConfig{
		ToolHTTP: {Preauthorized: []string{"POST https://hooks.example.com/deploy", `re:PUT https://api\.example\.com/flags/.*`, `re:DELETE http://.*`}},
	}})
	cases := []policyCase{
		{name: "get runs", args: `{"method":"GET","url":"https://example.com/status"}`, want: autoWL},
		{name: "lower-case get", args: `{"method":"get","url":"https://example.com/"}`, want: autoWL},
		{name: "missing method is get", args: `{"url":"https://example.com/"}`, want: autoWL},
		{name: "head runs", args: `{"method":"HEAD","url":"http://example.com/"}`, want: autoWL},
		{name: "options runs", args: `{"method":"options","url":"http://example.com/"}`, want: autoWL},
		{name: "private address is left to the dialer", args: `{"url":"http://10.0.0.5:8080/health"}`, want: autoWL},
		{name: "post is confirmed", args: `{"method":"POST","url":"https://example.com/","body":"{}"}`,
			want: with(deflt, "POST is not a read-only HTTP method")},
		{name: "delete is confirmed", args: `{"method":"DELETE","url":"https://example.com/x"}`, want: deflt},
		{name: "pre-authorised post", args: `{"method":"post","url":"https://hooks.example.com/deploy"}`,
			want: want{decision: Auto, rule: RulePreauthorized}},
		{name: "pre-authorised pattern", args: `{"method":"PUT","url":"https://api.example.com/flags/dark-mode"}`,
			want: want{decision: Auto, rule: RulePreauthorized}},
		{name: "@ in the path is not user information", args: `{"method":"PUT","url":"https://api.example.com/flags/@evil.com"}`,
			want: want{decision: Auto, rule: RulePreauthorized}}, // the host is still api.example.com
		{name: "user and password shape in the path", args: `{"method":"PUT","url":"https://api.example.com/flags/x:y@evil.com/"}`,
			want: want{decision: Auto, rule: RulePreauthorized}},
		{name: "pattern refuses a dot segment", args: `{"method":"PUT","url":"https://api.example.com/flags/../admin/users"}`, want: deflt},
		{name: "pattern refuses an encoded dot segment", args: `{"method":"PUT","url":"https://api.example.com/flags/%2e%2E/admin"}`, want: deflt},
		{name: "pattern refuses an encoded slash", args: `{"method":"PUT","url":"https://api.example.com/flags/x%2f..%2fadmin"}`, want: deflt},
		{name: "pattern refuses a backslash", args: `{"method":"PUT","url":"https://api.example.com/flags/..\\admin"}`, want: deflt},
		{name: "pattern allows dots inside a name", args: `{"method":"PUT","url":"https://api.example.com/flags/v1..2"}`,
			want: want{decision: Auto, rule: RulePreauthorized}},
		{name: "pattern refuses user information", args: `{"method":"PUT","url":"https://api.example.com@evil.com/flags/x"}`, want: deflt},
		{name: "metadata beats pre-authorisation", args: `{"method":"DELETE","url":"http://169.254.169.254/x","headers":{}}`,
			want: blockAbs},
		{name: "pattern runs another host", args: `{"method":"DELETE","url":"http://example.com/x","headers":{"A":"b"}}`,
			want: want{decision: Auto, rule: RulePreauthorized}},

		// Schemes and shapes.
		{name: "file scheme", args: `{"url":"file:///etc/passwd"}`, want: with(blockAbs, "scheme")},
		{name: "gopher", args: `{"url":"gopher://127.0.0.1:6379/_FLUSHALL"}`, want: blockAbs},
		{name: "ftp", args: `{"url":"ftp://example.com/x"}`, want: blockAbs},
		{name: "data", args: `{"url":"data:text/plain,hi"}`, want: blockAbs},
		{name: "javascript", args: `{"url":"javascript:alert(1)"}`, want: blockAbs},
		{name: "dict", args: `{"url":"dict://127.0.0.1:11211/stats"}`, want: blockAbs},
		{name: "ldap", args: `{"url":"ldap://127.0.0.1/dc=x"}`, want: blockAbs},
		{name: "jar", args: `{"url":"jar:http://example.com/x.jar!/a"}`, want: blockAbs},
		{name: "netdoc", args: `{"url":"netdoc:///etc/passwd"}`, want: blockAbs},
		{name: "http+unix", args: `{"url":"http+unix://%2Fvar%2Frun%2Fdocker.sock/containers/json"}`, want: blockAbs},
		{name: "websocket", args: `{"url":"ws://example.com/"}`, want: blockAbs},
		{name: "scheme-relative", args: `{"url":"//169.254.169.254/"}`, want: with(blockAbs, "no http or https scheme")},
		{name: "single slash", args: `{"url":"http:/169.254.169.254/"}`, want: with(blockAbs, "no host")},
		{name: "backslashes", args: `{"url":"http:\\\\169.254.169.254\\latest"}`, want: with(blockAbs, "no host")},
		{name: "tab in the host", args: `{"url":"http://169.254.169.254\t/"}`, want: with(blockAbs, "control characters")},
		{name: "newline in the url", args: `{"url":"http://example.com\n.169.254.169.254/"}`, want: with(blockAbs, "control characters")},
		{name: "metadata address as user information goes to the host", args: `{"url":"http://169.254.169.254:80@example.com/"}`, want: autoWL},
		{name: "escaped slash in user information", args: `{"url":"http://169.254.169.254%2f@example.com/"}`, want: autoWL},
		{name: "no scheme", args: `{"url":"example.com/x"}`, want: with(blockAbs, "no http or https scheme")},
		{name: "no host", args: `{"url":"http:///x"}`, want: with(blockAbs, "no host")},
		{name: "opaque", args: `{"url":"http:example.com"}`, want: blockAbs},
		{name: "does not parse", args: `{"url":"http://[::1/"}`, want: with(blockAbs, "does not parse")},
		{name: "control characters", args: `{"url":"http://example.com/\r\nX: y"}`, want: blockAbs},
		{name: "empty url", args: `{"url":""}`, want: blockAbs},
		{name: "upper-case scheme", args: `{"url":"HTTPS://example.com/"}`, want: autoWL},
		{name: "absurd beats low", args: `{"url":"file:///etc/shadow","risk_level":"low"}`, want: llm(blockAbs, Low)},
		{name: "strict still blocks", mode: Strict, args: `{"url":"http://169.254.169.254/"}`, want: blockAbs},

		// Malformed arguments.
		{name: "url missing", args: `{"method":"GET"}`, want: with(deflt, `"url" is missing`)},
		{name: "url not a string", args: `{"url":{"host":"x"}}`, want: with(deflt, `"url" is not a string`)},
		{name: "method not a string", args: `{"method":1,"url":"https://example.com/"}`, want: with(deflt, `"method"`)},
		{name: "method with space", args: `{"method":"GET X","url":"https://example.com/"}`, want: with(deflt, `"method"`)},
		{name: "method with a trailing space", args: `{"method":"get ","url":"https://example.com/"}`, want: with(deflt, `"method"`)},
		{name: "method with a newline", args: `{"method":"GET\n","url":"https://example.com/"}`, want: with(deflt, `"method"`)},
		{name: "method in another script", args: `{"method":"GЕT","url":"https://example.com/"}`, want: with(deflt, `"method"`)},
		{name: "unknown method", args: `{"method":"PURGE","url":"https://example.com/"}`, want: with(deflt, "PURGE is not a read-only")},
		{name: "trace", args: `{"method":"TRACE","url":"https://example.com/"}`, want: deflt},

		// A read method that may still act.
		{name: "get with a body", args: `{"method":"GET","url":"https://es.example.com/_search","body":"{\"query\":{}}"}`,
			want: with(deflt, "carries a body")},
		{name: "get with an empty body", args: `{"method":"GET","url":"https://example.com/","body":""}`, want: autoWL},
		{name: "get with a null body", args: `{"method":"GET","url":"https://example.com/","body":null}`, want: autoWL},
		{name: "get with a method override", args: `{"method":"GET","url":"https://api.example.com/users/1","headers":{"X-HTTP-Method-Override":"DELETE"}}`,
			want: with(deflt, "another method")},
		{name: "lower-case method override", args: `{"url":"https://api.example.com/users/1","headers":{"x-http-method":"DELETE"}}`,
			want: with(deflt, "another method")},
		{name: "x-method-override", args: `{"method":"HEAD","url":"https://api.example.com/users/1","headers":{"X-Method-Override":"PUT"}}`,
			want: with(deflt, "another method")},
		{name: "harmless headers", args: `{"method":"GET","url":"https://api.example.com/","headers":{"Accept":"application/json","Authorization":"Bearer x"}}`,
			want: autoWL},
		{name: "non-ascii host", args: `{"url":"https://bücher.example/"}`, want: with(deflt, "not plain ASCII")},
		// UTS #46 maps these before the address checks (issue 11): blocked, not only confirmed.
		{name: "mathematical digits map to the metadata address", args: `{"url":"http://𝟏𝟔𝟗.𝟐𝟓𝟒.𝟏𝟔𝟗.𝟐𝟓𝟒/"}`, want: with(blockAbs, "169.254.169.254")},
		{name: "circled letters map to the metadata name", args: `{"url":"http://ⓜⓔⓣⓐⓓⓐⓣⓐ.google.internal/"}`, want: with(blockAbs, "metadata.google.internal")},
		{name: "sslip.io with dashes", args: `{"url":"http://169-254-169-254.sslip.io/latest/"}`, want: with(blockAbs, "metadata")},
		{name: "nip.io hex", args: `{"url":"http://a9fea9fe.nip.io/"}`, want: with(blockAbs, "metadata")},
		{name: "nip.io dotted", args: `{"url":"http://169.254.169.254.nip.io/"}`, want: with(blockAbs, "metadata")},
		{name: "sslip.io IPv6 with dashes", args: `{"url":"http://fd00-ec2--254.sslip.io/"}`, want: with(blockAbs, "metadata")},
		{name: "full-width dots", args: `{"url":"http://169。254。169。254/"}`, want: with(blockAbs, "metadata")},
		{name: "low risk_level does not lower a body", args: `{"method":"GET","url":"https://example.com/","body":"x","risk_level":"low"}`,
			want: llm(want{decision: Auto, rule: RuleLLM}, Low)},
		{name: "headers not an object", args: `{"url":"https://example.com/","headers":"X: y"}`, want: with(deflt, `"headers"`)},
		{name: "body not a string", args: `{"method":"POST","url":"https://example.com/","body":{"a":1}}`, want: with(deflt, `"body"`)},
	}
	for i := range cases {
		cases[i].tool = ToolHTTP
	}
	runCases(t, p, cases)
}

// TestMetadataSpellings checks every spelling of a metadata or link-local
// address that a resolver or an HTTP client accepts.
func TestMetadataSpellings(t *testing.T) {
	p := mustPolicy(t, Config{})
	blocked := []string{
		"http://169.254.169.254/latest/meta-data/",
		"http://169.254.169.254:80/",
		"https://169.254.169.254/",
		"http://2852039166/",
		"http://0xa9fea9fe/",
		"http://0xA9FEA9FE/",
		"http://0251.0376.0251.0376/",
		"http://0xa9.0xfe.0xa9.0xfe/",
		"http://169.254.43518/",
		"http://169.16689662/",
		"http://0251.254.169.254/",
		"http://[::ffff:169.254.169.254]/",
		"http://[::ffff:a9fe:a9fe]/",
		"http://[0:0:0:0:0:ffff:a9fe:a9fe]/",
		"http://[::169.254.169.254]/",
		"http://[64:ff9b::a9fe:a9fe]/",
		"http://[2002:a9fe:a9fe::1]/",
		"http://[fd00:ec2::254]/latest/meta-data/",
		"http://[FD00:EC2::254]/",
		"http://[fe80::1]/",
		"http://[fe80::1%25eth0]/",
		"http://metadata.google.internal/computeMetadata/v1/",
		"http://METADATA.GOOGLE.INTERNAL/",
		"http://metadata.google.internal./",
		"http://metadata.goog/",
		"http://metadata/computeMetadata/v1/",
		"http://instance-data/latest/",
		"http://100.100.100.200/latest/meta-data/",
		"http://169.254.170.2/v2/credentials",
		"http://192.0.0.192/opc/v2/instance/",
		"http://169.254.169.254./",
		"http://good.example.com@169.254.169.254/",
		"http://user:pass@metadata.google.internal/",
		"http://169.254.1.1/",
		"http://169.254.169.254.nip.io/",
		"http://169-254-169-254.sslip.io/",
		"http://１６９.２５４.１６９.２５４/",
		"http://169。254。169。254/",
		"http://%31%36%39.254.169.254/",
		"http://app.169.254.169.254.nip.io/",
		"http://169.254.169.254.nip.io./",
		"http://app-169-254-169-254.sslip.io/",
		"http://a9fea9fe.nip.io/",
		"http://app-a9fea9fe.nip.io/",
		"http://169.254.170.2.nip.io/v2/credentials",
		"http://168.63.129.16/machine?comp=goalstate",
		"http://api.metadata.cloud.ibm.com/instance_identity/v1/token",
		"http://[64:ff9b:1::a9fe:a9fe]/",
		"http://[2001:0:4136:e378:8000:63bf:5601:5601]/",
		"http://169.254.169.254/metadata/instance?api-version=2021-02-01",
		"HTTP://169.254.169.254/",
		"http://[fd00:ec2::254]:80/",
		"http://[fd00:ec2::23]/v1/credentials",
		"http://169.254.170.23/v1/credentials",
		"http://[0:0:0:0:0:ffff:169.254.169.254]/",
	}
	for _, u := range blocked {
		t.Run(u, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"method": "GET", "url": u})
			v := p.Assess(Call{Tool: ToolHTTP, Args: args})
			if v.Decision != Block {
				t.Errorf("%s: %+v, want block", u, v)
			}
		})
	}
	allowed := []string{
		"http://169.255.169.254/",
		"http://example.com/169.254.169.254",
		"http://metadata.example.com/",
		"http://1.2.3.4/",
		"http://[2001:db8::1]/",
		"http://0.example.com/",
		"http://a-b-c-d.example.com/",
		"http://v1.2.3.4.example.com/",
		"http://deadbeef.example.com/",
		"http://build-10-0-0-1.example.com/",
	}
	for _, u := range allowed {
		t.Run(u, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"method": "GET", "url": u})
			if v := p.Assess(Call{Tool: ToolHTTP, Args: args}); v.Decision != Auto {
				t.Errorf("%s: %+v, want auto", u, v)
			}
		})
	}
}

func TestAssessUnknownTool(t *testing.T) {
	p := mustPolicy(t, Config{Tools: map[string]ToolConfig{
		"jira_create": {Preauthorized: []string{`{"project":"OPS","title":"x"}`}},
	}})
	cases := []policyCase{
		{name: "confirmed", tool: "jira_create", args: `{"project":"OPS"}`, want: with(deflt, "jira_create is not a tool with read-only rules")},
		{name: "no args", tool: "pager_status", want: deflt},
		{name: "null args", tool: "pager_status", args: `null`, want: deflt},
		{name: "low runs in smart", tool: "pager_status", args: `{"risk_level":"low"}`,
			want: llm(want{decision: Auto, risk: Low, rule: RuleLLM}, Low)},
		{name: "low ignored in guarded", tool: "pager_status", mode: Guarded, args: `{"risk_level":"low"}`, want: llm(deflt, Low)},
		{name: "high", tool: "pager_status", args: `{"risk_level":"HIGH"}`, want: llm(want{decision: Confirm, risk: High, rule: RuleLLM}, High)},
		{name: "strict", tool: "pager_status", mode: Strict, args: `{"risk_level":"low"}`, want: llm(want{decision: Confirm, rule: RuleMode}, Low)},
		{name: "pre-authorised without risk_level", tool: "jira_create", args: `{ "project": "OPS", "risk_level": "high", "title": "x" }`,
			want: llm(want{decision: Auto, rule: RulePreauthorized}, High)},
		{name: "not an object", tool: "pager_status", args: `"x"`, want: with(deflt, "not a JSON object")},
		{name: "empty tool name", tool: "", args: `{}`, want: with(deflt, "tool name is empty")},
	}
	runCases(t, p, cases)
}

func TestModePrecedence(t *testing.T) {
	p := mustPolicy(t, Config{
		Mode:  Smart,
		Tools: map[string]ToolConfig{ToolCommand: {Mode: Guarded}},
		Channels: map[string]ChannelConfig{
			"C-strict": {Mode: Strict},
			"C-mixed":  {Mode: Strict, Tools: map[string]ChannelToolConfig{ToolCommand: {Mode: Smart}}},
			"C-tool":   {Tools: map[string]ChannelToolConfig{ToolSQL: {Mode: Guarded}}},
		},
	})
	// A low-rated unknown command shows the mode: smart runs it (llm),
	// guarded confirms it (default), strict confirms it (mode).
	const cmd = `{"command":"./deploy.sh","risk_level":"low"}`
	const sql = `{"sql":"INSERT INTO t VALUES (1)","risk_level":"low"}`
	smart := llm(want{decision: Auto, rule: RuleLLM}, Low)
	guarded := llm(want{decision: Confirm, rule: RuleDefault}, Low)
	strict := llm(want{decision: Confirm, rule: RuleMode}, Low)
	cases := []policyCase{
		{name: "global per-tool mode", tool: ToolCommand, args: cmd, want: guarded},
		{name: "global mode for another tool", tool: ToolSQL, args: sql, want: smart},
		{name: "unknown channel uses global", tool: ToolCommand, channel: "C-none", args: cmd, want: guarded},
		{name: "channel mode beats global per-tool", tool: ToolCommand, channel: "C-strict", args: cmd, want: strict},
		{name: "channel per-tool beats channel mode", tool: ToolCommand, channel: "C-mixed", args: cmd, want: smart},
		{name: "channel mode for another tool", tool: ToolSQL, channel: "C-mixed", args: sql, want: strict},
		{name: "channel per-tool only", tool: ToolSQL, channel: "C-tool", args: sql, want: guarded},
		{name: "channel without mode falls back to global per-tool", tool: ToolCommand, channel: "C-tool", args: cmd, want: guarded},
		{name: "call mode beats everything", tool: ToolCommand, channel: "C-strict", mode: Smart, args: cmd, want: smart},
		{name: "call mode guarded", tool: ToolSQL, mode: Guarded, args: sql, want: guarded},
	}
	runCases(t, p, cases)
}

func TestPreauthorizedCommandPattern(t *testing.T) {
	p := mustPolicy(t, Config{Tools: map[string]ToolConfig{
		ToolCommand: {Preauthorized: []string{`re:ls( .*)?`, `re:journalctl -u [a-z-]+ --since .*`, `re:cat logs/.*`}},
	}})
	pa := p.preauth[ToolCommand]
	cases := []struct {
		name string
		line string
		want bool
	}{
		{"plain", "ls -la /var/log", true},
		{"bare", "ls", true},
		{"quoted words", `journalctl -u nginx --since "1 hour ago"`, true},
		{"single quotes", `journalctl -u nginx --since '1 hour ago'`, true},
		{"list", "ls; rm -rf data", false},
		{"and", "ls && rm -rf data", false},
		{"or", "ls || rm -rf data", false},
		{"pipe", "ls | sh", false},
		{"newline", "ls\nrm -rf data", false},
		{"background", "ls & rm -rf data", false},
		{"command substitution", "ls $(rm -rf data)", false},
		{"backquotes", "ls `rm -rf data`", false},
		{"substitution in double quotes", `ls "$(rm -rf data)"`, false},
		{"variable", "ls $HOME", false},
		{"process substitution", "ls <(rm -rf data)", false},
		{"redirection", "ls > /etc/passwd", false},
		{"assignment", "LD_PRELOAD=x.so ls", false},
		{"glob", "ls *", false},
		{"brace", "ls {a,b}", false},
		{"tilde", "ls ~", false},
		{"ansi-c quote", `ls $'\x2f'`, false},
		{"subshell", "(ls)", false},
		{"does not parse", "ls 'unterminated", false},
		{"dots climb", "cat logs/../.env", false},
		{"dots inside a word are fine", "cat logs/a..b", true},
		{"other command", "lsblk", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, got := pa.match(tc.line)
			if got != tc.want {
				t.Errorf("match(%q) = %v, want %v", tc.line, got, tc.want)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"global mode", Config{Mode: "stric"}, `risk: mode "stric" is not one of strict, guarded, smart`},
		{"tool mode", Config{Tools: map[string]ToolConfig{ToolSQL: {Mode: "stric"}}},
			`risk.tools.execute_sql: mode "stric" is not one of strict, guarded, smart`},
		{"tool name", Config{Tools: map[string]ToolConfig{"bad tool": {}}}, `risk.tools: "bad tool" is not a tool name`},
		{"channel mode", Config{Channels: map[string]ChannelConfig{"C1": {Mode: "loose"}}}, `risk.channels.C1: mode "loose"`},
		{"channel id", Config{Channels: map[string]ChannelConfig{" ": {}}}, `risk.channels: a channel id is empty`},
		{"channel tool mode", Config{Channels: map[string]ChannelConfig{"C1": {Tools: map[string]ChannelToolConfig{ToolCommand: {Mode: "Smart"}}}}},
			`risk.channels.C1.tools.execute_command: mode "Smart"`},
		{"channel tool name", Config{Channels: map[string]ChannelConfig{"C1": {Tools: map[string]ChannelToolConfig{"": {}}}}},
			`risk.channels.C1.tools: "" is not a tool name`},
		{"empty preauth", Config{Tools: map[string]ToolConfig{ToolCommand: {Preauthorized: []string{"ls", " "}}}},
			`risk.tools.execute_command.preauthorized[1]: empty entry`},
		{"empty regexp", Config{Tools: map[string]ToolConfig{ToolCommand: {Preauthorized: []string{"re:"}}}},
			`risk.tools.execute_command.preauthorized[0]: empty regular expression`},
		{"bad regexp", Config{Tools: map[string]ToolConfig{ToolSQL: {Preauthorized: []string{"re:SELECT (1"}}}},
			`risk.tools.execute_sql.preauthorized[0]: error parsing regexp`},
		{"NUL in preauth", Config{Tools: map[string]ToolConfig{ToolSQL: {Preauthorized: []string{"a\x00"}}}},
			`risk.tools.execute_sql.preauthorized[0]: entry contains a NUL byte`},
		{"sensitive path", Config{SensitivePaths: []string{"[x"}}, `risk.sensitive_paths: sensitive path pattern "[x"`},
		{"sensitive path empty", Config{SensitivePaths: []string{""}}, `risk.sensitive_paths:`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if err == nil {
				t.Fatalf("New succeeded, want error %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
	if _, err := New(Config{}); err != nil {
		t.Errorf("the zero Config must be valid: %v", err)
	}
}

// TestAssessNeverPanics feeds odd arguments to every tool.
func TestAssessNeverPanics(t *testing.T) {
	p := mustPolicy(t, Config{})
	odd := []string{``, `null`, `1`, `"x"`, `[]`, `{`, `{"a":}`, `{"command":{"x":[1,{"y":"}"}]}}`,
		`{"path":"\ud800"}`, `{"url":"http://[::ffff:999.1.1.1]/"}`, `{"operation":"read","path":"\u0000"}`,
		`{"sql":"\u0000"}`, "{\"command\":\"\xff\xfe\"}", `{"risk_level":{"a":1}}`, `{"url":"http://0x/"}`,
		`{"url":"http://4294967296/"}`, `{"url":"http://1.2.3.4.5/"}`, `{"url":"http://[::]/"}`}
	for _, tool := range []string{ToolCommand, ToolSQL, ToolFile, ToolHTTP, "other"} {
		for _, a := range odd {
			v := p.Assess(Call{Tool: tool, Args: json.RawMessage(a)})
			if v.Decision == "" || v.Risk == "" || v.Rule == "" || len(v.Reasons) == 0 {
				t.Errorf("%s %s: incomplete verdict %+v", tool, a, v)
			}
		}
	}
}

// TestAssessConcurrent judges the same calls from many goroutines; under
// -race it shows that Assess shares nothing it writes.
func TestAssessConcurrent(t *testing.T) {
	p := mustPolicy(t, Config{Tools: map[string]ToolConfig{ToolCommand: {Preauthorized: []string{`re:ls( .*)?`}}}})
	calls := benchMix(t)["mix"]
	want := make([]Verdict, len(calls))
	for i, c := range calls {
		want[i] = p.Assess(c)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range calls {
				j := (i + g) % len(calls)
				if got := p.Assess(calls[j]); !reflect.DeepEqual(got, want[j]) {
					t.Errorf("call %d: %+v, then %+v", j, want[j], got)
				}
			}
		})
	}
	wg.Wait()
}
