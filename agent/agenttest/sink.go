package agenttest

import (
	"context"
	"errors"
	"strconv"
	"sync"

	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/tools"
)

var _ agent.Sink = (*Sink)(nil)

// Sink records what the agent shows people. It is safe for concurrent use.
// Set FailCards to make PostCard fail.
type Sink struct {
	mu        sync.Mutex
	replies   []Posted
	cards     []*approval.Approval
	updates   []Update
	FailCards bool
	// OnUpdate, when set, is called with every card update before it is
	// recorded, outside the sink's lock: a slow platform, or something
	// that happens while a card is being redrawn.
	OnUpdate func(a *approval.Approval, p *tools.Progress)
}

// Posted is one reply.
type Posted struct {
	Conv approval.Conversation
	Text string
}

// Update is one card update.
type Update struct {
	Approval approval.Approval
	Progress *tools.Progress
}

// Reply records text.
func (s *Sink) Reply(ctx context.Context, conv approval.Conversation, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, Posted{Conv: conv, Text: text})
	return nil
}

// PostCard records the card and returns "card-N" as its reference.
func (s *Sink) PostCard(ctx context.Context, a *approval.Approval) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.FailCards {
		return "", errors.New("agenttest: posting cards fails")
	}
	c := *a
	s.cards = append(s.cards, &c)
	return "card-" + strconv.Itoa(len(s.cards)), nil
}

// UpdateCard records the update.
func (s *Sink) UpdateCard(ctx context.Context, a *approval.Approval, p *tools.Progress) error {
	if s.OnUpdate != nil {
		s.OnUpdate(a, p)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	u := Update{Approval: *a}
	if p != nil {
		pc := *p
		u.Progress = &pc
	}
	s.updates = append(s.updates, u)
	return nil
}

// Replies returns the texts replied so far.
func (s *Sink) Replies() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.replies))
	for i, r := range s.replies {
		out[i] = r.Text
	}
	return out
}

// Cards returns the cards posted so far.
func (s *Sink) Cards() []*approval.Approval {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*approval.Approval(nil), s.cards...)
}

// Updates returns the card updates so far.
func (s *Sink) Updates() []Update {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Update(nil), s.updates...)
}

// States returns the states the card of approval id was redrawn in, in
// order.
func (s *Sink) States(id string) []approval.State {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []approval.State
	for _, u := range s.updates {
		if u.Approval.ID == id {
			out = append(out, u.Approval.State)
		}
	}
	return out
}
