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

// Copies is how many approval-channel copies b remembers (elsewhere.go).
func Copies(b *Bot) int {
	b.copies.mu.Lock()
	defer b.copies.mu.Unlock()
	if b.copies.m == nil {
		return 0
	}
	return b.copies.m.Len()
}

// CardsMax is how many cards a process remembers and a reminder scan
// lists from the store.
const CardsMax = cardsMax
