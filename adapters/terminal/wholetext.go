package terminal

import "github.com/countersign/countersign/adapters"

// WholeText says that the terminal's stream prints each Text as a message
// of its own (adapters.WholeText): a turn gives it the model's answer
// whole, not its words as they come.
func (t *Terminal) WholeText() {}

var _ adapters.WholeText = (*Terminal)(nil)
