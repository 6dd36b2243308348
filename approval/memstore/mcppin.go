package memstore

import (
	"context"
	"maps"

	"github.com/countersign/countersign/approval"
)

// mcpPins are the pins of MCP tools: server → tool → hash. They live as
// long as the store (the process), like everything else here.
type mcpPins map[string]map[string]string

// PinMCP returns the pinned hash of server's tool, pinning hash when none
// is (approval.MCPPinner).
func (s *Store) PinMCP(ctx context.Context, server, tool, hash string) (string, error) {
	if err := approval.CheckPin(server, tool, hash); err != nil {
		return "", err
	}
	if err := s.lock(); err != nil {
		return "", err
	}
	defer s.mu.Unlock()
	if s.pins == nil {
		s.pins = mcpPins{}
	}
	if s.pins[server] == nil {
		s.pins[server] = map[string]string{}
	}
	if p, ok := s.pins[server][tool]; ok {
		return p, nil
	}
	s.pins[server][tool] = hash
	return hash, nil
}

// AcceptMCP replaces every pin of server (approval.MCPPinner).
func (s *Store) AcceptMCP(ctx context.Context, server string, hashes map[string]string) error {
	if err := approval.CheckAccept(server, hashes); err != nil {
		return err
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if s.pins == nil {
		s.pins = mcpPins{}
	}
	s.pins[server] = maps.Clone(hashes)
	if s.pins[server] == nil {
		s.pins[server] = map[string]string{}
	}
	return nil
}

// MCPPins returns the pins of server (approval.MCPPinner).
func (s *Store) MCPPins(ctx context.Context, server string) (map[string]string, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	out := maps.Clone(s.pins[server])
	if out == nil {
		out = map[string]string{}
	}
	return out, nil
}
