package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/countersign/countersign/agent"
)

// stream makes one streamed attempt (server-sent events): the words of
// the message go to text as they come, and the whole message is put
// together from the deltas: the content in order, each tool call by its
// index (its id, name and type from the delta that has them, its
// arguments concatenated). It reports whether any words were given to
// text, so that the caller knows whether the attempt may be made again.
func (c *Client) stream(ctx context.Context, req openai.ChatCompletionRequest, text func(string)) (agent.Response, bool, error) {
	req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	st, err := c.client.CreateChatCompletionStream(ctx, req)
	if err != nil {
		return agent.Response{}, false, err
	}
	defer st.Close()
	var (
		content strings.Builder
		calls   []openai.ToolCall
		fn      openai.FunctionCall // the deprecated single function_call
		finish  string
		usage   agent.Usage
		choice  bool
		shown   bool
	)
	for {
		chunk, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return agent.Response{}, shown, fmt.Errorf("reading the streamed answer: %w", err)
		}
		if u := chunk.Usage; u != nil {
			usage = agent.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue // one answer is asked for
			}
			choice = true
			d := ch.Delta
			if d.Content != "" {
				content.WriteString(d.Content)
				text(d.Content)
				shown = true
			}
			for _, tc := range d.ToolCalls {
				calls = addCallDelta(calls, tc)
			}
			if f := d.FunctionCall; f != nil {
				fn.Name += f.Name
				fn.Arguments += f.Arguments
			}
			if ch.FinishReason != "" {
				finish = string(ch.FinishReason)
			}
		}
	}
	switch {
	case !choice:
		// Not one event: a server that ignores "stream" answers with a
		// whole JSON message, which is no event at all.
		return agent.Response{}, shown, errNotAStream
	case finish == "":
		// The body ended without the model's reason to stop: cut off.
		return agent.Response{}, shown, fmt.Errorf("the streamed answer ended before the model finished: %w", io.ErrUnexpectedEOF)
	}
	msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: content.String(), ToolCalls: calls}
	if fn.Name != "" {
		msg.FunctionCall = &fn
	}
	r, err := fromResponse(openai.ChatCompletionResponse{
		Choices: []openai.ChatCompletionChoice{{Message: msg, FinishReason: openai.FinishReason(finish)}},
	})
	r.Usage = usage
	return r, shown, err
}

// addCallDelta adds one tool call delta to calls. A delta names its call
// by index; a server that sends no index starts a new call with each new
// id and continues the last one otherwise.
func addCallDelta(calls []openai.ToolCall, d openai.ToolCall) []openai.ToolCall {
	i := len(calls) - 1
	switch {
	case d.Index != nil:
		i = *d.Index
	case d.ID != "" && (i < 0 || calls[i].ID != d.ID):
		i = len(calls)
	}
	if i < 0 || i > len(calls)+64 {
		i = len(calls) // no index and nothing to continue, or an index past all reason
	}
	for len(calls) <= i {
		calls = append(calls, openai.ToolCall{Type: openai.ToolTypeFunction})
	}
	c := &calls[i]
	if d.ID != "" {
		c.ID = d.ID
	}
	if d.Type != "" {
		c.Type = d.Type
	}
	// The name comes whole in one delta; a server that repeats it in
	// every delta is not taken to spell it twice.
	if d.Function.Name != "" && d.Function.Name != c.Function.Name {
		c.Function.Name += d.Function.Name
	}
	c.Function.Arguments += d.Function.Arguments
	return calls
}

// errNotAStream: a streamed request was answered with no event at all
// (a server that ignores "stream" and sends a whole message); the call is
// made again whole.
var errNotAStream = errors.New("the server answered a streamed request without any event")

// refusesStream reports whether err is a server's refusal of a streamed
// request (stream or stream_options unknown to it), after which the
// call is made whole.
func refusesStream(err error) bool {
	code := StatusCode(err)
	return (code == http.StatusBadRequest || code == http.StatusUnprocessableEntity) &&
		strings.Contains(strings.ToLower(apiMessage(err)), "stream")
}

func fromResponse(resp openai.ChatCompletionResponse) (agent.Response, error) {
	if len(resp.Choices) == 0 {
		return agent.Response{}, errNoChoices
	}
	ch := resp.Choices[0]
	m := agent.Message{Role: agent.RoleAssistant, Content: ch.Message.Content}
	for _, tc := range ch.Message.ToolCalls {
		m.ToolCalls = append(m.ToolCalls, agent.ToolCall{
			ID:        tc.ID,
			Name:      tc.Function.Name,
			Arguments: tc.Function.Arguments,
		})
	}
	// Older servers answer with the deprecated single function_call.
	if len(m.ToolCalls) == 0 && ch.Message.FunctionCall != nil && ch.Message.FunctionCall.Name != "" {
		m.ToolCalls = append(m.ToolCalls, agent.ToolCall{
			Name:      ch.Message.FunctionCall.Name,
			Arguments: ch.Message.FunctionCall.Arguments,
		})
	}
	usage := agent.Usage{PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens}
	return agent.Response{Message: m, FinishReason: string(ch.FinishReason), Usage: usage}, nil
}
