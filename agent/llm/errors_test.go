package llm_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/agent/llm"
)

// server answers every request with status and body, and counts them.
func server(t *testing.T, status int, contentType, body string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

var hello = agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "hello"}}}

func TestErrorClasses(t *testing.T) {
	const jsonType = "application/json"
	tests := []struct {
		name        string
		status      int
		contentType string
		body        string
		permanent   bool
		calls       int32 // requests the server gets (MaxAttempts is 3)
		fix         []string
	}{
		{"401", 401, jsonType, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`,
			true, 1, []string{"401 Unauthorized: the API key is wrong or missing; set llm.api_key or OPENAI_API_KEY"}},
		{"403", 403, jsonType, `{"error":{"message":"forbidden","type":"invalid_request_error"}}`,
			true, 1, []string{"403 Forbidden", "llm.model"}},
		{"unknown model, OpenAI", 404, jsonType, `{"error":{"message":"The model ` + "`nope`" + ` does not exist or you do not have access to it.","type":"invalid_request_error","code":"model_not_found"}}`,
			true, 1, []string{`does not know model "nope"`, "set llm.model (or OPENAI_MODEL)"}},
		{"unknown model, Ollama", 404, jsonType, `{"error":{"message":"model \"nope\" not found, try pulling it first","type":"api_error"}}`,
			true, 1, []string{`does not know model "nope"`}},
		{"wrong path", 404, "text/plain", "404 page not found",
			true, 1, []string{"404 Not Found at", "the URL is wrong", "llm.base_url (or OPENAI_BASE_URL)"}},
		{"out of quota", 429, jsonType, `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`,
			true, 1, []string{"out of quota"}},
		{"not an OpenAI API", 200, "text/html", "<html><body>welcome to nginx</body></html>",
			true, 1, []string{"did not answer as an OpenAI-compatible API", "llm.base_url"}},
		{"rate limit", 429, jsonType, `{"error":{"message":"slow down","type":"rate_limit"}}`,
			false, 3, []string{"rate limiting"}},
		{"server error", 503, jsonType, `{"error":{"message":"overloaded","type":"server_error"}}`,
			false, 3, []string{"failed (HTTP 503)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, n := server(t, tt.status, tt.contentType, tt.body)
			cfg := llm.Config{BaseURL: srv.URL + "/v1", Model: "nope", APIKey: "sk-secret-key",
				MaxAttempts: 3, Backoff: time.Millisecond, MaxBackoff: time.Millisecond}
			_, err := newClient(t, cfg).Complete(context.Background(), hello)
			if err == nil {
				t.Fatal("Complete succeeded")
			}
			if got := llm.Permanent(err); got != tt.permanent {
				t.Errorf("Permanent(%v) = %v, want %v", err, got, tt.permanent)
			}
			if got := n.Load(); got != tt.calls {
				t.Errorf("the server got %d requests, want %d", got, tt.calls)
			}
			fix := llm.Fix(err)
			for _, want := range tt.fix {
				if !strings.Contains(fix, want) {
					t.Errorf("Fix = %q, want it to say %q", fix, want)
				}
			}
			if strings.Contains(fix, "sk-secret-key") {
				t.Errorf("Fix shows the API key: %q", fix)
			}
			var me *llm.Error
			if !errors.As(err, &me) || me.Permanent() != tt.permanent || me.Fix() != fix {
				t.Errorf("error %v is not an *llm.Error saying the same", err)
			}
		})
	}
}

// TestHungModelIsGivenUp: a model that never answers is given up on
// within llm.total_timeout, whatever the attempts, with a sentence that
// says so; it is transient.
func TestHungModelIsGivenUp(t *testing.T) {
	release := make(chan struct{})
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	cfg := llm.Config{BaseURL: srv.URL + "/v1", Model: "m", MaxAttempts: 100,
		Timeout: 150 * time.Millisecond, TotalTimeout: 400 * time.Millisecond,
		Backoff: time.Millisecond, MaxBackoff: time.Millisecond}
	start := time.Now()
	_, err := newClient(t, cfg).Complete(context.Background(), hello)
	took := time.Since(start)
	if err == nil {
		t.Fatal("Complete succeeded")
	}
	if took > 3*time.Second {
		t.Errorf("gave up after %s, want about llm.total_timeout (400ms)", took)
	}
	if got := n.Load(); got < 2 || got > 4 {
		t.Errorf("%d attempts, want 2 to 4 of 150ms within 400ms", got)
	}
	if llm.Permanent(err) {
		t.Errorf("a hung model is classed permanent: %v", err)
	}
	if fix := llm.Fix(err); !strings.Contains(fix, "did not answer within 400ms (llm.total_timeout)") {
		t.Errorf("Fix = %q, want it to name llm.total_timeout", fix)
	}
}

// TestConnectionRefused is transient, and says nothing answers there.
func TestConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL + "/v1"
	srv.Close()
	cfg := llm.Config{BaseURL: base, Model: "m", MaxAttempts: 2, Backoff: time.Millisecond, MaxBackoff: time.Millisecond}
	_, err := newClient(t, cfg).Complete(context.Background(), hello)
	if err == nil || llm.Permanent(err) {
		t.Fatalf("err = %v, want a transient error", err)
	}
	if fix := llm.Fix(err); !strings.Contains(fix, "connection refused") || !strings.Contains(fix, base) {
		t.Errorf("Fix = %q, want it to name %s and the refusal", fix, base)
	}
}

// TestBaseURLIsCheckedAtLoad: a base URL the client could never reach is
// a configuration error with the fix, not a retry on every message.
func TestBaseURLIsCheckedAtLoad(t *testing.T) {
	tests := []struct{ url, want string }{
		{"localhost:11434/v1", `llm.base_url: "localhost:11434/v1" has no scheme; use http://localhost:11434/v1`},
		{"gpu-box:8000/v1", "use http://gpu-box:8000/v1"},
		{"ftp://models/v1", "is not an http:// or https:// URL"},
		{"http:///v1", "has no host"},
		{"user:hunter2@gpu-box/v1", "(a URL with credentials)"},
	}
	for _, tt := range tests {
		_, err := llm.New(llm.Config{BaseURL: tt.url, Model: "m"}, nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(base_url %q) = %v, want %q", tt.url, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
	if _, err := llm.New(llm.Config{BaseURL: "https://api.example.com/v1", Model: "m"}, nil); err != nil {
		t.Errorf("a good URL: %v", err)
	}
}
