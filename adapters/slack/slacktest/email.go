package slacktest

import (
	"net/http"
	"slices"
	"strings"
)

// lookupByEmail answers users.lookupByEmail: the person added (AddUser)
// with that address, users_not_found for nobody, and missing_scope when
// the token lacks users:read.email, as Slack does.
func (s *Server) lookupByEmail(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	scoped, provided := slices.Contains(s.scopes, "users:read.email"), strings.Join(s.scopes, ",")
	var found *User
	for _, u := range s.people {
		if u.Email != "" && strings.EqualFold(u.Email, r.FormValue("email")) {
			found = &u
			break
		}
	}
	s.mu.Unlock()
	switch {
	case !scoped:
		reply(w, map[string]any{"ok": false, "error": "missing_scope", "needed": "users:read.email", "provided": provided})
	case found == nil:
		fail(w, "users_not_found")
	default:
		team := found.Team
		if team == "" {
			team = TeamID
		}
		reply(w, map[string]any{"user": map[string]any{
			"id": found.ID, "team_id": team, "name": strings.ToLower(found.Name), "real_name": found.Name,
			"profile": map[string]any{"display_name": found.Name, "real_name": found.Name, "email": found.Email},
		}})
	}
}
