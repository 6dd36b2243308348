package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/countersign/countersign/approval"
)

// conversationVersion marks the stored encoding, so a later change can
// tell old records apart.
const conversationVersion = 1

// storedConversation is how a conversation is kept in the store. The
// system prompt is not part of it: it is prepended on every model call, so
// a new prompt applies to old conversations too.
type storedConversation struct {
	Version  int       `json:"v"`
	Messages []Message `json:"messages"`
}

// loadConversation returns the stored messages of conv, or none. A record
// that cannot be decoded is logged and dropped: a fresh start is better
// than a conversation that can never be sent again.
func (a *Agent) loadConversation(ctx context.Context, conv approval.Conversation) ([]Message, error) {
	b, err := a.store.LoadConversation(ctx, conv.Key())
	if err != nil {
		return nil, fmt.Errorf("load conversation %s: %w", conv.Key(), err)
	}
	if b == nil {
		return nil, nil
	}
	var sc storedConversation
	if err := json.Unmarshal(b, &sc); err != nil || sc.Version != conversationVersion {
		a.log.WarnContext(ctx, "dropping a stored conversation that cannot be read",
			"conversation", conv.Key(), "version", sc.Version, "error", err)
		return nil, nil
	}
	return trim(sc.Messages, a.cfg.MaxMessages, a.cfg.MaxBytes), nil
}

// saveConversation trims msgs to the caps and stores them with the
// conversation TTL.
func (a *Agent) saveConversation(ctx context.Context, conv approval.Conversation, msgs []Message) error {
	b, err := json.Marshal(storedConversation{
		Version:  conversationVersion,
		Messages: trim(msgs, a.cfg.MaxMessages, a.cfg.MaxBytes),
	})
	if err != nil {
		return fmt.Errorf("encode conversation %s: %w", conv.Key(), err)
	}
	if err := a.store.SaveConversation(ctx, conv.Key(), b, a.cfg.ConversationTTL); err != nil {
		return fmt.Errorf("save conversation %s: %w", conv.Key(), err)
	}
	return nil
}

// messageOverhead is the size estimate of a message's JSON framing.
const messageOverhead = 32

// size estimates the bytes a message takes in a request.
func size(m Message) int {
	n := messageOverhead + len(m.Role) + len(m.Content) + len(m.ToolCallID)
	for _, tc := range m.ToolCalls {
		n += messageOverhead + len(tc.ID) + len(tc.Name) + len(tc.Arguments)
	}
	return n
}

// trim returns msgs without the oldest messages beyond maxMessages
// messages or about maxBytes bytes. It works on units: an assistant
// message with tool calls goes together with its tool results, so a call is
// never kept without its result or a result without its call. The newest
// unit is always kept. Units that are broken (tool results without their
// call, a call without all its results) are dropped wherever they are: a
// model API refuses a conversation holding one. Zero caps mean no cap.
func trim(msgs []Message, maxMessages, maxBytes int) []Message {
	type unit struct{ start, end, bytes int }
	var units []unit
	count, bytes := 0, 0
	for i := 0; i < len(msgs); {
		m := msgs[i]
		switch {
		case m.Role == RoleTool:
			i++ // a result whose call is gone
			continue
		case len(m.ToolCalls) > 0:
			j := i + 1
			for j < len(msgs) && msgs[j].Role == RoleTool {
				j++
			}
			if !complete(m.ToolCalls, msgs[i+1:j]) {
				i = j
				continue
			}
			u := unit{start: i, end: j}
			for _, x := range msgs[i:j] {
				u.bytes += size(x)
			}
			units = append(units, u)
			i = j
		default:
			units = append(units, unit{start: i, end: i + 1, bytes: size(m)})
			i++
		}
		u := units[len(units)-1]
		count += u.end - u.start
		bytes += u.bytes
	}
	first := 0
	for first < len(units)-1 &&
		((maxMessages > 0 && count > maxMessages) || (maxBytes > 0 && bytes > maxBytes)) {
		count -= units[first].end - units[first].start
		bytes -= units[first].bytes
		first++
	}
	out := make([]Message, 0, count)
	for _, u := range units[first:] {
		out = append(out, msgs[u.start:u.end]...)
	}
	return out
}

// complete reports whether results answer every call exactly once, and
// nothing else.
func complete(calls []ToolCall, results []Message) bool {
	if len(calls) != len(results) {
		return false
	}
	want := make(map[string]bool, len(calls))
	for _, c := range calls {
		want[c.ID] = true
	}
	for _, r := range results {
		if !want[r.ToolCallID] {
			return false
		}
		delete(want, r.ToolCallID)
	}
	return len(want) == 0
}
