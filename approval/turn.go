package approval

import (
	"encoding/json"
	"fmt"
)

// EncodeTurn checks t and returns what a store keeps of it: the turn
// without its pending set, as JSON, and the pending ids in their order
// with repeats dropped. Both stores call it in SaveTurn.
func EncodeTurn(t *Turn) (data []byte, pending []string, err error) {
	if t == nil || t.ID == "" {
		return nil, nil, fmt.Errorf("save turn: %w: no turn id", ErrInvalid)
	}
	// The pending ids are kept apart: the JSON leaves them out.
	data, err = json.Marshal(struct {
		*Turn
		Pending []string `json:"pending,omitempty"`
	}{Turn: t})
	if err != nil {
		return nil, nil, fmt.Errorf("encode turn %s: %w", t.ID, err)
	}
	seen := make(map[string]bool, len(t.Pending))
	for _, id := range t.Pending {
		if !seen[id] {
			seen[id] = true
			pending = append(pending, id)
		}
	}
	return data, pending, nil
}

// DecodeTurn is the reverse of EncodeTurn: the turn id stored as data, its
// Pending holding the ids of order (the pending ids as saved) that left
// reports still unresolved, in that order. Both stores call it in GetTurn.
func DecodeTurn(id string, data []byte, order []string, left func(approvalID string) bool) (*Turn, error) {
	var t Turn
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("decode turn %s: %w", id, err)
	}
	t.Pending = []string{}
	for _, p := range order {
		if left(p) {
			t.Pending = append(t.Pending, p)
		}
	}
	return &t, nil
}
