package yamlkeys

import (
	"reflect"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

func TestNearest(t *testing.T) {
	known := []string{"approval_ttl", "conversation_ttl", "max_bytes", "max_messages", "mode"}
	for key, want := range map[string]string{
		"aproval_ttl": "approval_ttl", "Approval_TTL": "approval_ttl", "mdoe": "mode",
		"max_byte": "max_bytes", "xyz": "", "ttl": "", "": "",
	} {
		if got := nearest(key, known); got != want {
			t.Errorf("nearest(%q) = %q, want %q", key, got, want)
		}
	}
}

// TestCheck: on a type of its own, with no countersign configuration,
// each kind of problem names its key path and the fix.
func TestCheck(t *testing.T) {
	type inner struct {
		TTL   time.Duration `yaml:"ttl"`
		Sizes []int         `yaml:"sizes"`
	}
	type doc struct {
		Name   string           `yaml:"name"`
		On     bool             `yaml:"on"`
		Inner  inner            `yaml:"inner"`
		ByName map[string]inner `yaml:"by_name"`
	}
	tests := []struct{ name, yaml, want string }{
		{"valid", "name: x\non: true\ninner: {ttl: 5m, sizes: [1, 2]}\nby_name: {a: {ttl: 1s}}\n", ""},
		{"empty", "", ""},
		{"typo", "inner:\n  tll: 5m\n", "inner.tll: unknown key; did you mean ttl?"},
		{"in a map", "by_name:\n  a:\n    sizez: [1]\n", "by_name.a.sizez: unknown key; did you mean sizes?"},
		{"duration", "inner:\n  ttl: 5 minutes\n", `inner.ttl: "5 minutes" is not a duration; use 5m`},
		{"list item", "inner:\n  sizes: [1, 2 KiB]\n", `inner.sizes[1]: "2 KiB" is not a whole number; use digits only, such as 2048`},
		{"bool", "on: maybe\n", `on: "maybe" is not true or false`},
		{"section", "inner: 3\n", "inner: expected a section of keys (sizes, ttl), got \"3\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n yaml.Node
			if err := yaml.Unmarshal([]byte(tt.yaml), &n); err != nil {
				t.Fatal(err)
			}
			err := Check(&n, reflect.TypeFor[doc]())
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Check: %v", err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Fatalf("Check = %v, want %q", err, tt.want)
			}
		})
	}
}
