package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/countersign/countersign/agent"
)

var _ agent.Model = (*Client)(nil)

// Client is a chat model reached through the OpenAI chat completions API.
// It is safe for concurrent use.
type Client struct {
	cfg    Config
	client *openai.Client
	// noStream is set once the server refused a streamed request (400
	// naming "stream"): every call is then made whole.
	noStream atomic.Bool
}

// New returns a client for cfg (call Config.FromEnv first to read the
// environment). httpClient may be nil for a default one; pass one to set
// proxies or TLS. A bad configuration is an error naming the key.
func New(cfg Config, httpClient *http.Client) (*Client, error) {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	var oc openai.ClientConfig
	switch cfg.APIType {
	case APIAzure, APIAzureAD:
		oc = openai.DefaultAzureConfig(cfg.APIKey, cfg.BaseURL)
		if cfg.APIType == APIAzureAD {
			oc.APIType = openai.APITypeAzureAD
		}
		oc.APIVersion = cfg.APIVersion
		deployments := cfg.Deployments
		oc.AzureModelMapperFunc = func(model string) string {
			if d, ok := deployments[model]; ok && d != "" {
				return d
			}
			return model
		}
	default:
		oc = openai.DefaultConfig(cfg.APIKey)
		if cfg.BaseURL != "" {
			oc.BaseURL = cfg.BaseURL
		}
	}
	oc.OrgID = cfg.Organization
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	oc.HTTPClient = headerDoer{httpClient}
	return &Client{cfg: cfg, client: openai.NewClientWithConfig(oc)}, nil
}

// Complete sends one chat completion request, retrying what can be
// retried within llm.total_timeout. A failure is an *Error: permanent ones
// (bad URL, 401, 403, 404, unknown model) after one attempt, with the fix
// in its sentence; transient ones once the attempts or the time are used.
//
// With req.Text set the answer is streamed (stream, below): its words go to
// req.Text as they come. An attempt that fails before any word was given
// is retried as above; one that fails after is not (its words are shown,
// and a second answer would follow half of the first): the call fails
// at once with a transient *Error saying the answer broke off.
func (c *Client) Complete(ctx context.Context, req agent.Request) (agent.Response, error) {
	creq, err := toRequest(c.cfg.Model, req)
	if err != nil {
		return agent.Response{}, err
	}
	parent := ctx
	ctx, cancel := context.WithTimeoutCause(ctx, c.cfg.TotalTimeout, errBudget)
	defer cancel()
	fail := func(attempt int, err error) (agent.Response, error) {
		return agent.Response{}, fmt.Errorf("chat completion (attempt %d of %d): %w", attempt, c.cfg.MaxAttempts, c.classify(err))
	}
	for attempt := 1; ; attempt++ {
		r, header, shown, err := c.attempt(ctx, creq, req.Text)
		if err == nil {
			return r, nil
		}
		if parent.Err() != nil {
			return agent.Response{}, fmt.Errorf("chat completion: %w", context.Cause(parent))
		}
		if shown {
			return fail(attempt, fmt.Errorf("%w: %w", errBrokeOff, err))
		}
		if ctx.Err() != nil {
			return fail(attempt, fmt.Errorf("%w: %w", context.Cause(ctx), err))
		}
		if attempt >= c.cfg.MaxAttempts || !retryable(err) || c.classify(err).permanent {
			return fail(attempt, err)
		}
		wait := backoff(c.cfg.Backoff, c.cfg.MaxBackoff, attempt)
		if ra, ok := retryAfter(header, time.Now()); ok {
			if ra > c.cfg.MaxRetryAfter {
				return fail(attempt, fmt.Errorf("server asks to retry after %s, longer than llm.max_retry_after: %w", ra, err))
			}
			wait = ra
		}
		if wait >= budgetLeft(ctx) {
			return fail(attempt, fmt.Errorf("%w: the next attempt would start after it (last error: %w)", errBudget, err))
		}
		if serr := sleepCtx(ctx, wait); serr != nil {
			if parent.Err() != nil {
				return agent.Response{}, fmt.Errorf("chat completion: waiting to retry: %w (last error: %w)", context.Cause(parent), err)
			}
			return fail(attempt, fmt.Errorf("%w (last error: %w)", serr, err))
		}
	}
}

// attempt makes one attempt under the attempt time limit, streamed when
// text is set and the server takes streamed requests. It returns the
// response's headers (Retry-After) with an error too, and whether any of
// the answer's words were given to text.
func (c *Client) attempt(ctx context.Context, req openai.ChatCompletionRequest, text func(string)) (agent.Response, http.Header, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	var header http.Header
	ctx = context.WithValue(ctx, headerKey{}, &header)
	if text != nil && !c.noStream.Load() {
		r, shown, err := c.stream(ctx, req, text)
		if err == nil || shown || !(refusesStream(err) || errors.Is(err, errNotAStream)) {
			return r, header, shown, err
		}
		// A server that does not stream (it refuses stream or
		// stream_options, or answers with a whole message instead of
		// events): this call and every later one are made whole.
		c.noStream.Store(true)
	}
	resp, err := c.client.CreateChatCompletion(ctx, req)
	if err != nil {
		return agent.Response{}, header, false, err
	}
	r, err := fromResponse(resp)
	return r, header, false, err
}

// headerKey carries, in a request's context, where headerDoer puts the
// response's headers: go-openai drops them when a streamed request fails.
type headerKey struct{}

// headerDoer is the HTTP client go-openai uses: it keeps each response's
// headers where the attempt's context says.
type headerDoer struct{ c *http.Client }

func (d headerDoer) Do(r *http.Request) (*http.Response, error) {
	resp, err := d.c.Do(r)
	if h, ok := r.Context().Value(headerKey{}).(*http.Header); ok && resp != nil {
		*h = resp.Header
	}
	return resp, err
}

// StatusCode returns the HTTP status of a failed call, or 0 when the error
// did not come from an HTTP response.
func StatusCode(err error) int {
	var ae *openai.APIError
	if errors.As(err, &ae) {
		return ae.HTTPStatusCode
	}
	var re *openai.RequestError
	if errors.As(err, &re) {
		return re.HTTPStatusCode
	}
	return 0
}

func toRequest(model string, req agent.Request) (openai.ChatCompletionRequest, error) {
	out := openai.ChatCompletionRequest{Model: model}
	for _, m := range req.Messages {
		om := openai.ChatCompletionMessage{
			Role:       string(m.Role),
			Content:    m.Content,
			ToolCallID: m.ToolCallID,
		}
		for _, tc := range m.ToolCalls {
			om.ToolCalls = append(om.ToolCalls, openai.ToolCall{
				ID:       tc.ID,
				Type:     openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: tc.Name, Arguments: tc.Arguments},
			})
		}
		out.Messages = append(out.Messages, om)
	}
	for _, s := range req.Tools {
		params := s.Parameters
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		if !json.Valid(params) {
			return out, fmt.Errorf("chat completion: tool %s: parameters schema is not valid JSON", s.Name)
		}
		out.Tools = append(out.Tools, openai.Tool{
			Type: openai.ToolTypeFunction,
			Function: &openai.FunctionDefinition{
				Name:        s.Name,
				Description: s.Description,
				Parameters:  params,
			},
		})
	}
	return out, nil
}

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
