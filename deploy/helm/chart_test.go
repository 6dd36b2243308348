package helm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/countersign/countersign/internal/testenv"
)

// The image's facts the chart must match (Dockerfile, configs/container.yaml).
const (
	imageUID   = 10001
	configPath = "/etc/countersign/countersign.yaml"
	toolsRoot  = "/home/countersign"
	opsPort    = 9464
)

func TestChartLints(t *testing.T) {
	if out, err := helmRun(t, "lint", "--strict", chart); err != nil {
		t.Fatal(err)
	} else if !strings.Contains(out, "0 chart(s) failed") {
		t.Fatalf("helm lint: %s", out)
	}
	// The umbrella chart's dependencies are fetched by helm dependency
	// build, which needs the internet: without them lint warns, and must
	// find nothing worse.
	if _, err := helmRun(t, "lint", "./countersign-redis"); err != nil {
		t.Fatal(err)
	}
}

func TestChartDefaults(t *testing.T) {
	r := render(t)
	var d deployment
	r.one("Deployment", &d)
	if d.Spec.Replicas != 2 {
		t.Errorf("replicas = %d, want 2", d.Spec.Replicas)
	}
	pod, c := r.pod()

	t.Run("tokens come from the Secret", func(t *testing.T) {
		for _, want := range []secretKeyRef{
			{Name: "countersign-tokens", Key: "slack-bot-token"},
			{Name: "countersign-tokens", Key: "slack-app-token"},
			{Name: "countersign-tokens", Key: "openai-api-key", Optional: true},
			{Name: "countersign-tokens", Key: "redis-url"},
		} {
			if !slices.ContainsFunc(c.Env, func(e envVar) bool {
				return e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && *e.ValueFrom.SecretKeyRef == want
			}) {
				t.Errorf("no variable from the Secret %+v; env: %+v", want, c.Env)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil && e.Name != "COUNTERSIGN_CONFIG" {
				t.Errorf("variable %s has a value inline (%q): only the configuration's path may", e.Name, e.Value)
			}
		}
	})

	t.Run("the configuration is mounted where the image reads it", func(t *testing.T) {
		if e := c.env("COUNTERSIGN_CONFIG"); e == nil || e.Value != configPath {
			t.Errorf("COUNTERSIGN_CONFIG = %+v, want %s", e, configPath)
		}
		m := c.mount(configPath)
		if m == nil || m.SubPath != "countersign.yaml" || !m.ReadOnly {
			t.Fatalf("mount at %s = %+v, want the ConfigMap's countersign.yaml, read-only", configPath, m)
		}
		var cm manifest
		r.one("ConfigMap", &cm)
		if v := pod.volume(m.Name); v == nil || v.ConfigMap == nil || v.ConfigMap.Name != cm.Metadata.Name {
			t.Errorf("volume %s = %+v, want the ConfigMap %s", m.Name, v, cm.Metadata.Name)
		}
	})

	t.Run("the configuration's keys match the pod", func(t *testing.T) {
		var cfg struct {
			Ops   struct{ Listen string } `yaml:"ops"`
			Store struct {
				RedisURLEnv string `yaml:"redis_url_env"`
			} `yaml:"store"`
			Tools struct{ Root string } `yaml:"tools"`
		}
		if err := yaml.Unmarshal([]byte(r.config()), &cfg); err != nil {
			t.Fatal(err)
		}
		if cfg.Ops.Listen != "0.0.0.0:9464" {
			t.Errorf("ops.listen = %q, want 0.0.0.0:9464", cfg.Ops.Listen)
		}
		if e := c.env(cfg.Store.RedisURLEnv); cfg.Store.RedisURLEnv == "" || e == nil {
			t.Errorf("store.redis_url_env = %q, which the pod does not set", cfg.Store.RedisURLEnv)
		}
		if cfg.Tools.Root != toolsRoot {
			t.Errorf("tools.root = %q, want %s", cfg.Tools.Root, toolsRoot)
		}
	})

	t.Run("probes ask the ops port", func(t *testing.T) {
		if len(c.Ports) != 1 || c.Ports[0].Name != "ops" || c.Ports[0].ContainerPort != opsPort {
			t.Errorf("ports = %+v, want ops %d", c.Ports, opsPort)
		}
		if p := c.LivenessProbe.HTTPGet; p.Path != "/healthz" || p.Port != "ops" {
			t.Errorf("liveness = %+v, want /healthz on ops", p)
		}
		if p := c.ReadinessProbe.HTTPGet; p.Path != "/readyz" || p.Port != "ops" {
			t.Errorf("readiness = %+v, want /readyz on ops", p)
		}
		var s service
		r.one("Service", &s)
		if len(s.Spec.Ports) != 1 || s.Spec.Ports[0].TargetPort != "ops" || s.Spec.Ports[0].Port != opsPort {
			t.Errorf("service ports = %+v", s.Spec.Ports)
		}
		if !subset(s.Spec.Selector, d.Spec.Template.Metadata.Labels) {
			t.Errorf("the Service's selector %v does not select the pods %v", s.Spec.Selector, d.Spec.Template.Metadata.Labels)
		}
	})

	t.Run("restricted security context", func(t *testing.T) {
		sc := pod.SecurityContext
		if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser != imageUID || sc.RunAsGroup != imageUID {
			t.Errorf("pod securityContext = %+v, want non-root uid/gid %d", sc, imageUID)
		}
		if sc.SeccompProfile.Type != "RuntimeDefault" {
			t.Errorf("seccompProfile = %q, want RuntimeDefault", sc.SeccompProfile.Type)
		}
		csc := c.SecurityContext
		if csc.AllowPrivilegeEscalation == nil || *csc.AllowPrivilegeEscalation {
			t.Error("allowPrivilegeEscalation is not false")
		}
		if csc.Privileged != nil && *csc.Privileged {
			t.Error("privileged")
		}
		if !slices.Equal(csc.Capabilities.Drop, []string{"ALL"}) || len(csc.Capabilities.Add) > 0 {
			t.Errorf("capabilities = %+v, want drop ALL, add none", csc.Capabilities)
		}
		if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
			t.Error("the pod mounts a service account token it has no use for")
		}
	})

	t.Run("read-only root with emptyDirs where the bot writes", func(t *testing.T) {
		if ro := c.SecurityContext.ReadOnlyRootFilesystem; ro == nil || !*ro {
			t.Fatal("readOnlyRootFilesystem is not true")
		}
		for _, path := range []string{"/tmp", toolsRoot} {
			m := c.mount(path)
			if m == nil || m.ReadOnly {
				t.Errorf("no writable mount at %s", path)
				continue
			}
			if v := pod.volume(m.Name); v == nil || v.EmptyDir == nil || v.EmptyDir.SizeLimit == "" {
				t.Errorf("the mount at %s is %+v, want an emptyDir with a size limit", path, v)
			}
		}
	})

	t.Run("two replicas kept apart and through drains", func(t *testing.T) {
		keys := map[string]bool{}
		for _, c := range pod.TopologySpreadConstraints {
			keys[c.TopologyKey] = c.MaxSkew == 1
		}
		if !keys["kubernetes.io/hostname"] {
			t.Errorf("no spread over nodes: %+v", pod.TopologySpreadConstraints)
		}
		if !r.has("PodDisruptionBudget") {
			t.Error("no PodDisruptionBudget for 2 replicas")
		}
	})

	if r.has("ServiceMonitor") {
		t.Error("a ServiceMonitor is rendered although serviceMonitor.enabled is false")
	}
}

func TestChartServiceMonitor(t *testing.T) {
	r := render(t, "serviceMonitor.enabled=true", "serviceMonitor.labels.release=prom")
	var sm serviceMonitor
	r.one("ServiceMonitor", &sm)
	if sm.APIVersion != "monitoring.coreos.com/v1" {
		t.Errorf("apiVersion = %q", sm.APIVersion)
	}
	if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "ops" || sm.Spec.Endpoints[0].Path != "/metrics" {
		t.Errorf("endpoints = %+v, want /metrics on ops", sm.Spec.Endpoints)
	}
	var s manifest
	r.one("Service", &s)
	if !subset(sm.Spec.Selector.MatchLabels, s.Metadata.Labels) {
		t.Errorf("the ServiceMonitor's selector %v does not select the Service %v", sm.Spec.Selector.MatchLabels, s.Metadata.Labels)
	}
	if m := r.byKind["ServiceMonitor"][0].Metadata; m.Labels["release"] != "prom" {
		t.Errorf("labels = %v, want release: prom", m.Labels)
	}
}

func TestChartRedis(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  []string
		want envVar // COUNTERSIGN_REDIS_URL
	}{
		{
			name: "a key of another Secret",
			set:  []string{"store.redisURLSecret.name=redis-conn", "store.redisURLSecret.key=url"},
			want: envVar{Name: "COUNTERSIGN_REDIS_URL", ValueFrom: &struct {
				SecretKeyRef *secretKeyRef `yaml:"secretKeyRef"`
			}{&secretKeyRef{Name: "redis-conn", Key: "url"}}},
		},
		{
			name: "a URL without a password",
			set:  []string{"store.redisURL=redis://redis.data:6379/2"},
			want: envVar{Name: "COUNTERSIGN_REDIS_URL", Value: "redis://redis.data:6379/2"},
		},
		{
			name: "the Bitnami chart of the release",
			set:  []string{"redis.enabled=true"},
			want: envVar{Name: "COUNTERSIGN_REDIS_URL", Value: "redis://:$(COUNTERSIGN_REDIS_PASSWORD)@cs-redis-master:6379/0"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := render(t, tc.set...).pod()
			got := c.env("COUNTERSIGN_REDIS_URL")
			if got == nil || got.Value != tc.want.Value || (got.ValueFrom == nil) != (tc.want.ValueFrom == nil) ||
				got.ValueFrom != nil && *got.ValueFrom.SecretKeyRef != *tc.want.ValueFrom.SecretKeyRef {
				t.Errorf("COUNTERSIGN_REDIS_URL = %+v, want %+v", got, tc.want)
			}
			if strings.Contains(got.Value, "$(COUNTERSIGN_REDIS_PASSWORD)") {
				// Kubernetes expands $(VAR) only from variables set before it.
				i := slices.IndexFunc(c.Env, func(e envVar) bool { return e.Name == "COUNTERSIGN_REDIS_PASSWORD" })
				j := slices.IndexFunc(c.Env, func(e envVar) bool { return e.Name == "COUNTERSIGN_REDIS_URL" })
				if i < 0 || i > j || c.Env[i].ValueFrom == nil || *c.Env[i].ValueFrom.SecretKeyRef != (secretKeyRef{Name: "cs-redis", Key: "redis-password"}) {
					t.Errorf("the password is not set from the Bitnami Secret before the URL: %+v", c.Env)
				}
			}
		})
	}
}

// TestChartRefuses: values that would run a broken or leaky release stop
// the render with an error that names the key.
func TestChartRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  []string
		want string
	}{
		{"two replicas without Redis", []string{"store.redisURLSecret.key="}, "store.redisURLSecret.key"},
		{"a password in the plain URL", []string{"store.redisURL=redis://:hunter2@redis:6379/0"}, "store.redisURLSecret"},
		{"no tokens Secret", []string{"tokens.existingSecret="}, "tokens.existingSecret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := helmRun(t, templateArgs(tc.set)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("helm template with %v: %v, want an error naming %s", tc.set, err, tc.want)
			}
		})
	}
	// One replica needs no Redis.
	if _, err := helmRun(t, templateArgs([]string{"replicaCount=1", "store.redisURLSecret.key="})...); err != nil {
		t.Errorf("one replica without Redis: %v", err)
	}
}

// TestChartConfigPassesCheck gives the rendered configuration to the
// bot's own `countersign config check`, with the pod's Redis variable
// pointing at the test Redis: the chart can never ship a configuration
// the bot refuses.
func TestChartConfigPassesCheck(t *testing.T) {
	redisURL := testenv.RedisURL(t)
	for _, tc := range []struct {
		name string
		set  []string
	}{
		{"defaults", nil},
		{"with more configuration", []string{"config.log.level=debug", "config.tools.execute_command.fence.network=allow"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := render(t, tc.set...)
			dir := t.TempDir()
			cfg := filepath.Join(dir, "countersign.yaml")
			if err := os.WriteFile(cfg, []byte(r.config()), 0o600); err != nil {
				t.Fatal(err)
			}
			// The tools root is an emptyDir in the pod; here a folder of
			// the test's (TestFenceUnderChartMounts checks the real path).
			root := filepath.Join(dir, "root")
			if err := os.Mkdir(root, 0o755); err != nil {
				t.Fatal(err)
			}
			out, err := configCheck(t, cfg, []string{"--root", root}, "COUNTERSIGN_REDIS_URL="+redisURL)
			if err != nil {
				t.Fatalf("countersign config check refused the chart's configuration: %v\n%s\nconfiguration:\n%s", err, out, r.config())
			}
			if !strings.Contains(out, "# valid.") || !strings.Contains(out, "approvals: redis") {
				t.Errorf("config check did not find a valid configuration with Redis approvals:\n%s", out)
			}
		})
	}
}

// The bot's binary, built once for the tests that run it (TestMain
// removes it).
var (
	binDir  string
	binOnce sync.Once
	binErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// countersign is the bot's binary, built by go build on first use.
func countersign(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "countersign-helm-test-")
		if binErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, "countersign"), "github.com/countersign/countersign/cmd/countersign")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build ./cmd/countersign: %w\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return filepath.Join(binDir, "countersign")
}

// configCheck runs countersign config check on the file cfg with the extra
// flags, in an environment of its own with the KEY=value variables env.
func configCheck(t *testing.T, cfg string, flags []string, env ...string) (string, error) {
	t.Helper()
	args := append([]string{"config", "check", "--config", cfg}, flags...)
	cmd := exec.CommandContext(t.Context(), countersign(t), args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// subset reports whether every label of sel is in labels.
func subset(sel, labels map[string]string) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}
