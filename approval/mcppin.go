package approval

import (
	"context"
	"fmt"
	"strings"
)

// MCPPinner keeps the pins of MCP tools: the hash of each tool's
// description, schema and annotations as first seen,
// so that a server cannot change what a tool says it does behind the
// operator's back (tools/mcptool computes the hashes). Pins never expire.
//
// It is part of Store: every store keeps pins, and no wrapper of a store
// can lose them.
type MCPPinner interface {
	// PinMCP returns the hash pinned for the tool of server, pinning hash
	// first when none is: of any number of concurrent callers, on any
	// replica, every one gets the same pin.
	PinMCP(ctx context.Context, server, tool, hash string) (pinned string, err error)
	// AcceptMCP replaces every pin of server by hashes (tool → hash): an
	// operator has looked at the server's tools as they are now. Tools
	// not in hashes lose their pin and are pinned afresh when next seen.
	AcceptMCP(ctx context.Context, server string, hashes map[string]string) error
	// MCPPins returns the pins of server, tool → hash (empty when none).
	MCPPins(ctx context.Context, server string) (map[string]string, error)
}

// CheckPin checks the arguments of PinMCP; both stores call it.
func CheckPin(server, tool, hash string) error {
	switch {
	case server == "":
		return fmt.Errorf("pin MCP tool: %w: no server name", ErrInvalid)
	case tool == "":
		return fmt.Errorf("pin MCP tool of %s: %w: no tool name", server, ErrInvalid)
	case strings.TrimSpace(hash) == "":
		return fmt.Errorf("pin MCP tool %s/%s: %w: no hash", server, tool, ErrInvalid)
	}
	return nil
}

// CheckAccept checks the arguments of AcceptMCP; both stores call it.
func CheckAccept(server string, hashes map[string]string) error {
	if server == "" {
		return fmt.Errorf("accept MCP tools: %w: no server name", ErrInvalid)
	}
	for tool, h := range hashes {
		if err := CheckPin(server, tool, h); err != nil {
			return err
		}
	}
	return nil
}
