package agent

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/tools"
)

// This file is a model turn, in order: Handle takes the message, loop
// asks the model and admits its calls (admit.go) until it answers or a
// card waits (decide.go: suspend); then the conversation it loads and
// keeps; and at the end what the agent holds while it works (the count of
// work in flight, a turn's hold on its conversation).

// The sentences the agent says on its own. None holds error text: details
// go to the log, with the reference the user sees.
const (
	noModelText = "No language model is configured, so I only understand direct commands: " +
		"`!run <command>`, `!sql <statement>`, `!http <METHOD> <url>`, `!file <operation> <path>`, `!pending` and `!help`. " +
		"To talk to me in plain words, an operator sets `llm.api_key` (or OPENAI_API_KEY) and `llm.model`, " +
		"or `llm.base_url` for a local server such as Ollama or vLLM."
	modelErrorText = "I could not get an answer from the language model just now (reference %s). " +
		"Please try again in a minute; direct commands such as `!run` and `!sql` still work."
	storeErrorText = "I could not reach my state store just now (reference %s), so I did not act on that. " +
		"Please try again in a minute."
	roundTripsText  = "I stopped after %d steps without finishing. Tell me how to go on, or ask for something narrower."
	emptyAnswerText = "(The model gave no answer.)"
)

// Handle runs one turn for a user's message in a conversation: model
// calls, assessment, auto runs, cards for calls that need approval
// (suspending the turn), and the model's answer via Sink.Reply. Without a
// model it replies that only direct commands work, and how to add a model.
// Failures (the model, the store) are logged with a reference and told to
// the user as a safe sentence with that reference; Handle then returns nil.
// An error means the user could not be told at all (the Sink failed).
func (a *Agent) Handle(ctx context.Context, conv approval.Conversation, user approval.User, text string) error {
	return a.HandleReplying(ctx, conv, user, text, a.sink)
}

// HandleReplying is Handle with the turn's words going to out instead of
// the Sink's Reply (the bot's out puts the first of them in place of the
// turn's "working on it" line). Cards, and the words of the turn when a
// decision resumes it later, go through the Sink.
func (a *Agent) HandleReplying(ctx context.Context, conv approval.Conversation, user approval.User, text string, out Replier) error {
	a.busy.add()
	defer a.busy.done()
	ctx, span := a.traceTurn(ctx, conv) // trace.go
	defer span.End()
	if a.model == nil {
		return a.reply(ctx, out, conv, noModelText)
	}
	h := &hold{key: conv.Key(), out: out}
	unlock := a.convs.lock(h.key)
	defer unlock()
	msgs, err := a.loadConversation(ctx, conv)
	if err != nil {
		return a.fail(ctx, out, conv, storeErrorText, err)
	}
	msgs = append(msgs, Message{Role: RoleUser, Content: text})
	return a.loop(ctx, h, conv, user, msgs, 0, spend{})
}

// loop calls the model until it answers in words, a call needs a person,
// or the turn has used its round trips or its budget. msgs is the
// conversation so far, ending with what the model has not seen yet. h
// holds conv's lock. sp is what the turn has spent so far (budget.go).
func (a *Agent) loop(ctx context.Context, h *hold, conv approval.Conversation, user approval.User, msgs []Message, trips int, sp spend) error {
	for {
		if trips >= a.cfg.MaxRoundTrips {
			note := fmt.Sprintf(roundTripsText, trips)
			msgs = append(msgs, Message{Role: RoleAssistant, Content: note})
			a.keepConversation(ctx, conv, msgs)
			return a.reply(ctx, h.out, conv, note+a.lastResults(msgs[:len(msgs)-1]))
		}
		if over := a.overBudget(ctx, conv, sp); over != nil {
			return a.stopOverBudget(ctx, h, conv, msgs, over) // budget.go
		}
		req := Request{
			Messages: append([]Message{{Role: RoleSystem, Content: a.prompt}}, trim(msgs, a.cfg.MaxMessages, a.cfg.MaxBytes)...),
			Tools:    a.specs,
		}
		req.Text = a.textTo(ctx, h.out, conv)
		resp, err := a.model.Complete(ctx, req)
		trips++
		if err == nil {
			a.addSpend(ctx, conv, &sp, req, resp)
		}
		if err != nil && ctx.Err() != nil {
			// Cut off by !cancel or a shutdown, not a model failure: the
			// caller says so.
			a.keepConversation(context.WithoutCancel(ctx), conv, msgs)
			return fmt.Errorf("model call %d of the turn: %w", trips, context.Cause(ctx))
		}
		if err != nil {
			a.keepConversation(ctx, conv, msgs)
			text := modelErrorText
			// A permanent model error (agent/llm's *Error) says the fix
			// instead: retrying in a minute would fail the same way.
			var me interface {
				Permanent() bool
				Fix() string
			}
			if errors.As(err, &me) && me.Permanent() {
				text = "The language model cannot be used as configured (reference %s): " +
					strings.ReplaceAll(me.Fix(), "%", "%%") + ". Direct commands such as `!run` and `!sql` still work."
			}
			return a.fail(ctx, h.out, conv, text, fmt.Errorf("model call %d of the turn: %w", trips, err))
		}
		msg := resp.Message
		msg.Role = RoleAssistant
		if len(msg.ToolCalls) == 0 {
			if strings.TrimSpace(msg.Content) == "" {
				a.log.WarnContext(ctx, "the model answered with nothing", "conversation", conv.Key(), "finish_reason", resp.FinishReason)
				msg.Content = emptyAnswerText // servers refuse an assistant message with nothing in it
			}
			msgs = append(msgs, msg)
			a.keepConversation(ctx, conv, msgs)
			return a.reply(ctx, h.out, conv, strings.TrimSpace(msg.Content))
		}
		msg.ToolCalls = uniqueIDs(msg.ToolCalls)

		turnID := approval.NewID()
		calls := make([]callState, len(msg.ToolCalls))
		var cards []*approval.Approval
		outside := turnOutside(msgs) // taint.go
		cardsLeft := a.cfg.MaxCardsPerAnswer
		fenced := a.turnFenced(msgs) // fenced.go
		for i, tc := range msg.ToolCalls {
			calls[i] = a.admit(ctx, entry{
				from: fromModel, requester: user, conv: conv, tool: tc.Name, args: tc.Arguments,
				callID: tc.ID, turnID: turnID, outside: outside, fenced: fenced, cardsLeft: &cardsLeft, show: a.callShown(h.out, conv, tc.ID),
			})
			outside = cmp.Or(outside, outsideOf(calls[i]))
			fenced.add(a, calls[i])
			if calls[i].approval != nil {
				cards = append(cards, calls[i].approval)
			}
		}
		msg.ToolCalls = historyCalls(a.boundedCalls(msg.ToolCalls))
		a.showCalls(ctx, h.out, conv, calls)
		if len(cards) == 0 {
			msgs = append(msgs, msg)
			msgs = append(msgs, toolMessages(calls)...)
			continue
		}
		// Suspend: what is complete goes into the conversation; the
		// assistant message waits in the turn with its calls.
		if err := a.saveConversation(ctx, conv, msgs); err != nil {
			a.cancelAll(ctx, cards, "the conversation could not be saved")
			return a.fail(ctx, h.out, conv, storeErrorText, err)
		}
		st := turnState{Kind: kindModel, Requester: user, Assistant: &msg, Calls: calls, RoundTrips: trips, Tokens: sp.tokens, Unrecorded: sp.unrecorded}
		return a.suspend(ctx, h, conv, turnID, st, cards)
	}
}

// uniqueIDs gives every call an id, unique within the message: some
// servers send none, or the same one twice, and each result must name its
// call.
func uniqueIDs(calls []ToolCall) []ToolCall {
	seen := make(map[string]bool, len(calls))
	out := make([]ToolCall, len(calls))
	for i, c := range calls {
		if c.ID == "" || seen[c.ID] {
			c.ID = "call_" + randomHex(12)
		}
		seen[c.ID] = true
		out[i] = c
	}
	return out
}

// boundedCalls returns calls with the arguments of each one the gate
// refused for its size (agent.max_call_bytes) replaced by a note of that
// size: the conversation keeps, and sends back to the model, no more of a
// call than the gate would.
func (a *Agent) boundedCalls(calls []ToolCall) []ToolCall {
	out := make([]ToolCall, len(calls))
	for i, c := range calls {
		if n := len(c.Arguments) + len(c.Name); n > a.cfg.MaxCallBytes {
			b, _ := json.Marshal(map[string]string{"omitted": bytesText(n) + " of arguments, refused at the gate (over agent.max_call_bytes)"})
			c.Arguments = string(b)
			c.Name = clipName(c.Name)
		}
		out[i] = c
	}
	return out
}

// historyCalls returns calls fit to be sent back in the conversation:
// arguments that are not one JSON object are wrapped in one, because some
// servers (Ollama, vLLM chat templates) parse the arguments of past calls
// and refuse the whole request when they cannot. The model still reads
// what it wrote, and the call's error result says what was wrong.
func historyCalls(calls []ToolCall) []ToolCall {
	out := make([]ToolCall, len(calls))
	for i, c := range calls {
		text := strings.TrimSpace(c.Arguments)
		var obj map[string]json.RawMessage
		switch {
		case text == "":
			c.Arguments = "{}"
		case json.Unmarshal([]byte(text), &obj) != nil || obj == nil:
			b, _ := json.Marshal(map[string]string{"invalid_arguments": c.Arguments})
			c.Arguments = string(b)
		}
		out[i] = c
	}
	return out
}

// toolMessages returns one tool message per call, in order, holding the
// result JSON of SPEC §4.
func toolMessages(calls []callState) []Message {
	out := make([]Message, len(calls))
	for i, c := range calls {
		res := tools.NotRun(tools.StatusError, "Countersign lost track of this call")
		if c.Result != nil {
			res = *c.Result
		}
		out[i] = Message{Role: RoleTool, ToolCallID: c.ID, Content: forModel(res).JSON()}
	}
	return out
}

// forModel makes sure a result keeps SPEC §4's promise whatever the tool
// wrote: it has a status, and one that did not run says so in words.
func forModel(r tools.Result) tools.Result {
	if r.Status == "" {
		r.Status = tools.StatusError
	}
	if !r.Executed && !strings.Contains(r.Message, tools.DidNotRun) {
		r.Message = strings.TrimSpace(strings.TrimSpace(r.Message) + " " + tools.DidNotRun)
	}
	return r
}

// keepConversation saves msgs for the next turn. The turn's answer matters
// more than its memory: a save that fails costs the exchange, so it is
// only logged.
func (a *Agent) keepConversation(ctx context.Context, conv approval.Conversation, msgs []Message) {
	if err := a.saveConversation(ctx, conv, msgs); err != nil {
		a.log.ErrorContext(ctx, "saving a conversation", "conversation", conv.Key(), "error", err)
	}
}

// reply posts text into the conversation through out.
func (a *Agent) reply(ctx context.Context, out Replier, conv approval.Conversation, text string) error {
	if err := out.Reply(ctx, conv, text); err != nil {
		return fmt.Errorf("reply in %s: %w", conv.Key(), err)
	}
	return nil
}

// fail logs err under a new reference and tells the user the safe
// sentence format (which has one %s for the reference). Once the user has
// been told, the failure is handled: fail returns nil, so the caller does
// not say it a second time. It returns an error only when the sentence
// could not be posted either.
func (a *Agent) fail(ctx context.Context, out Replier, conv approval.Conversation, format string, err error) error {
	ref := randomHex(4)
	a.log.ErrorContext(ctx, "turn failed", "ref", ref, "conversation", conv.Key(), "error", err)
	if rerr := a.reply(ctx, out, conv, fmt.Sprintf(format, ref)); rerr != nil {
		return errors.Join(err, rerr)
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails since Go 1.24
	return hex.EncodeToString(b)
}

// logAttrs are the attributes that place an approval in the log.
func logAttrs(ap *approval.Approval) []any {
	return []any{slog.String("approval", ap.ID), slog.String("tool", ap.Tool), slog.String("conversation", ap.Conversation.Key())}
}

// lastResults sums up the results the model did not get to see when the
// turn ran out of round trips, one line per call, so the user still learns
// what ran and what did not.
func (a *Agent) lastResults(msgs []Message) string {
	end := len(msgs)
	start := end
	for start > 0 && msgs[start-1].Role == RoleTool {
		start--
	}
	if start == end || start == 0 || len(msgs[start-1].ToolCalls) == 0 {
		return ""
	}
	calls := make(map[string]ToolCall, len(msgs[start-1].ToolCalls))
	for _, c := range msgs[start-1].ToolCalls {
		calls[c.ID] = c
	}
	var b strings.Builder
	b.WriteString("\nThe last calls:")
	for _, m := range msgs[start:end] {
		var r tools.Result
		if err := json.Unmarshal([]byte(m.Content), &r); err != nil {
			continue
		}
		c := calls[m.ToolCallID]
		line, _, _ := strings.Cut(a.render(c.Name, json.RawMessage(c.Arguments), r), "\n")
		b.WriteString("\n• " + line)
	}
	return b.String()
}

// The conversation a turn reads and keeps: the model's history in the
// store.

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

// What the agent holds while it works: the count of its work in flight
// (every entry, Handle, Direct, Approve, Cancel, Edit, Call and Sweep,
// counts itself in, and Wait waits for none), and a turn's hold on its
// conversation.

// inflight counts the calls in progress. Unlike sync.WaitGroup it allows
// new work to start while someone waits.
type inflight struct {
	mu   sync.Mutex
	cond *sync.Cond
	n    int
}

// add counts one call in; done counts it out; wait blocks until none is in.
func (f *inflight) add() {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
}

func (f *inflight) done() {
	f.mu.Lock()
	f.n--
	if f.n == 0 {
		f.cond.Broadcast()
	}
	f.mu.Unlock()
}

func (f *inflight) wait() {
	f.mu.Lock()
	for f.n > 0 {
		f.cond.Wait()
	}
	f.mu.Unlock()
}

// keyedMutex serialises the turns of one conversation in this process, so
// two quick messages in a thread, or a message and a resumed turn, do not
// both load the conversation and overwrite each other's save. (Replicas
// share no lock: the platforms deliver one thread's messages to one
// replica in practice, and the worst case is a lost exchange, never a
// run.)
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*keyedLock
}

type keyedLock struct {
	mu   sync.Mutex
	refs int
}

// lock locks key and returns its unlock.
func (k *keyedMutex) lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyedLock{}
	}
	l := k.locks[key]
	if l == nil {
		l = &keyedLock{}
		k.locks[key] = l
	}
	l.refs++
	k.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		k.mu.Lock()
		l.refs--
		if l.refs == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}

// hold is a turn's hold on its conversation, handed from Handle down
// through the turn's functions to a turn resumed from inside it (a card
// that could not be posted cancels its approval at once; a decision made
// before the turn was saved resolves it): the goroutine holds the lock of
// conversation key, so that resume does not wait for itself, and the
// turn's words go to out. A nil *hold holds nothing; words go to the Sink.
type hold struct {
	key string
	out Replier
}

// out is where the words of the turn h holds go: h's own, or the Sink's.
func (a *Agent) out(h *hold) Replier {
	if h == nil {
		return a.sink
	}
	return h.out
}

// lockConversation serialises work on one conversation in this process,
// unless h already holds its lock. It returns the hold of the conversation
// and its unlock; a new hold's words go where the Sink sends a resumed
// turn's (Resumer: the turn's stream, when it still has one).
func (a *Agent) lockConversation(h *hold, key string) (*hold, func()) {
	if h != nil && h.key == key {
		return h, func() {}
	}
	unlock := a.convs.lock(key)
	return &hold{key: key, out: a.resumedOut(key)}, unlock
}
