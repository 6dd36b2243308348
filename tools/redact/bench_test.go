package redact_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchCap is the output cap a tool's result is cut to before redaction.
const benchCap = 64 << 10

// fill repeats line(i) for i = 0, 1, … until the text reaches benchCap,
// and cuts it there, as the cap cuts a tool's output.
func fill(head string, line func(i int) string) string {
	var b strings.Builder
	b.WriteString(head)
	for i := 0; b.Len() < benchCap; i++ {
		b.WriteString(line(i))
	}
	return b.String()[:benchCap]
}

// plant puts secret lines into text at a few places (about every
// sixteenth of it), each at the start of a line.
func plant(text string, lines ...string) string {
	var b strings.Builder
	step := len(text) / (len(lines) + 1)
	at := 0
	for k, l := range lines {
		cut := strings.IndexByte(text[(k+1)*step:], '\n') + (k+1)*step + 1
		b.WriteString(text[at:cut])
		b.WriteString(l)
		at = cut
	}
	b.WriteString(text[at:])
	return b.String()[:benchCap]
}

// realistic are 64 KiB outputs as on-call tools print them: most hold no
// secret but many of the generic rule's keywords (key, token, auth,
// access, secret, password); the "+secrets" ones hold a few.
func realistic() []struct{ name, text string } {
	psAux := fill("USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\n", func(i int) string {
		switch i % 6 {
		case 0:
			return fmt.Sprintf("app       %5d  2.1  8.4 7345112 690112 ?      Sl   Nov20  88:12 /usr/bin/java -Xms512m -Xmx2g -Dspring.profiles.active=prod -Dauth.server.url=https://sso.internal/auth -Dapi.key.header=X-Api-Key -jar /opt/app/billing-%d.jar\n", 1000+i, i)
		case 1:
			return fmt.Sprintf("root      %5d  0.0  0.1  12345  6789 ?        S    10:00   0:00 nginx: worker process\n", 1000+i)
		case 2:
			return fmt.Sprintf("deploy    %5d  0.3  1.2 245112 90112 ?        Ssl  Nov21   3:03 /usr/local/bin/node /srv/api/server.js --token-ttl=3600 --session-secret-file=/run/secrets/session --port=%d\n", 1000+i, 3000+i)
		case 3:
			return fmt.Sprintf("postgres  %5d  0.0  0.4 221004 33112 ?        Ss   Nov20   0:12 postgres: app shop 10.0.4.%d(51122) idle\n", 1000+i, i%250)
		case 4:
			return fmt.Sprintf("root      %5d  0.1  0.3 1241004 28112 ?       Ssl  Nov20  12:40 /usr/bin/containerd-shim-runc-v2 -namespace k8s.io -id 4c01db0b339c%04d -address /run/containerd/containerd.sock\n", 1000+i, i)
		}
		return fmt.Sprintf("www-data  %5d  0.4  1.1 245112 90112 ?        S    10:00   0:03 php-fpm: pool www (access.log=/var/log/php/access-%d.log)\n", 1000+i, i)
	})
	env := fill("", func(i int) string {
		names := []string{"HOME=/home/deploy", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin", "LANG=C.UTF-8",
			"KUBERNETES_SERVICE_HOST=10.96.0.1", "KUBERNETES_SERVICE_PORT_HTTPS=443", "API_BASE_URL=https://api.internal/v2",
			"AUTH_ISSUER=https://sso.internal/realms/ops", "TOKEN_TTL=3600", "SECRET_NAME=billing-db-creds",
			"ACCESS_LOG=/var/log/app/access.log", "KEY_ROTATION_DAYS=90", "OTEL_EXPORTER_OTLP_ENDPOINT=http://otel:4317",
			"JAVA_OPTS=-Xmx2g -XX:+UseG1GC", "REDIS_URL=redis://redis:6379/0", "FEATURE_FLAGS=checkout,search,auth-v2"}
		return fmt.Sprintf("%s_%d\n", names[i%len(names)], i/len(names))
	})
	configmap := fill("apiVersion: v1\nitems:\n", func(i int) string {
		return fmt.Sprintf(`- apiVersion: v1
  data:
    application.properties: |
      server.port=8080
      auth.enabled=true
      auth.token.ttl=3600
      api.client.timeout=30s
      access.log.pattern=%%h %%l %%u %%t "%%r" %%s %%b
      cache.key.prefix=billing-%d
    LOG_LEVEL: info
    SECRET_REF: billing-db-creds
  kind: ConfigMap
  metadata:
    creationTimestamp: "2026-11-%02dT10:00:00Z"
    name: billing-config-%d
    namespace: prod
    resourceVersion: "%d"
    uid: 3f2504e0-4f89-11d3-9a0c-0305e82c%04d
`, i, 1+i%28, i, 48213+i, i)
	})
	secretYAML := fill("apiVersion: v1\nitems:\n", func(i int) string {
		return fmt.Sprintf(`- apiVersion: v1
  data:
    ca.crt: %s
    namespace: cHJvZA==
    token: %s
  kind: Secret
  metadata:
    annotations:
      kubernetes.io/service-account.name: default-%d
    name: default-token-%05d
    namespace: prod
  type: kubernetes.io/service-account-token
`, base64.StdEncoding.EncodeToString([]byte(strings.Repeat("MIIC5zCCAc+gAwIBAgIBADANBgkqhkiG9w0BAQsFADAV", 3))),
			base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "eyJhbGciOiJSUzI1NiIsImtpZCI6IiJ9.eyJpc3MiOiJrdWJlcm5ldGVzL3NlcnZpY2VhY2NvdW50In0.sig%d", i)), i, i)
	})
	journal := fill("", func(i int) string {
		t := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second).Format(time.RFC3339)
		switch i % 5 {
		case 0:
			return fmt.Sprintf(`{"time":"%s","level":"INFO","msg":"token refresh ok","client_id":"billing-service","expires_in":3600,"request_id":"5f2b1c9e-8d7a-4e3b-9c1d-2a6f8e4b%04d"}`+"\n", t, i%10000)
		case 1:
			return fmt.Sprintf("Nov 26 10:01:%02d web-1 sshd[2231]: Accepted publickey for deploy from 10.0.4.7 port %d ssh2: ED25519 SHA256:p2QAMXNIC1TJYWeIOttrVc98/R1BUFWu3/LiyKgUfQM\n", i%60, 50000+i)
		case 2:
			return fmt.Sprintf(`%s WARN auth: access denied for user=ana@example.com path=/api/v1/keys/%d reason="missing scope keys:write"`+"\n", t, i)
		case 3:
			return fmt.Sprintf("%s INFO http: GET /api/v2/orders?page=%d 200 12ms ua=\"Mozilla/5.0\" key_id=ops-%d\n", t, i, i%7)
		}
		return fmt.Sprintf("%s ERROR worker: job %d failed: context deadline exceeded (retry 3/5)\n", t, i)
	})
	dockerInspect := fill("[\n", func(i int) string {
		return fmt.Sprintf(`    {
        "Id": "4c01db0b339c%052d",
        "Created": "2026-11-26T10:00:00.000000000Z",
        "Path": "/docker-entrypoint.sh",
        "Args": ["nginx", "-g", "daemon off;"],
        "State": {"Status": "running", "Running": true, "Pid": %d, "ExitCode": 0},
        "Image": "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "HostConfig": {"NetworkMode": "bridge", "RestartPolicy": {"Name": "always"}, "SecurityOpt": null},
        "Config": {
            "Hostname": "web-%d",
            "Env": ["PATH=/usr/local/sbin:/usr/local/bin", "NGINX_VERSION=1.27.2", "API_UPSTREAM=http://api:8080", "AUTH_REQUEST_URI=/auth/check", "TOKEN_HEADER=X-Auth-Token"],
            "Labels": {"com.docker.compose.project": "shop", "com.docker.compose.service": "web", "traefik.http.middlewares.auth.forwardauth.address": "http://auth:4181"}
        },
        "NetworkSettings": {"IPAddress": "172.17.0.%d", "MacAddress": "02:42:ac:11:00:%02x"}
    },
`, i, 4000+i, i, i%250, i%250)
	})
	apiJSON := fill(`{"data":[`, func(i int) string {
		return fmt.Sprintf(`{"id":%d,"type":"api_key","attributes":{"name":"ci-deploy-%d","key_prefix":"ops_","access_level":"read","created_at":"2026-11-%02dT10:00:00Z","last_used_at":null,"token_expires_at":"2027-01-01T00:00:00Z","scopes":["keys:read","audit:read"],"owner":{"id":%d,"email":"ana@example.com"}}},`+"\n", i, i, 1+i%28, 40+i%9)
	})
	return []struct{ name, text string }{
		{"ps-aux", psAux},
		{"ps-aux+secrets", plant(psAux, "root      4410  0.0  0.1  12345  6789 ?  S  10:00  0:00 mysql -u root -pSup3rS3cret -h db shop\n",
			"backup    4411  0.0  0.1  12345  6789 ?  S  10:00  0:00 mysqldump --user=backup --password=Sup3rS3cret --all-databases\n")},
		{"env", env},
		{"env+secrets", plant(env, "AWS_ACCESS_KEY_ID="+awsKeyID+"\n", "AWS_SECRET_ACCESS_KEY="+awsSecret+"\n", "DB_PASSWORD=Tr0ub4dor&3\n",
			"SLACK_BOT_TOKEN="+slackBot+"\n", "DATABASE_URL=postgres://app:S3cr3t-Pa55w0rd@db.internal:5432/app\n")},
		{"kubectl-configmaps", configmap},
		{"kubectl-secrets", secretYAML},
		{"kubectl-secrets+secrets", plant(secretYAML, "    credentials: "+base64.StdEncoding.EncodeToString([]byte("aws_access_key_id="+awsKeyID))+"\n")},
		{"journal", journal},
		{"journal+secrets", plant(journal, "2026-11-26T10:00:01Z INFO connecting with token "+slackBot+" to slack\n",
			`curl -H "Authorization: Bearer abc.def.ghi123" https://api.internal/v1`+"\n")},
		{"docker-inspect", dockerInspect},
		{"docker-inspect+secrets", plant(dockerInspect, `            "Env": ["STRIPE_KEY=`+stripeLive+`", "GITHUB_TOKEN=`+githubPAT+`"],`+"\n")},
		{"api-json", apiJSON},
	}
}

// BenchmarkRedact measures the scanner on 64 KiB of output (the cap a
// tool's output is cut to): the realistic cases above, and the older
// synthetic ones. cpu-ns/op is the process's CPU time per call (user and
// system, all threads, the GC's included), which a machine shared with
// other work changes less than the wall time.
func BenchmarkRedact(b *testing.B) {
	r := newRedactor(b)
	var plain strings.Builder
	for plain.Len() < benchCap {
		for _, k := range []string{"kubectl get pods", "df -h", "git log", "journalctl", "ps aux", "uuids", "docker ps"} {
			plain.WriteString(ordinary[k])
		}
	}
	var dirty strings.Builder
	for dirty.Len() < benchCap {
		dirty.WriteString(ordinary["journalctl"])
		dirty.WriteString(planted[dirty.Len()%len(planted)].text)
	}
	small := ordinary["kubectl get pods"] + ordinary["df -h"] + ordinary["docker ps"]
	cases := append(realistic(), []struct{ name, text string }{
		{"ordinary-64KiB", plain.String()}, {"ordinary-1KiB", small}, {"with-secrets-64KiB", dirty.String()},
	}...)
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			b.ReportAllocs()
			r.Redact(c.text) // compile what this text needs before timing
			cpu := cpuTime()
			for b.Loop() {
				r.Redact(c.text)
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// TestRealisticSecretsFound: every planted secret of the benchmark's
// realistic outputs is hidden, and the outputs without secrets lose
// nothing that the rules would call a secret by mistake, so that the
// benchmark measures the work a real call does.
func TestRealisticSecretsFound(t *testing.T) {
	r := newRedactor(t)
	secrets := []string{"Sup3rS3cret", awsKeyID, awsSecret, "Tr0ub4dor&3", slackBot, "S3cr3t-Pa55w0rd", "abc.def.ghi123", stripeLive, githubPAT}
	for _, c := range realistic() {
		if len(c.text) != benchCap {
			t.Errorf("%s: %d bytes, want %d", c.name, len(c.text), benchCap)
		}
		got, n := r.Redact(c.text)
		for _, s := range secrets {
			if strings.Contains(got, s) {
				t.Errorf("%s: %s went through", c.name, s)
			}
		}
		if strings.HasSuffix(c.name, "+secrets") && n == 0 {
			t.Errorf("%s: nothing redacted", c.name)
		}
	}
}
