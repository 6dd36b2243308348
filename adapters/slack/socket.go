package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/countersign/countersign/adapters"
)

// runSocket reads Socket Mode envelopes and queues each for the worker,
// which acknowledges it once the bot has recorded its events (at most
// ackWithin later). slack-go reconnects on a dropped socket or a
// disconnect request; envelopes Slack did not see acknowledged come again
// on the new socket.
func (a *Adapter) runSocket(ctx context.Context, q *queue) error {
	smc := socketmode.New(a.api, socketmode.OptionLog(slogWriter{a.log}))
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	ran := make(chan error, 1)
	go func() { ran <- smc.RunContext(sctx) }()
	for {
		select {
		case <-ctx.Done():
			stop()
			<-ran
			return ctx.Err()
		case err := <-ran:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("slack socket mode at %s: %w; check $%s (an app-level token, xapp-, with connections:write) and that Socket Mode is on for the app", a.apiURL, err, a.cfg.AppTokenEnv)
		case ev := <-smc.Events:
			if end := a.socketEvent(sctx, smc, ev, q); end {
				stop()
				<-ran
				return nil
			}
		}
	}
}

// socketEvent handles one event of slack-go's Socket Mode client. It
// reports true when the app was uninstalled or its tokens revoked: the
// input has ended for good.
func (a *Adapter) socketEvent(ctx context.Context, smc *socketmode.Client, ev socketmode.Event, q *queue) (end bool) {
	ack := func(id string) {
		if id == "" {
			return
		}
		if err := smc.AckCtx(ctx, id, nil); err != nil && ctx.Err() == nil {
			a.log.Warn("could not acknowledge a slack envelope; slack will deliver it again", "envelope", id, "err", err)
		}
	}
	switch ev.Type {
	case socketmode.EventTypeConnecting:
		a.up.Store(false)
		a.log.Debug("connecting to slack socket mode")
	case socketmode.EventTypeConnected:
		a.up.Store(true)
		a.log.Info("slack socket mode connected")
	case socketmode.EventTypeHello:
		a.log.Debug("slack socket mode hello")
	case socketmode.EventTypeConnectionError:
		a.up.Store(false)
		a.log.Warn("slack socket mode connection failed; retrying", "err", ev.Data)
	case socketmode.EventTypeInvalidAuth:
		a.log.Error("slack refused the app-level token", "env", a.cfg.AppTokenEnv)
	case socketmode.EventTypeIncomingError, socketmode.EventTypeErrorWriteFailed:
		a.log.Warn("slack socket mode error", "type", ev.Type, "err", fmt.Sprint(ev.Data))
	case socketmode.EventTypeErrorBadMessage:
		// slack-go could not decode the envelope and leaves the request
		// empty; its id is still in the raw message, and Slack would
		// otherwise deliver it again and again.
		bad, _ := ev.Data.(*socketmode.ErrorBadMessage)
		var raw json.RawMessage
		var cause error
		if bad != nil {
			raw, cause = bad.Message, bad.Cause
		}
		var env struct {
			EnvelopeID string `json:"envelope_id"`
			Type       string `json:"type"`
		}
		_ = json.Unmarshal(raw, &env)
		ack(env.EnvelopeID)
		a.log.Warn("acknowledged a slack envelope that could not be decoded; it is not acted on", "envelope", env.EnvelopeID, "type", env.Type, "err", cause)
	case socketmode.EventTypeEventsAPI:
		if ev.Request == nil {
			return false
		}
		id := ev.Request.EnvelopeID
		e, ok := ev.Data.(slackevents.EventsAPIEvent)
		if !ok {
			ack(id)
			a.log.Warn("acknowledged a slack events_api envelope of an unknown shape", "envelope", id)
			return false
		}
		retried := ev.Request.RetryAttempt > 0
		if a.queueEventsAPI(e, retried, q, newAcker(a.ackWithin, func() { ack(id) })) {
			return true
		}
	case socketmode.EventTypeInteractive:
		if ev.Request == nil {
			return false
		}
		id := ev.Request.EnvelopeID
		cb, ok := ev.Data.(slackapi.InteractionCallback)
		if !ok {
			ack(id)
			a.log.Warn("acknowledged a slack interactive envelope of an unknown shape", "envelope", id)
			return false
		}
		retried := ev.Request.RetryAttempt > 0
		q.push(func(ctx context.Context) []adapters.Event { return a.fromClick(ctx, cb, retried) }, newAcker(a.ackWithin, func() { ack(id) }))
	case socketmode.EventTypeSlashCommand:
		if ev.Request != nil {
			ack(ev.Request.EnvelopeID)
		}
		a.log.Info("acknowledged a slash command; countersign has none (mention the bot instead)")
	default:
		if ev.Request != nil {
			ack(ev.Request.EnvelopeID)
		}
		a.log.Debug("slack socket mode event", "type", ev.Type)
	}
	return false
}

// queueEventsAPI queues an Events API event for the worker, which
// acknowledges it through ak (an event not queued is acknowledged at
// once). It reports true when the event ends the input (the app was
// uninstalled, its tokens revoked).
func (a *Adapter) queueEventsAPI(e slackevents.EventsAPIEvent, retried bool, q *queue, ak *acker) (end bool) {
	queued := false
	defer func() {
		if !queued {
			ak.done()
		}
	}()
	if e.Type != slackevents.CallbackEvent {
		a.log.Debug("ignored a slack events api envelope", "type", e.Type)
		return false
	}
	push := func(j job) {
		q.push(j, ak)
		queued = true
	}
	team := e.TeamID
	switch in := e.InnerEvent.Data.(type) {
	case *slackevents.AppMentionEvent:
		m := message{kind: "app_mention", team: team, userTeam: in.UserTeam, user: in.User, botID: in.BotID, text: in.Text, ts: in.TimeStamp, threadTS: in.ThreadTimeStamp, channel: in.Channel}
		push(func(ctx context.Context) []adapters.Event { return a.fromMessage(ctx, m, retried) })
	case *slackevents.MessageEvent:
		m := message{kind: "message", team: team, userTeam: in.UserTeam, user: in.User, botID: in.BotID, subtype: in.SubType, text: in.Text, ts: in.TimeStamp, threadTS: in.ThreadTimeStamp, channel: in.Channel, channelType: in.ChannelType}
		push(func(ctx context.Context) []adapters.Event { return a.fromMessage(ctx, m, retried) })
	case *slackevents.AgentSessionStoppedEvent:
		st := *in
		a.features.halted(st.Channel, st.StreamingMessageTimestamps)
		push(func(ctx context.Context) []adapters.Event { return a.fromStop(ctx, team, st, retried) })
	case *slackevents.AppHomeOpenedEvent:
		h := *in
		push(func(ctx context.Context) []adapters.Event { return a.fromHome(ctx, team, h, retried) }) // home.go
	case *slackevents.AppUninstalledEvent, *slackevents.TokensRevokedEvent:
		a.log.Warn("the slack app was uninstalled or its tokens revoked; the slack adapter stops", "event", e.InnerEvent.Type)
		return true
	default:
		a.log.Debug("ignored a slack event", "event", e.InnerEvent.Type)
	}
	return false
}

// slogWriter passes slack-go's log lines to slog at debug level.
type slogWriter struct{ log *slog.Logger }

func (w slogWriter) Output(_ int, s string) error {
	w.log.Debug(strings.TrimSpace(s), "from", "slack-go")
	return nil
}
