package yamlkeys

import "testing"

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
