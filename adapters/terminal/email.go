package terminal

import (
	"context"
	"strings"

	"github.com/countersign/countersign/adapters"
)

var _ adapters.EmailFinder = (*Terminal)(nil)

// UserByEmail is the terminal's person for an e-mail address: the name
// before the @ ("alice" for alice@example.com), as people are known here
// by name (terminal.user, /as); "" for an address without one.
func (t *Terminal) UserByEmail(_ context.Context, email string) (string, error) {
	name, _, ok := strings.Cut(strings.TrimSpace(email), "@")
	if !ok || !validName(name) {
		return "", nil
	}
	return name, nil
}
