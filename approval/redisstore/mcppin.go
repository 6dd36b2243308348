package redisstore

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/countersign/countersign/approval"
)

// pinKey is the hash of one MCP server's pins, tool → hash. The server
// name is the key's hash tag, so that AcceptMCP's transaction stays on
// one Cluster slot. Pins have no TTL.
func (s *Store) pinKey(server string) string { return s.prefix + ":mcppin:{" + server + "}" }

// PinMCP returns the pinned hash of server's tool, pinning hash when none
// is (approval.MCPPinner): HSETNX, then HGET, so that concurrent callers
// on any replica all get the first pin.
func (s *Store) PinMCP(ctx context.Context, server, tool, hash string) (string, error) {
	if err := approval.CheckPin(server, tool, hash); err != nil {
		return "", err
	}
	key := s.pinKey(server)
	if err := s.c.HSetNX(ctx, key, tool, hash).Err(); err != nil {
		return "", fmt.Errorf("pin MCP tool %s/%s: %w", server, tool, err)
	}
	p, err := s.c.HGet(ctx, key, tool).Result()
	if err != nil {
		// redis.Nil: an accept removed the pin between the two commands;
		// the caller tries again at the next call.
		return "", fmt.Errorf("read the pin of MCP tool %s/%s: %w", server, tool, err)
	}
	return p, nil
}

// AcceptMCP replaces every pin of server in one transaction
// (approval.MCPPinner).
func (s *Store) AcceptMCP(ctx context.Context, server string, hashes map[string]string) error {
	if err := approval.CheckAccept(server, hashes); err != nil {
		return err
	}
	key := s.pinKey(server)
	_, err := s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, key)
		if len(hashes) > 0 {
			p.HSet(ctx, key, hashes)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("accept the tools of MCP server %s: %w", server, err)
	}
	return nil
}

// MCPPins returns the pins of server (approval.MCPPinner).
func (s *Store) MCPPins(ctx context.Context, server string) (map[string]string, error) {
	m, err := s.c.HGetAll(ctx, s.pinKey(server)).Result()
	if err != nil {
		return nil, fmt.Errorf("read the pins of MCP server %s: %w", server, err)
	}
	return m, nil
}
