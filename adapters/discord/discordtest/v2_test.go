package discordtest

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCheckV2: the fake refuses what Discord refuses of a Components V2
// message, and takes a well-formed card.
func TestCheckV2(t *testing.T) {
	box := func(inner string) string {
		return `{"flags":32768,"components":[{"type":17,"accent_color":5793266,"components":[` + inner + `]}],"attachments":[]}`
	}
	many := strings.TrimSuffix(strings.Repeat(`{"type":10,"content":"x"},`, 40), ",")
	for _, tc := range []struct {
		name, body string
		refused    bool
	}{
		{"a card", box(`{"type":10,"content":"### Run?"},{"type":1,"components":[{"type":2,"style":3,"label":"Approve","custom_id":"cs:a:1"}]}`), false},
		{"content", `{"flags":32768,"content":"","components":[{"type":10,"content":"x"}]}`, true},
		{"embeds", `{"flags":32768,"embeds":[],"components":[{"type":10,"content":"x"}]}`, true},
		{"no components", `{"flags":32768,"components":[]}`, true},
		{"41 components", box(many), true},
		{"4001 characters", box(`{"type":10,"content":"` + strings.Repeat("a", 4001) + `"}`), true},
		{"a button at the top", `{"flags":32768,"components":[{"type":2,"label":"x","custom_id":"y"}]}`, true},
		{"a container in a container", box(`{"type":17,"components":[{"type":10,"content":"x"}]}`), true},
		{"six buttons", box(`{"type":1,"components":[` + strings.TrimSuffix(strings.Repeat(`{"type":2,"label":"b","custom_id":"c"},`, 6), ",") + `]}`), true},
		{"a file not attached", box(`{"type":13,"file":{"url":"attachment://operation.txt"}}`), true},
		{"an empty text display", box(`{"type":10,"content":""}`), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p payload
			if err := json.Unmarshal([]byte(tc.body), &p); err != nil {
				t.Fatal(err)
			}
			msg := p.check()
			if (msg != "") != tc.refused {
				t.Errorf("check() = %q, refused want %v", msg, tc.refused)
			}
		})
	}
}

// TestEditKeepsV2: a V2 message takes no content in an edit.
func TestEditKeepsV2(t *testing.T) {
	m := &Message{Flags: FlagComponentsV2}
	text := "plain"
	if msg := m.editV2(payload{Content: &text}); msg == "" {
		t.Error("an edit put content on a Components V2 message")
	}
	if msg := m.editV2(payload{Flags: FlagComponentsV2, Components: &[]Component{{Type: TypeTextDisplay, Content: "x"}}}); msg != "" {
		t.Errorf("a V2 edit of a V2 message refused: %s", msg)
	}
}
