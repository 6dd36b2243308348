package bot

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/rules"
)

// The personal inbox (issue 19): a person who opens it (Slack's App Home,
// an event with Home set) is shown the cards they may decide, across the
// channels this process has shown cards in, and shown again, at most
// once a homeEvery, whenever a card changes while they watch.

// homeEvery bounds how often the inboxes are published again.
const homeEvery = time.Second

// maxWatchers and maxChannels bound what the inbox remembers.
const (
	maxWatchers = 1000
	maxChannels = 1000
)

// homes are the people who opened their inbox, and the channels to look
// in.
type homes struct {
	mu       sync.Mutex
	watchers map[string]inbound // platform:user → their last opening
	channels map[[2]string]bool // platform, channel
	changed  chan struct{}
	once     sync.Once
}

// saw notes a channel with a card (card, on every drawing), and that
// something changed.
func (h *homes) saw(platform, channel string) {
	h.mu.Lock()
	if h.channels == nil {
		h.channels = map[[2]string]bool{}
	}
	if len(h.channels) < maxChannels {
		h.channels[[2]string{platform, channel}] = true
	}
	watched := len(h.watchers) > 0
	ch := h.changed
	h.mu.Unlock()
	if watched && ch != nil {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// home answers a person opening their inbox.
func (b *Bot) home(in inbound) {
	if b.extras[in.platform].Home == nil {
		return
	}
	h := &b.homes
	h.mu.Lock()
	if h.watchers == nil {
		h.watchers = map[string]inbound{}
	}
	if _, ok := h.watchers[in.platform+":"+in.User.ID]; ok || len(h.watchers) < maxWatchers {
		h.watchers[in.platform+":"+in.User.ID] = in
	}
	h.mu.Unlock()
	h.once.Do(func() {
		h.mu.Lock()
		h.changed = make(chan struct{}, 1)
		h.mu.Unlock()
		go b.republish()
	})
	b.publishHome(b.work, in)
}

// republish publishes every watcher's inbox again after a card changed,
// at most once a homeEvery, until the bot's work ends.
func (b *Bot) republish() {
	for {
		select {
		case <-b.work.Done():
			return
		case <-b.homes.changed:
		}
		b.homes.mu.Lock()
		list := make([]inbound, 0, len(b.homes.watchers))
		for _, in := range b.homes.watchers {
			list = append(list, in)
		}
		b.homes.mu.Unlock()
		for _, in := range list {
			b.publishHome(b.work, in)
		}
		select {
		case <-b.work.Done():
			return
		case <-time.After(homeEvery):
		}
	}
}

// publishHome lists, for in.User, the cards they may approve, oldest
// first, and publishes them.
func (b *Bot) publishHome(ctx context.Context, in inbound) {
	hm := b.extras[in.platform].Home
	if hm == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	b.homes.mu.Lock()
	var chans []string
	for k := range b.homes.channels {
		if k[0] == in.platform {
			chans = append(chans, k[1])
		}
	}
	b.homes.mu.Unlock()
	slices.Sort(chans)
	var items []adapters.HomeItem
	for _, ch := range chans {
		list, err := b.store.ListPending(ctx, in.platform, ch, 0)
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
	if err := hm.PublishHome(ctx, in.User, items); err != nil {
		b.log.Warn("publish an inbox", "err", err, "user", in.User.ID)
	}
}
