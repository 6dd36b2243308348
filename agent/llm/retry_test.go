package llm

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{"none", nil, 0, false},
		{"seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second, true},
		{"fractional seconds", map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond, true},
		{"HTTP date", map[string]string{"Retry-After": now.Add(20 * time.Second).Format(http.TimeFormat)}, 20 * time.Second, true},
		{"HTTP date in the past", map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0, true},
		{"milliseconds win", map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond, true},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0, false},
		{"negative", map[string]string{"Retry-After": "-3"}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			got, ok := retryAfter(h, now)
			if got != tt.want || ok != tt.ok {
				t.Errorf("retryAfter = %s, %v; want %s, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestBackoffGrowsWithJitterUnderTheCap(t *testing.T) {
	base, limit := 100*time.Millisecond, time.Second
	for attempt := 1; attempt <= 8; attempt++ {
		full := min(base<<(attempt-1), limit)
		for range 50 {
			d := backoff(base, limit, attempt)
			if d < full/2 || d > full {
				t.Fatalf("backoff(attempt %d) = %s, want within [%s, %s]", attempt, d, full/2, full)
			}
		}
	}
}

func TestRetryable(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"429", &openai.APIError{HTTPStatusCode: 429}, true},
		{"500", &openai.RequestError{HTTPStatusCode: 500}, true},
		{"503 wrapped", fmt.Errorf("x: %w", &openai.APIError{HTTPStatusCode: 503}), true},
		{"408", &openai.APIError{HTTPStatusCode: 408}, true},
		{"400", &openai.APIError{HTTPStatusCode: 400}, false},
		{"401", &openai.APIError{HTTPStatusCode: 401}, false},
		{"403", &openai.RequestError{HTTPStatusCode: 403}, false},
		{"404", &openai.APIError{HTTPStatusCode: 404}, false},
		{"unexpected EOF", io.ErrUnexpectedEOF, true},
		{"a decoding error", errors.New("invalid character"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := retryable(tt.err); got != tt.want {
				t.Errorf("retryable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
