package oncalltest

import (
	"fmt"
	"net/http"
	"strings"
)

// Opsgenie is a fake of Opsgenie's Who is On Call API: GET
// /v2/schedules/<id>/on-calls, with a key ("Authorization: GenieKey …"),
// answering onCallRecipients (the people's user names, their e-mail
// addresses) under flat=true and onCallParticipants otherwise.
type Opsgenie struct{ *service }

// NewOpsgenie starts a fake Opsgenie that accepts key.
func NewOpsgenie(t Cleaner, key string) *Opsgenie {
	o := &Opsgenie{}
	o.service = newService(t, func(w http.ResponseWriter, r *http.Request) { o.serve(w, r, key) })
	return o
}

func (o *Opsgenie) serve(w http.ResponseWriter, r *http.Request, key string) {
	fail := func(status int, msg string) {
		writeJSON(w, status, map[string]any{"message": msg, "took": 0.001, "requestId": "req-fake"})
	}
	if r.Header.Get("Authorization") != "GenieKey "+key {
		fail(http.StatusUnauthorized, "Key format is not valid!")
		return
	}
	id, ok := strings.CutPrefix(r.URL.Path, "/v2/schedules/")
	id, ok2 := strings.CutSuffix(id, "/on-calls")
	if r.Method != http.MethodGet || !ok || !ok2 || strings.Contains(id, "/") {
		fail(http.StatusNotFound, "Requested resource not found")
		return
	}
	if t := r.URL.Query().Get("scheduleIdentifierType"); t != "" && t != "id" {
		fail(http.StatusUnprocessableEntity, "the fake knows schedules by id only")
		return
	}
	people, known := o.onCall(id)
	if !known {
		fail(http.StatusNotFound, fmt.Sprintf("Schedule with identifier [%s] not found", id))
		return
	}
	data := map[string]any{"_parent": map[string]any{"id": id, "name": "Schedule " + id, "enabled": true}}
	if r.URL.Query().Get("flat") == "true" {
		names := []string{}
		for _, p := range people {
			names = append(names, p.Email)
		}
		data["onCallRecipients"] = names
	} else {
		parts := []map[string]any{}
		for _, p := range people {
			parts = append(parts, map[string]any{"id": p.ID, "name": p.Email, "type": "user"})
		}
		data["onCallParticipants"] = parts
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data, "took": 0.002, "requestId": "req-fake"})
}
