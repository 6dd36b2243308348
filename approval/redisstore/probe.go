package redisstore

import (
	"context"
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/countersign/countersign/internal/netcause"
)

// Probe pings the Redis server behind client and says in a plain sentence
// why it did not answer: a refused or missing password, nothing listening,
// a name that does not resolve. It never shows the password.
func Probe(ctx context.Context, client redis.UniversalClient) error {
	err := client.Ping(ctx).Err()
	if err == nil {
		return nil
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "WRONGPASS"), strings.Contains(msg, "invalid password"):
		return errors.New("the server refused the password")
	case strings.Contains(msg, "NOAUTH"):
		return errors.New("the server needs a password, and none is configured")
	case errors.Is(err, redis.ErrClosed):
		return errors.New("the client is closed")
	}
	return netcause.Explain(err, "")
}
