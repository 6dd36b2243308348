package bot

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/rules"
)

// The personal inbox (issue 19): a person who opens it (Slack's App Home,
// an event with Home set) is shown the cards they may decide in the
// conversations they are in, read from the store (every replica's cards,
// across restarts): the channels with a pending card (PendingChannels),
// those the platform says the person is a member of (Home.Member: never a
// private channel or a direct message of someone else), and their oldest
// cards the person may approve. It is shown again, at most once a
// homeEvery, whenever a card this process draws changes while they watch
// (Bot.drawn moved).

// homeEvery is how often the inboxes are published again, when a card
// changed.
const homeEvery = time.Second

// Bounds of an inbox: who is watched, for how long after they last opened
// it, and how many cards one inbox lists.
const (
	maxWatchers = 1000
	watchFor    = 30 * time.Minute
	homeMax     = 100
)

// homes are the people who opened their inbox lately.
type homes struct {
	mu       sync.Mutex
	watchers *expirable.LRU[string, inbound] // platform:user → their last opening
	once     sync.Once
}

// watching returns the watchers, made on first use.
func (h *homes) watching() *expirable.LRU[string, inbound] {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.watchers == nil {
		h.watchers = expirable.NewLRU[string, inbound](maxWatchers, nil, watchFor)
	}
	return h.watchers
}

// home answers a person opening their inbox.
func (b *Bot) home(in inbound) {
	if b.extras[in.platform].Home == nil {
		return
	}
	h := &b.homes
	h.watching().Add(in.platform+":"+in.User.ID, in)
	h.once.Do(func() { go b.republish() })
	b.publishHome(b.work, in)
}

// republish publishes every watcher's inbox again after a card changed
// (Bot.drawn moved), looking once a homeEvery, until the bot's work ends.
func (b *Bot) republish() {
	t := time.NewTicker(homeEvery)
	defer t.Stop()
	last := b.drawn.Load()
	for {
		select {
		case <-b.work.Done():
			return
		case <-t.C:
		}
		n := b.drawn.Load()
		if n == last {
			continue
		}
		last = n
		for _, in := range b.homes.watching().Values() {
			b.publishHome(b.work, in)
		}
	}
}

// publishHome lists, for in.User, the cards they may approve in the
// conversations they are in, oldest first, at most homeMax, and publishes
// them. A channel whose membership cannot be told is left out (fail
// closed), and so is one the store cannot list.
func (b *Bot) publishHome(ctx context.Context, in inbound) {
	hm := b.extras[in.platform].Home
	if hm == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	items, err := b.inbox(ctx, hm, in)
	if err != nil {
		b.log.Warn("list the channels with cards for an inbox; it is not published", "err", err, "user", in.User.ID)
		return
	}
	if err := hm.PublishHome(ctx, in.User, items); err != nil {
		b.log.Warn("publish an inbox", "err", err, "user", in.User.ID)
	}
}

// inbox is what in.User's inbox lists (see publishHome).
func (b *Bot) inbox(ctx context.Context, hm adapters.Home, in inbound) ([]adapters.HomeItem, error) {
	chans, err := b.store.PendingChannels(ctx, in.platform)
	if err != nil {
		return nil, err
	}
	var items []adapters.HomeItem
	for _, ch := range chans {
		member, err := hm.Member(ctx, ch, in.User)
		if err != nil {
			b.log.Warn("ask whether a person is in a channel, for their inbox; its cards are left out", "err", err, "channel", ch, "user", in.User.ID)
			continue
		}
		if !member {
			continue
		}
		list, err := b.store.ListPending(ctx, in.platform, ch, homeMax)
		if err != nil {
			b.log.Warn("list a channel's cards for an inbox", "err", err, "channel", ch)
			continue
		}
		for _, a := range list {
			as := in
			as.Place = adapters.Place{Channel: a.Conversation.Channel, Thread: a.Conversation.Thread}
			if why, _ := b.refusal(as, a, approval.DecisionApprove); why != "" {
				continue
			}
			ref := a.MessageRef
			if ref == "" {
				// Posted here a moment ago, not recorded yet.
				if sc, ok := b.cards.m.Get(a.ID); ok && sc.send.TryLock() {
					ref = sc.ref
					sc.send.Unlock()
				}
			}
			items = append(items, adapters.HomeItem{
				ApprovalID: a.ID, Operation: b.operation(a.Tool, a.Args), Channel: a.Conversation.Channel,
				Thread: a.Conversation.Thread, Ref: ref, Requester: a.Requester.Display(), Asked: a.CreatedAt,
				Needs: rules.Card(b.requirement(a), b.progress(a), b.mention(in.platform)),
			})
		}
	}
	slices.SortFunc(items, func(x, y adapters.HomeItem) int { return x.Asked.Compare(y.Asked) })
	return items[:min(len(items), homeMax)], nil
}
