// Package oncalltest holds fakes of the PagerDuty and Opsgenie REST APIs
// for tests: httptest servers that answer the on-call requests the real
// services answer, in their JSON, with their authentication and errors,
// and that can be taken down or made to hang.
package oncalltest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
)

// Person is someone who can be on call.
type Person struct {
	ID, Name, Email string
}

// Cleaner is what the fakes need of a test.
type Cleaner interface{ Cleanup(func()) }

// service is what both fakes share: who is on call per schedule, the
// faults, and the requests seen.
type service struct {
	srv *httptest.Server

	mu        sync.Mutex
	schedules map[string][]Person
	down      bool
	hang      bool
	requests  int
	auths     []string
}

func newService(t Cleaner, h http.HandlerFunc) *service {
	s := &service{schedules: map[string][]Person{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests++
		s.auths = append(s.auths, r.Header.Get("Authorization"))
		down, hang := s.down, s.hang
		s.mu.Unlock()
		if hang {
			<-r.Context().Done() // until the client gives up
			return
		}
		if down {
			http.Error(w, "<html><body>503 Service Unavailable</body></html>", http.StatusServiceUnavailable)
			return
		}
		h(w, r)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the fake's base URL.
func (s *service) URL() string { return s.srv.URL }

// SetOnCall makes people the ones on call in schedule now (none: nobody).
func (s *service) SetOnCall(schedule string, people ...Person) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.schedules[schedule] = people
}

// Down makes every request answer 503 (false: answer again).
func (s *service) Down(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// Hang makes every request wait until its client gives up.
func (s *service) Hang(hang bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hang = hang
}

// Requests is how many requests reached the fake.
func (s *service) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Auths are the Authorization headers of the requests, in order.
func (s *service) Auths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auths...)
}

// onCall is who is on call in schedule, and whether the schedule exists.
func (s *service) onCall(schedule string) ([]Person, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.schedules[schedule]
	return p, ok
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
