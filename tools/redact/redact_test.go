package redact_test

import (
	"encoding/base64"
	"strings"
	"sync"
	"testing"

	"github.com/countersign/countersign/tools/redact"
)

// Planted secrets are put together at run time so that this file is not
// itself a finding for a scanner run over the repository.
var (
	awsKeyID     = "AKIA" + "QX3ZT7WNBV2MRL5K"
	awsSecret    = "wJa7Xr" + "Utn9FEMI/K7MDENG/bPxRfiCYq3Xk2LpZ"
	slackBot     = "xoxb-" + "1234567890123-1234567890123-" + "aB3dE5fG7hJ9kL1mN3pQ5rS7"
	githubPAT    = "ghp_" + "R4nd0mL00k1ngT0k3nV4lu3Xy7Zq2Wp9Kd8F"
	privateKey   = "-----BEGIN " + "PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEINHmIDttzqrFI86G+J72K2QrZPpQeH7AQt2G/MeE47ck\n-----END PRIVATE KEY-----"
	rsaKey       = "-----BEGIN RSA " + "PRIVATE KEY-----\nMIICeQIBADANBgkqhkiG9w0BAQEFAASCAmMwggJfAgEAAoGBANue53/ojJBu4Tm7\nLMNF4h7wPQpZ16xzKswy4PPWHNHQnr/Mir06QehL1Yy2MHKsih3yPkFcUxVvk+pD\n-----END RSA PRIVATE KEY-----"
	stripeLive   = "sk_live_" + "51H8x2eKx9Qz7LmNpR4sT6vW8yA0bC"
	slackWebhook = "https://hooks.slack.com/services/" + "T01ABCDEF/B02GHIJKL/" + "aB3dE5fG7hJ9kL1mN3pQ5rS7"
)

// planted are the known tokens each test plants: a value, and text around
// it as on-call output would hold it.
var planted = []struct {
	name, secret, text string
}{
	{"aws key id", awsKeyID, "aws_access_key_id = " + awsKeyID + "\n"},
	{"aws secret", awsSecret, "aws_secret_access_key = " + awsSecret + "\n"},
	{"aws pair in env", awsSecret, "AWS_ACCESS_KEY_ID=" + awsKeyID + "\nAWS_SECRET_ACCESS_KEY=" + awsSecret + "\n"},
	{"slack bot token", slackBot, "2026-11-26T10:00:01Z INFO connecting with token " + slackBot + " to slack\n"},
	{"github token", githubPAT, "remote: https://x-access-token:" + githubPAT + "@github.com/acme/app.git\n"},
	{"private key", "MC4CAQAwBQYDK2VwBCIEINHmIDttzqrFI86G", privateKey + "\n"},
	{"rsa key", "MIICeQIBADANBgkqhkiG9w0BAQEFAASCAmMwggJfAgEAAoGBANue53", rsaKey},
	{"stripe key", stripeLive, `{"stripe":{"secret_key":"` + stripeLive + `"}}`},
	{"slack webhook", "aB3dE5fG7hJ9kL1mN3pQ5rS7", "WEBHOOK=" + slackWebhook},
	{"password in a url", "S3cr3t-Pa55w0rd", "DATABASE_URL=postgres://app:S3cr3t-Pa55w0rd@db.internal:5432/app\n"},
	{"password in a redis url", "hunter2hunter2", "  REDIS_URL: redis://:hunter2hunter2@redis:6379/0\n"},
	{"mysql -p in ps", "Sup3rS3cret", "root  4410  0.0  0.1  12345  6789 ?  S  10:00  0:00 mysql -u root -pSup3rS3cret -h db shop\n"},
	{"--password=", "Sup3rS3cret", "mysqldump --user=backup --password=Sup3rS3cret --all-databases\n"},
	{"key in base64", awsKeyID, "data:\n  credentials: " + base64.StdEncoding.EncodeToString([]byte("aws_access_key_id="+awsKeyID)) + "\n"},
}

func newRedactor(t testing.TB, allow ...string) *redact.Redactor {
	t.Helper()
	r, err := redact.New(allow)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRedactPlanted(t *testing.T) {
	r := newRedactor(t)
	for _, c := range planted {
		t.Run(c.name, func(t *testing.T) {
			got, n := r.Redact(c.text)
			if strings.Contains(got, c.secret) || n == 0 {
				t.Fatalf("Redact(%q) = %q, %d; the secret went through", c.text, got, n)
			}
			if !strings.Contains(got, "[redacted: ") {
				t.Errorf("Redact(%q) = %q: no [redacted: <rule>] marker", c.text, got)
			}
		})
	}
}

func TestRedactNamesRuleAndCounts(t *testing.T) {
	r := newRedactor(t)
	text := "token " + slackBot + " again " + slackBot + "\n" + privateKey + "\n"
	got, n := r.Redact(text)
	want := "token [redacted: slack-bot-token] again [redacted: slack-bot-token]\n[redacted: private-key]\n"
	if got != want || n != 3 {
		t.Errorf("Redact = %q, %d; want %q, 3", got, n, want)
	}
}

// ordinary is on-call output that holds no secret and must pass unchanged.
var ordinary = map[string]string{
	"kubectl get pods": `NAME                                READY   STATUS    RESTARTS   AGE
api-7d9f8c6b5d-x2x7k                1/1     Running   0          3d4h
api-7d9f8c6b5d-zq9wm                1/1     Running   1 (2d ago) 3d4h
redis-master-0                      1/1     Running   0          12d
worker-5c8d7f9b4-8hj2p              0/1     CrashLoopBackOff   47   3h12m
`,
	"kubectl get secrets": `NAME                  TYPE                                  DATA   AGE
default-token-x7k2p   kubernetes.io/service-account-token   3      200d
api-tls               kubernetes.io/tls                     2      90d
`,
	"df -h": `Filesystem      Size  Used Avail Use% Mounted on
/dev/nvme0n1p1   97G   81G   16G  84% /
tmpfs           7.8G     0  7.8G   0% /dev/shm
/dev/nvme1n1    492G  301G  166G  65% /var/lib/mysql
`,
	"git log": `commit 9fceb02d0ae598e95dc970b74767f19372d61af8
Author: Ana Ops <ana@example.com>
Date:   Thu Nov 26 10:02:11 2026 +0000

    api: retry the token refresh once before failing

commit e83c5163316f89bfbde7d9ab23ca2e25604af290
7c4a8d09ca3762af61e59520943dc26494f8941b fix auth key rotation job
`,
	"uuids": `request_id=3f2504e0-4f89-11d3-9a0c-0305e82c3301 user=42 status=200
trace_id=0af7651916cd43dd8448eb211c80319c span_id=b7ad6b7169203331
session 550e8400-e29b-41d4-a716-446655440000 expired
`,
	"base64 image": "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP4z8DwHwAFAAIB4iG8MwAAAABJRU5ErkJggg==\n",
	"docker ps": `CONTAINER ID   IMAGE                 COMMAND                  CREATED        STATUS        PORTS                    NAMES
4c01db0b339c   nginx:1.27            "/docker-entrypoint.…"   2 hours ago    Up 2 hours    0.0.0.0:80->80/tcp       web
d7886598dbe2   redis:7.4             "docker-entrypoint.s…"   3 days ago     Up 3 days     6379/tcp                 cache
`,
	"journalctl": `Nov 26 10:01:02 web-1 sshd[2231]: Accepted publickey for deploy from 10.0.4.7 port 51122 ssh2: ED25519 SHA256:p2QAMXNIC1TJYWeIOttrVc98/R1BUFWu3/LiyKgUfQM
Nov 26 10:01:05 web-1 systemd[1]: Started api.service - API server.
Nov 26 10:02:44 web-1 api[4410]: token refresh ok for client_id=billing-service expires_in=3600
Nov 26 10:02:45 web-1 kernel: EXT4-fs (nvme0n1p1): mounted filesystem 7b1e6a2e-0d3c-4b7a-9a51-2f0c1d8e9b44 r/w
`,
	"ps aux": `USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND
root           1  0.0  0.1 167744 11788 ?        Ss   Nov20   0:21 /sbin/init
mysql       1123  3.2 12.4 2473216 1003424 ?     Ssl  Nov20 310:45 /usr/sbin/mariadbd
www-data    2210  0.4  1.1 245112 90112 ?        S    10:00   0:03 php-fpm: pool www
`,
	"free and uptime": `               total        used        free      shared  buff/cache   available
Mem:         8052720     5123412      312044       81232     2617264     2560124
Swap:        2097148      524288     1572860
 10:03:11 up 6 days,  2:41,  2 users,  load average: 3.12, 2.87, 2.65
`,
	"sha256sum": `e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  empty.txt
9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08  release.tar.gz
`,
	"ip addr": `2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP group default qlen 1000
    link/ether 02:42:ac:11:00:02 brd ff:ff:ff:ff:ff:ff
    inet 172.17.0.2/16 brd 172.17.255.255 scope global eth0
    inet6 fe80::42:acff:fe11:2/64 scope link
`,
	"mysql processlist": `+----+-------------+-----------+------+---------+------+----------------+------------------+
| Id | User        | Host      | db   | Command | Time | State          | Info             |
+----+-------------+-----------+------+---------+------+----------------+------------------+
| 12 | app         | 10.0.4.9  | shop | Query   |    3 | Sending data   | SELECT * FROM orders WHERE id = 4411 |
`,
	"http headers": `HTTP/1.1 200 OK
Content-Type: application/json
ETag: "33a64df551425fcc55e4d42a148795d9f25f89d4"
X-Request-Id: 5f2b1c9e-8d7a-4e3b-9c1d-2a6f8e4b7c0d
Cache-Control: max-age=3600
`,
	"urls without passwords": `remote: https://github.com/acme/app.git
origin  git@github.com:acme/app.git (fetch)
REDIS_URL=redis://redis:6379/0
DATABASE_URL=mysql://app@db:3306/shop
DATABASE_URL=postgres://app:${DB_PASSWORD}@db:5432/app
curl -s http://localhost:8080/health
so http://user:pw@host:bad/ put the password into the error
see https://user:password@example.com/ in the docs
mysql -u app -p -h db shop
mysqldump --password --single-transaction shop
redis-cli --pass-file /run/secrets/redis
`,
	"env without secrets": `HOME=/home/deploy
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin
LANG=C.UTF-8
KUBECONFIG=/etc/kubernetes/admin.conf
`,
}

func TestRedactOrdinaryOutputUnchanged(t *testing.T) {
	r := newRedactor(t)
	for name, text := range ordinary {
		t.Run(name, func(t *testing.T) {
			if got, n := r.Redact(text); got != text || n != 0 {
				t.Errorf("ordinary output changed (%d redactions):\n%s", n, got)
			}
		})
	}
}

func TestRedactAllowList(t *testing.T) {
	r := newRedactor(t, slackBot)
	text := "bot " + slackBot + " key " + githubPAT
	got, n := r.Redact(text)
	if !strings.Contains(got, slackBot) || strings.Contains(got, githubPAT) || n != 1 {
		t.Errorf("Redact = %q, %d; want the allowed Slack token kept and the GitHub token hidden", got, n)
	}
	if _, err := redact.New([]string{""}); err == nil {
		t.Error("an empty allow entry was accepted")
	}
}

func TestRedactConcurrent(t *testing.T) {
	r := newRedactor(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for _, c := range planted {
				if got, _ := r.Redact(c.text); strings.Contains(got, c.secret) {
					t.Errorf("%s went through under concurrent use", c.name)
				}
			}
		})
	}
	wg.Wait()
}

func TestNilRedactorChangesNothing(t *testing.T) {
	var r *redact.Redactor
	if got, n := r.Redact(slackBot); got != slackBot || n != 0 {
		t.Errorf("nil Redactor changed the text: %q, %d", got, n)
	}
}

// FuzzRedact plants each known token in arbitrary text: redaction never
// panics and never lets the token through.
func FuzzRedact(f *testing.F) {
	f.Add("", "", 0)
	f.Add("log: ", "\n", 3)
	f.Add("password=", " end", 5)
	f.Add("\x00\xff", "é", 1)
	f.Add("-----BEGIN ", "KEY-----", 6)
	r := newRedactor(f)
	f.Fuzz(func(t *testing.T, before, after string, which int) {
		// Text that runs into a token with word characters changes what
		// the token is (AKIA… inside a longer word is no AWS key), so
		// each token is set apart by a space or a newline.
		c := planted[uint(which)%uint(len(planted))]
		text := before + " " + c.text + "\n" + after
		got, n := r.Redact(text)
		if strings.Contains(got, c.secret) {
			t.Fatalf("%s went through: %q", c.name, got)
		}
		if n == 0 {
			t.Fatalf("%s: no redaction counted", c.name)
		}
		// Text with no finding is returned unchanged.
		if plain, m := r.Redact(before); m == 0 && plain != before {
			t.Fatalf("text with no finding changed: %q -> %q", before, plain)
		}
	})
}

// TestRedactCutKey: a private key cut by an output cap (no end line) or a
// tail (no header) matches no gitleaks rule, and is still hidden.
func TestRedactCutKey(t *testing.T) {
	r := newRedactor(t)
	body := "MIICeQIBADANBgkqhkiG9w0BAQEFAASCAmMwggJfAgEAAoGBANue53"
	for name, text := range map[string]string{
		"capped": "config:\n" + rsaKey[:len(rsaKey)/2],
		"tail":   rsaKey[len("-----BEGIN RSA PRIVATE KEY-----\n"):] + "\nnext line",
		"short":  "-----BEGIN " + "PRIVATE KEY-----\n" + body + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			got, n := r.Redact(text)
			if n == 0 || strings.Contains(got, body[:20]) {
				t.Errorf("Redact(%q) = %q, %d: part of the key went through", text, got, n)
			}
		})
	}
}

// gaps are the shapes the gitleaks rules let through (issue 25, item 4):
// passwords holding # or $, environment and JSON assignments, a Basic
// authorization header, secrets in SQL text and on command lines, and
// password hashes of every common kind.
var gaps = []struct {
	name, secret, text string
}{
	{"password with # and $", "p#ss$w0rd!", `password = "p#ss$w0rd!"` + "\n"},
	{"env assignment", "Tr0ub4dor&3", "DB_PASSWORD=Tr0ub4dor&3\nDB_HOST=db\n"},
	{"env with hash", "a1#b2$c3", "export DB_PASSWORD='a1#b2$c3'\n"},
	{"json password", `s3cr3t\"quoted`, `{"user":"app","password": "s3cr3t\"quoted","host":"db"}`},
	{"json db_pwd", "zz9plural", `{"db_pwd":"zz9plural"}`},
	{"pgpassword", "L0ngP@ss word", "PGPASSWORD='L0ngP@ss word' psql -h db -U app -c 'select 1'\n"},
	{"yaml password", "w3ird#pass", "database:\n  password: w3ird#pass\n"},
	{"basic auth header", "YWRtaW46aHVudGVyMg==", "Authorization: Basic YWRtaW46aHVudGVyMg==\n"},
	{"curl -H bearer", "abc.def.ghi123", `curl -H "Authorization: Bearer abc.def.ghi123" https://api.internal/v1`},
	{"curl -u", "hunter2x", "curl -u admin:hunter2x https://grafana.internal/api/health\n"},
	{"redis-cli -a", "r3disPass", "redis-cli -h cache -a r3disPass info replication\n"},
	{"sql identified by", "N3wP4ss", "CREATE USER 'app'@'%' IDENTIFIED BY 'N3wP4ss';"},
	{"sql alter user", "N3wP4ss", "ALTER USER app IDENTIFIED WITH mysql_native_password BY 'N3wP4ss'"},
	{"sql password()", "0ldP4ss", "SET PASSWORD FOR app = PASSWORD('0ldP4ss')"},
	{"change master", "r3plP4ss", "CHANGE MASTER TO MASTER_HOST='db1', MASTER_USER='repl', MASTER_PASSWORD='r3plP4ss'"},
	{"sha512 crypt", "$6$rounds=5000$usesomesillystri$D4IrlXatmP7rx3P3InaxBeoomnAihCKRVQP22JZ6EY47Wc6BkroIuUUBOov1i.S5KPgErtP/EN5mcO.ChWQW21", "root:$6$rounds=5000$usesomesillystri$D4IrlXatmP7rx3P3InaxBeoomnAihCKRVQP22JZ6EY47Wc6BkroIuUUBOov1i.S5KPgErtP/EN5mcO.ChWQW21:19700:0:99999:7:::\n"},
	{"yescrypt", "$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7", "deploy:$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7:19700:0:99999:7:::\n"},
	{"bcrypt", "$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW", "admin | $2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW\n"},
	{"mysql native hash", "*6BB4837EB74329105EE4568DDA7DC67ED2CA2AD9", "| root | localhost | *6BB4837EB74329105EE4568DDA7DC67ED2CA2AD9 |\n"},
	{"mysql caching_sha2", "$A$005$", "app\t%\t$A$005$0pU+sGm[on\x1fqGw,mSR\\(\\x2e7IrWXmiX7Xo8bxfn5Vv3YyK54aFmk9v4k6Mf3GhE9F5\n"},
	{"postgres scram", "SCRAM-SHA-256$4096:c2FsdHNhbHQ=$kV5qsZ4zM9H2xw8=:hS4n3Jd0zv1=", " app | SCRAM-SHA-256$4096:c2FsdHNhbHQ=$kV5qsZ4zM9H2xw8=:hS4n3Jd0zv1=\n"},
	{"postgres md5", "md5a3556571e93b0d20722ba62be61e8c2d", " app | md5a3556571e93b0d20722ba62be61e8c2d\n"},
	{"erlang cookie file", "QWERTYUIOPASDFGHJKLZ", "QWERTYUIOPASDFGHJKLZ\n"},
	{"erlang -setcookie", "mycookie42", "beam.smp -- -root /usr/lib/erlang -setcookie mycookie42 -name rabbit@host\n"},
}

// TestRedactKeyInAWindow: a keyword on the line after another keyword's
// line (inside that line's window) still brings its own next line into a
// window, so a rule whose value follows on that line finds it: here
// adafruit-api-key itself, not only the generic rule (whose entropy test a
// plainer value would fail).
func TestRedactKeyInAWindow(t *testing.T) {
	r := newRedactor(t)
	got, _ := r.Redact("adafruit_user: bob\nadafruit_key:\n  x7k2m9q4w8e1r5t3y6u0i2o4p8a1s3d5\n")
	if !strings.Contains(got, "[redacted: adafruit-api-key]") {
		t.Errorf("Redact = %q, want the value found by adafruit-api-key", got)
	}
}

func TestRedactGaps(t *testing.T) {
	r := newRedactor(t)
	for _, c := range gaps {
		t.Run(c.name, func(t *testing.T) {
			got, n := r.Redact(c.text)
			if strings.Contains(got, c.secret) || n == 0 {
				t.Fatalf("Redact(%q) = %q, %d; the secret went through", c.text, got, n)
			}
		})
	}
}

// lookAlikes hold the words of the gap rules but no secret: they must pass
// unchanged (a needless mark hides what the on-call engineer needs).
var lookAlikes = map[string]string{
	"secret names in yaml": "      volumes:\n      - name: creds\n        secret:\n          secretName: db-creds\n      env:\n      - name: TOKEN_URL\n        valueFrom:\n          secretKeyRef:\n            name: api-token\n",
	"password policy":      "password_min_length=12\nPASS_MAX_DAYS 99999\ntoken_ttl: 3600\npassword_required: true\n",
	"secret files":         "DB_PASSWORD_FILE=/run/secrets/db_password\npassword_file: ./secrets/db\n",
	"shell pwd":            "PWD=/home/deploy/app\nOLDPWD=/home/deploy\n",
	"placeholders":         "DB_PASSWORD=${DB_PASSWORD}\npassword: <your-password>\nAPI_TOKEN=changeme\n",
	"prices and shells":    "total $5.00 and $12.50\necho $HOME $PATH\n*\tlist all\n",
	"upper words":          "WARNING\nDEPRECATED\nTHIS IS A HEADLINE\n",
	"sql without secrets":  "SELECT user, host FROM mysql.user WHERE password_expired = 'N';\nGRANT SELECT ON shop.* TO 'app'@'%';\n",
	"authorization words":  "authorization: granted for role admin\nAuthorization header missing\n",
	"checksums":            "md5sum: d41d8cd98f00b204e9800998ecf8427e  empty.txt\n",
}

func TestRedactLookAlikesUnchanged(t *testing.T) {
	r := newRedactor(t)
	for name, text := range lookAlikes {
		t.Run(name, func(t *testing.T) {
			if got, n := r.Redact(text); got != text || n != 0 {
				t.Errorf("look-alike changed (%d redactions):\n%s", n, got)
			}
		})
	}
}
