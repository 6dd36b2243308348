package oncalltest

import (
	"net/http"
	"strconv"
)

// PagerDuty is a fake of PagerDuty's REST API v2: GET /oncalls, with a
// token ("Authorization: Token token=…"), filtered by schedule_ids[],
// with the users whole (and their e-mail) under include[]=users and as
// references otherwise, paged by limit and offset.
type PagerDuty struct{ *service }

// NewPagerDuty starts a fake PagerDuty that accepts token.
func NewPagerDuty(t Cleaner, token string) *PagerDuty {
	p := &PagerDuty{}
	p.service = newService(t, func(w http.ResponseWriter, r *http.Request) { p.serve(w, r, token) })
	return p
}

func (p *PagerDuty) serve(w http.ResponseWriter, r *http.Request, token string) {
	if r.Header.Get("Authorization") != "Token token="+token {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{"message": "Unauthorized", "code": 2006}})
		return
	}
	if r.Method != http.MethodGet || r.URL.Path != "/oncalls" {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{"message": "Not Found", "code": 2100}})
		return
	}
	q := r.URL.Query()
	limit, offset := 25, 0
	if n, err := strconv.Atoi(q.Get("limit")); err == nil && n > 0 {
		limit = min(n, 100)
	}
	if n, err := strconv.Atoi(q.Get("offset")); err == nil && n >= 0 {
		offset = n
	}
	whole := false
	for _, inc := range q["include[]"] {
		whole = whole || inc == "users"
	}
	var all []map[string]any
	for _, id := range q["schedule_ids[]"] {
		people, ok := p.onCall(id)
		if !ok {
			continue // PagerDuty lists no on-call of an unknown schedule
		}
		for _, u := range people {
			user := map[string]any{"id": u.ID, "type": "user_reference", "summary": u.Name,
				"self": p.URL() + "/users/" + u.ID, "html_url": "https://example.pagerduty.com/users/" + u.ID}
			if whole {
				user = map[string]any{"id": u.ID, "type": "user", "summary": u.Name, "name": u.Name, "email": u.Email,
					"time_zone": "UTC", "role": "user", "self": p.URL() + "/users/" + u.ID}
			}
			all = append(all, map[string]any{
				"user":              user,
				"schedule":          map[string]any{"id": id, "type": "schedule_reference", "summary": "Schedule " + id},
				"escalation_policy": map[string]any{"id": "PEP" + id, "type": "escalation_policy_reference"},
				"escalation_level":  1,
				"start":             "2026-01-01T00:00:00Z",
				"end":               "2026-12-31T00:00:00Z",
			})
		}
	}
	page := all[min(offset, len(all)):min(offset+limit, len(all))]
	writeJSON(w, http.StatusOK, map[string]any{
		"oncalls": page, "limit": limit, "offset": offset, "more": offset+limit < len(all), "total": nil,
	})
}
