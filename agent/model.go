package agent

import (
	"context"

	"github.com/countersign/countersign/tools"
)

// Model is a chat model that can call tools. The llm sub-package implements
// it with an OpenAI-compatible client; the rest of the agent and the stored
// conversations only know these types, never an SDK's.
type Model interface {
	// Complete sends the conversation and the tools, and returns the
	// model's next message. An error means no message came back. When
	// req.Text is set, a model that can stream gives it the message's
	// words as they come, before it returns the whole message; one that
	// cannot ignores it.
	Complete(ctx context.Context, req Request) (Response, error)
}

// Role says who wrote a message.
type Role string

// The roles of a chat conversation.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one message of a conversation, in the shape chat models use.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are the calls an assistant message makes.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID names the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// ToolCall is one function call the model asked for. Arguments is the JSON
// text exactly as the model wrote it, which may not be valid JSON.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Request is what one model call sends.
type Request struct {
	Messages []Message
	Tools    []tools.Spec
	// Text, when set, is given the words of the model's message as they
	// come (deltas, in order), from the goroutine that called Complete.
	// The Response still holds the whole message. A model that has given
	// Text anything does not retry the call after a failure: the words
	// are shown, and a second answer would follow half of the first.
	// It rides on the request, not on an optional interface, so that a
	// wrapper of the Model (metrics) passes it on without knowing it.
	Text func(delta string) `json:"-"`
}

// Response is what one model call returns.
type Response struct {
	// Message is the assistant's message: text, tool calls, or both.
	Message Message
	// FinishReason is the model's own reason for stopping ("stop",
	// "tool_calls", "length", ...), for the log.
	FinishReason string
	// Usage is the tokens the call used, as the server reported them
	// (zero when it reported none), for metrics.
	Usage Usage
}

// Usage counts the tokens of one model call.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
}
