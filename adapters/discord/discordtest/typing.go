package discordtest

import (
	"net/http"
	"slices"
	"time"
)

// typing answers POST /channels/{id}/typing as Discord does: 204 No
// Content, the indicator shown for about 10 seconds; 404 for a channel
// that does not exist.
func (s *Server) typing(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := r.PathValue("ch")
	if _, ok := s.channels[ch]; !ok {
		apiError(w, http.StatusNotFound, 10003, "Unknown Channel")
		return
	}
	if s.typings == nil {
		s.typings = map[string][]time.Time{}
	}
	s.typings[ch] = append(s.typings[ch], time.Now())
	s.changedLocked()
	w.WriteHeader(http.StatusNoContent)
}

// Typing returns when the bot started typing in the channel, each time,
// oldest first.
func (s *Server) Typing(ch string) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.typings[ch])
}
