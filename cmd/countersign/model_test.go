package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRunSaysTheModelFix: a model server that refuses the key is asked
// once, and the conversation is told plainly what to fix, not "try again
// in a minute".
func TestRunSaysTheModelFix(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)
	}))
	defer srv.Close()
	t.Setenv(DefaultRedisURLEnv, "")
	in, out, done := startRun(t, t.TempDir(), "", "OPENAI_BASE_URL", srv.URL+"/v1", "OPENAI_MODEL", "m", "OPENAI_API_KEY", "sk-wrong")
	if _, err := io.WriteString(in, "what is using the disk?\n"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, out, regexp.MustCompile(`401 Unauthorized: the API key is wrong or missing; set llm\.api_key or OPENAI_API_KEY`))
	in.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "try again in a minute") {
		t.Errorf("a permanent error is told as a passing one:\n%s", out)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the model was asked %d times, want 1: a 401 is not retried", n)
	}
}
