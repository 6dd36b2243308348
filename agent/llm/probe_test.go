package llm_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/agent/llm"
)

// TestDial: a model server that listens is reachable; one where nothing
// listens is said in words, with its address.
func TestDial(t *testing.T) {
	srv := agenttest.NewServer(t)
	if err := newClient(t, fast(srv)).Dial(context.Background()); err != nil {
		t.Errorf("a listening server: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	err = newClient(t, llm.Config{BaseURL: "http://" + addr + "/v1", Model: "m"}).Dial(context.Background())
	if want := "nothing listens at " + addr + " (connection refused)"; err == nil || err.Error() != want {
		t.Errorf("Dial = %v, want %q", err, want)
	}
}

// TestProbe: a key the server refuses is said as the fix to make.
func TestProbe(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer sk-good" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":{"message":"bad key","type":"invalid_request_error"}}`)
			return
		}
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
	}))
	defer srv.Close()
	cfg := llm.Config{BaseURL: srv.URL + "/v1", Model: "m", APIKey: "sk-good"}
	if err := newClient(t, cfg).Probe(context.Background()); err != nil {
		t.Errorf("a good key: %v", err)
	}
	cfg.APIKey = "sk-bad"
	err := newClient(t, cfg).Probe(context.Background())
	if err == nil || !strings.HasPrefix(err.Error(), "the model server answered 401 Unauthorized: the API key is wrong or missing") {
		t.Errorf("Probe = %v, want the fix for a refused key", err)
	}
}
