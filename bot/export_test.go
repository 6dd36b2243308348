package bot

import (
	"encoding/json"

	"github.com/countersign/countersign/adapters"
)

// JournalEntry is the inbox data of an event of platform, as a process
// that accepted it writes it, for tests that play a process that died.
func JournalEntry(platform string, e adapters.Event) []byte {
	e.Reply = nil
	b, err := json.Marshal(journaled{Platform: platform, Event: e})
	if err != nil {
		panic(err)
	}
	return b
}
