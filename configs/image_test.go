package configs

import (
	"fmt"
	"net"
	"os"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The image's rules, checked on every test run; hadolint, when installed,
// checks the rest (make lint). See lintDockerfile.

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd  string // upper case
	args string
	line int
}

func parseDockerfile(text string) []instruction {
	var out []instruction
	var cur strings.Builder
	start := 0
	for i, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if cur.Len() == 0 && (t == "" || strings.HasPrefix(t, "#")) {
			continue
		}
		if strings.HasPrefix(t, "#") {
			continue // a comment inside a continued instruction
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if body, ok := strings.CutSuffix(t, "\\"); ok {
			cur.WriteString(body + " ")
			continue
		}
		cur.WriteString(t)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{strings.ToUpper(cmd), strings.TrimSpace(args), start})
		cur.Reset()
	}
	return out
}

var secretName = regexp.MustCompile(`(?i)(token|secret|passw|api_?key|private_?key|dsn|credential)`)

// lintDockerfile returns the broken rules: base images pinned to a
// version or release (a tag other than latest, or a digest), a final stage that runs as a non-root user, a HEALTHCHECK on
// /healthz, no secret in ENV or ARG, apt installs without recommends and
// with their lists removed, and the binary built by `make build`.
func lintDockerfile(text string) []string {
	var bad []string
	var user, health string
	built := false
	for _, in := range parseDockerfile(text) {
		at := fmt.Sprintf("line %d: ", in.line)
		switch in.cmd {
		case "FROM":
			image := strings.Fields(in.args)[0]
			_, tag, tagged := strings.Cut(image[strings.LastIndex(image, "/")+1:], ":")
			if !strings.Contains(image, "@sha256:") && (!tagged || tag == "latest") {
				bad = append(bad, at+"base image "+image+" is not pinned to a version")
			}
			user = "" // a new stage starts as root
		case "USER":
			user = strings.Fields(in.args)[0]
		case "HEALTHCHECK":
			health = in.args
		case "ENV", "ARG":
			for _, f := range strings.Fields(in.args) {
				k, v, _ := strings.Cut(f, "=")
				if secretName.MatchString(k) && strings.Trim(v, `"'`) != "" {
					bad = append(bad, at+in.cmd+" "+k+" bakes a secret into the image")
				}
			}
		case "RUN":
			if strings.Contains(in.args, "apt-get install") {
				if !strings.Contains(in.args, "--no-install-recommends") {
					bad = append(bad, at+"apt-get install without --no-install-recommends")
				}
				if !strings.Contains(in.args, "rm -rf /var/lib/apt/lists/*") {
					bad = append(bad, at+"apt lists not removed in the same RUN")
				}
			}
			if regexp.MustCompile(`(^|&&\s*)make build(\s|$)`).MatchString(in.args) {
				built = true
			}
			if strings.Contains(in.args, "go build") {
				bad = append(bad, at+"go build by hand: use make build, as the Makefile ships it")
			}
		}
	}
	if user == "" || user == "root" || user == "0" || strings.HasPrefix(user, "0:") || strings.HasPrefix(user, "root:") {
		bad = append(bad, "the final stage runs as root: add USER")
	}
	if !strings.Contains(health, "/healthz") {
		bad = append(bad, "no HEALTHCHECK on /healthz")
	}
	if !built {
		bad = append(bad, "the binary is not built by make build")
	}
	return bad
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDockerfile(t *testing.T) {
	for _, p := range lintDockerfile(readFile(t, "../Dockerfile")) {
		t.Errorf("Dockerfile: %s", p)
	}
}

// TestLintDockerfileCatches: each rule fails a Dockerfile that breaks it.
func TestLintDockerfileCatches(t *testing.T) {
	good := "FROM golang:1.26-bookworm AS build\nRUN make build\nFROM debian:bookworm-slim\n" +
		"RUN apt-get update && apt-get install -y --no-install-recommends curl \\\n && rm -rf /var/lib/apt/lists/*\n" +
		"USER app\nHEALTHCHECK CMD curl -fsS http://127.0.0.1:9464/healthz\n"
	if p := lintDockerfile(good); len(p) != 0 {
		t.Fatalf("the good sample fails: %v", p)
	}
	tests := []struct{ name, from, to, want string }{
		{"latest", "debian:bookworm-slim", "debian:latest", "not pinned"},
		{"no tag", "debian:bookworm-slim", "debian", "not pinned"},
		{"root", "USER app", "USER root", "runs as root"},
		{"no user", "USER app\n", "", "runs as root"},
		{"no healthcheck", "HEALTHCHECK CMD curl -fsS http://127.0.0.1:9464/healthz\n", "", "HEALTHCHECK"},
		{"a token in ENV", "USER app", "ENV SLACK_BOT_TOKEN=xoxb-1\nUSER app", "bakes a secret"},
		{"a password ARG default", "USER app", "ARG DB_PASSWORD=hunter2\nUSER app", "bakes a secret"},
		{"recommends", "--no-install-recommends ", "", "--no-install-recommends"},
		{"lists kept", "\\\n && rm -rf /var/lib/apt/lists/*", "", "apt lists"},
		{"go build by hand", "RUN make build", "RUN go build -o /out/countersign ./cmd/countersign", "make build"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bad := strings.Replace(good, tc.from, tc.to, 1)
			if bad == good {
				t.Fatalf("the sample does not contain %q", tc.from)
			}
			p := lintDockerfile(bad)
			if !strings.Contains(strings.Join(p, "\n"), tc.want) {
				t.Errorf("lintDockerfile = %v, want a problem saying %q", p, tc.want)
			}
		})
	}
}

// TestMakeBuild: the Makefile's build target, which the Dockerfile runs,
// builds a static binary where the Dockerfile copies it from.
func TestMakeBuild(t *testing.T) {
	mk := readFile(t, "../Makefile")
	_, rest, ok := strings.Cut(mk, "\nbuild:\n")
	if !ok {
		t.Fatal("the Makefile has no build target")
	}
	recipe, _, _ := strings.Cut(rest, "\n\n")
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "-o bin/countersign", "./cmd/countersign"} {
		if !strings.Contains(recipe, want) {
			t.Errorf("make build does not use %s:\n%s", want, recipe)
		}
	}
	if !strings.Contains(readFile(t, "../Dockerfile"), "COPY --from=build /src/bin/countersign ") {
		t.Error("the Dockerfile does not copy make build's bin/countersign")
	}
}

// TestContainerConfig: the baked configuration holds no secret and
// serves /healthz where the HEALTHCHECK and compose ask for it.
func TestContainerConfig(t *testing.T) {
	text := readFile(t, "container.yaml")
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	noSecrets(t, "container.yaml", doc)
	ops, _ := doc["ops"].(map[string]any)
	listen, _ := ops["listen"].(string)
	_, port, err := net.SplitHostPort(listen)
	if err != nil {
		t.Fatalf("ops.listen %q: %v", listen, err)
	}
	url := "http://127.0.0.1:" + port + "/healthz"
	for _, f := range []string{"../Dockerfile", "../compose.yaml"} {
		if !strings.Contains(readFile(t, f), url) {
			t.Errorf("%s does not check %s (ops.listen)", f, url)
		}
	}
}

// TestCompose: Redis keeps an append-only file, every service has a
// healthcheck, the bot waits for healthy servers, and secrets come only
// from env_file.
func TestCompose(t *testing.T) {
	var doc struct {
		Services map[string]map[string]any `yaml:"services"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, "../compose.yaml")), &doc); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"countersign", "redis", "mariadb"} {
		svc, ok := doc.Services[name]
		if !ok {
			t.Errorf("no service %s", name)
			continue
		}
		if _, ok := svc["healthcheck"]; !ok {
			t.Errorf("service %s has no healthcheck", name)
		}
		if env, ok := svc["environment"].(map[string]any); ok {
			noSecrets(t, name+".environment", env)
		}
	}
	bot := doc.Services["countersign"]
	if bot["env_file"] == nil {
		t.Error("the bot takes no env_file: where would its tokens come from?")
	}
	deps, _ := bot["depends_on"].(map[string]any)
	for _, d := range []string{"redis", "mariadb"} {
		c, _ := deps[d].(map[string]any)
		if c["condition"] != "service_healthy" {
			t.Errorf("the bot does not wait for %s to be healthy", d)
		}
	}
	if cmd := fmt.Sprint(doc.Services["redis"]["command"]); !strings.Contains(cmd, "--appendonly yes") {
		t.Errorf("redis command %s: want --appendonly yes", cmd)
	}
}

// noSecrets fails for a key that names a secret and holds a literal value
// (keys ending _env name a variable, which is the point).
func noSecrets(t *testing.T, where string, v any) {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	for k, val := range m {
		if s, ok := val.(string); ok && s != "" && secretName.MatchString(k) && !strings.HasSuffix(k, "_env") {
			t.Errorf("%s: %s holds a literal secret", where, k)
		}
		noSecrets(t, where+"."+k, val)
	}
}
