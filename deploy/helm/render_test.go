package helm

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/countersign/countersign/internal/testenv"
)

// chart is the chart under test, beside this file.
const chart = "./countersign"

// The parts of the rendered manifests the tests read.
type (
	manifest struct {
		Kind     string   `yaml:"kind"`
		Metadata metadata `yaml:"metadata"`
		node     yaml.Node
	}
	metadata struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels"`
	}
	deployment struct {
		Spec struct {
			Replicas int `yaml:"replicas"`
			Selector struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			} `yaml:"selector"`
			Template struct {
				Metadata metadata `yaml:"metadata"`
				Spec     podSpec  `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	podSpec struct {
		AutomountServiceAccountToken *bool `yaml:"automountServiceAccountToken"`
		SecurityContext              struct {
			RunAsNonRoot   *bool `yaml:"runAsNonRoot"`
			RunAsUser      int   `yaml:"runAsUser"`
			RunAsGroup     int   `yaml:"runAsGroup"`
			SeccompProfile struct {
				Type string `yaml:"type"`
			} `yaml:"seccompProfile"`
		} `yaml:"securityContext"`
		Containers                []container `yaml:"containers"`
		Volumes                   []volume    `yaml:"volumes"`
		TopologySpreadConstraints []struct {
			TopologyKey string `yaml:"topologyKey"`
			MaxSkew     int    `yaml:"maxSkew"`
		} `yaml:"topologySpreadConstraints"`
	}
	container struct {
		Image string   `yaml:"image"`
		Env   []envVar `yaml:"env"`
		Ports []struct {
			Name          string `yaml:"name"`
			ContainerPort int    `yaml:"containerPort"`
		} `yaml:"ports"`
		LivenessProbe   probe `yaml:"livenessProbe"`
		ReadinessProbe  probe `yaml:"readinessProbe"`
		SecurityContext struct {
			AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
			ReadOnlyRootFilesystem   *bool `yaml:"readOnlyRootFilesystem"`
			Privileged               *bool `yaml:"privileged"`
			Capabilities             struct {
				Drop []string `yaml:"drop"`
				Add  []string `yaml:"add"`
			} `yaml:"capabilities"`
		} `yaml:"securityContext"`
		VolumeMounts []volumeMount `yaml:"volumeMounts"`
	}
	envVar struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom *struct {
			SecretKeyRef *secretKeyRef `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	}
	secretKeyRef struct {
		Name     string `yaml:"name"`
		Key      string `yaml:"key"`
		Optional bool   `yaml:"optional"`
	}
	probe struct {
		HTTPGet struct {
			Path string `yaml:"path"`
			Port string `yaml:"port"`
		} `yaml:"httpGet"`
	}
	volumeMount struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
		SubPath   string `yaml:"subPath"`
		ReadOnly  bool   `yaml:"readOnly"`
	}
	volume struct {
		Name     string `yaml:"name"`
		EmptyDir *struct {
			SizeLimit string `yaml:"sizeLimit"`
		} `yaml:"emptyDir"`
		ConfigMap *struct {
			Name string `yaml:"name"`
		} `yaml:"configMap"`
	}
	configMap struct {
		Data map[string]string `yaml:"data"`
	}
	service struct {
		Spec struct {
			Selector map[string]string `yaml:"selector"`
			Ports    []struct {
				Name       string `yaml:"name"`
				Port       int    `yaml:"port"`
				TargetPort string `yaml:"targetPort"`
			} `yaml:"ports"`
		} `yaml:"spec"`
	}
	serviceMonitor struct {
		APIVersion string `yaml:"apiVersion"`
		Spec       struct {
			Selector struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			} `yaml:"selector"`
			Endpoints []struct {
				Port string `yaml:"port"`
				Path string `yaml:"path"`
			} `yaml:"endpoints"`
		} `yaml:"spec"`
	}
)

// release is what helm template rendered: the manifests by kind.
type release struct {
	t      *testing.T
	byKind map[string][]manifest
}

// helmRun runs helm with args in this folder and returns its standard
// output, or its error with what it said.
func helmRun(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(t.Context(), testenv.Helm(t), args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), errors.New("helm " + strings.Join(args, " ") + ": " + err.Error() + ": " + errOut.String() + out.String())
	}
	return out.String(), nil
}

// render runs helm template on the chart with the given --set values and
// parses every manifest.
func render(t *testing.T, set ...string) release {
	t.Helper()
	out, err := helmRun(t, templateArgs(set)...)
	if err != nil {
		t.Fatal(err)
	}
	r := release{t: t, byKind: map[string][]manifest{}}
	dec := yaml.NewDecoder(strings.NewReader(out))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("helm template printed YAML that does not parse: %v\n%s", err, out)
		}
		if len(n.Content) == 0 {
			continue
		}
		var m manifest
		if err := n.Decode(&m); err != nil {
			t.Fatalf("a rendered manifest: %v", err)
		}
		if m.Kind == "" {
			t.Fatalf("a rendered manifest has no kind:\n%s", out)
		}
		m.node = n
		r.byKind[m.Kind] = append(r.byKind[m.Kind], m)
	}
	return r
}

// templateArgs are helm template's arguments for a release "cs" in
// namespace "ops" with the given --set values.
func templateArgs(set []string) []string {
	args := []string{"template", "cs", chart, "--namespace", "ops"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	return args
}

// one decodes the single manifest of kind into v.
func (r release) one(kind string, v any) {
	r.t.Helper()
	ms := r.byKind[kind]
	if len(ms) != 1 {
		r.t.Fatalf("rendered %d manifests of kind %s, want 1", len(ms), kind)
	}
	if err := ms[0].node.Decode(v); err != nil {
		r.t.Fatalf("%s: %v", kind, err)
	}
}

// has reports whether the release holds a manifest of kind.
func (r release) has(kind string) bool { return len(r.byKind[kind]) > 0 }

// container is the Deployment's one container, with its pod.
func (r release) pod() (podSpec, container) {
	r.t.Helper()
	var d deployment
	r.one("Deployment", &d)
	if len(d.Spec.Template.Spec.Containers) != 1 {
		r.t.Fatalf("the Deployment has %d containers, want 1", len(d.Spec.Template.Spec.Containers))
	}
	return d.Spec.Template.Spec, d.Spec.Template.Spec.Containers[0]
}

// env is the container's variable name, or nil.
func (c container) env(name string) *envVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

// mount is the container's volume mount at path, or nil.
func (c container) mount(path string) *volumeMount {
	for i := range c.VolumeMounts {
		if c.VolumeMounts[i].MountPath == path {
			return &c.VolumeMounts[i]
		}
	}
	return nil
}

// volume is the pod's volume name, or nil.
func (p podSpec) volume(name string) *volume {
	for i := range p.Volumes {
		if p.Volumes[i].Name == name {
			return &p.Volumes[i]
		}
	}
	return nil
}

// config is the bot's configuration file the release's ConfigMap holds.
func (r release) config() string {
	r.t.Helper()
	var cm configMap
	r.one("ConfigMap", &cm)
	c, ok := cm.Data["countersign.yaml"]
	if !ok {
		r.t.Fatal("the ConfigMap has no countersign.yaml")
	}
	return c
}
