package redisstore_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countersign/countersign/approval/redisstore"
)

// TestProbe: a Redis that answers is reachable; one where nothing listens
// is said in words, with its address.
func TestProbe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := redisstore.Probe(ctx, newClient(t)); err != nil {
		t.Errorf("a running Redis: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	down := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer down.Close()
	err = redisstore.Probe(ctx, down)
	if err == nil || !strings.Contains(err.Error(), "nothing listens") || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("nothing listening at %s: %v, want it said in words", addr, err)
	}
	closed := newClient(t)
	closed.Close()
	if err := redisstore.Probe(ctx, closed); err == nil || err.Error() != "the client is closed" {
		t.Errorf("a closed client: %v", err)
	}
}
