package slack

import (
	"slices"
	"strings"
	"testing"
)

// TestScopeEmailOnlyWithOnCall: users:read.email is asked of a bot token
// only when an approver is whoever is on call (Config.ByEmail); an install
// without on-call approvers keeps working without it.
func TestScopeEmailOnlyWithOnCall(t *testing.T) {
	header := strings.Join(Scopes, ",")
	if m := missingScopes(header, false); len(m) != 0 {
		t.Errorf("without on-call approvers: missing %v, want none", m)
	}
	if m := missingScopes(header, true); !slices.Equal(m, []string{ScopeEmail}) {
		t.Errorf("with on-call approvers: missing %v, want [%s]", m, ScopeEmail)
	}
	if m := missingScopes(header+","+ScopeEmail, true); len(m) != 0 {
		t.Errorf("with on-call approvers and the scope: missing %v", m)
	}
}
