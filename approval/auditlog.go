package approval

import (
	"context"
	"log/slog"
	"os"
)

// NewAuditLogger returns the default audit logger: slog's JSON handler on
// standard error. Stores use it when given no logger of their own.
func NewAuditLogger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(os.Stderr, nil))
}

// LogEvent writes e to l as one structured line, message "audit". Stores
// call it for every event they record; err, when not nil, is the reason the
// event could not be stored and the line is logged at error level.
func LogEvent(ctx context.Context, l *slog.Logger, e Event, err error) {
	if l == nil {
		return
	}
	attrs := make([]slog.Attr, 0, 12)
	attrs = append(attrs, slog.Time("event_at", e.At), slog.String("kind", string(e.Kind)))
	add := func(k, v string) {
		if v != "" {
			attrs = append(attrs, slog.String(k, v))
		}
	}
	add("actor", e.Actor)
	add("approval_id", e.ApprovalID)
	add("tool", e.Tool)
	add("operation", e.Operation)
	add("rule", e.Rule)
	add("decision", string(e.Decision))
	add("outcome", string(e.Outcome))
	add("channel", e.Channel)
	add("detail", e.Detail)
	add("risk", e.Risk)
	add("llm_level", e.LLMLevel)
	if e.DurationMS != 0 {
		attrs = append(attrs, slog.Int64("duration_ms", e.DurationMS))
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
		l.LogAttrs(ctx, slog.LevelError, "audit write failed", attrs...)
		return
	}
	l.LogAttrs(ctx, slog.LevelInfo, "audit", attrs...)
}
