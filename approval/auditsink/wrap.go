package auditsink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/countersign/countersign/approval"
)

// Configured is one sink as the operator configured it.
type Configured struct {
	Name string // how errors and the log name it: "stream", "file", "mysql"
	Sink Sink
	// Required: when this sink cannot write an event, Audit fails and the
	// operation the event describes does not run. A sink that is not
	// required is best effort: its failure is logged and nothing else.
	Required bool
}

// Wrap returns store with its audit log replaced by sinks: Audit writes each
// event to every sink at once and fails when a required one fails (the
// caller then does not run the operation, as approval.Auditor says);
// AuditLog reads the first sink. Include Stream(store, …) among the sinks to
// keep the store's own stream. Everything else goes to store unchanged.
//
// log receives a line for each best-effort failure, an error line for each
// event a required sink failed to keep, and, when no sink is the store's
// stream (which logs events itself), the "audit" line of every event. Wrap panics when sinks is empty: the caller validates that.
func Wrap(store approval.Store, sinks []Configured, log *slog.Logger) approval.Store {
	if len(sinks) == 0 {
		panic("auditsink.Wrap: no sinks")
	}
	w := &Store{Store: store, sinks: sinks, log: log, now: time.Now, logEvents: true}
	for _, s := range sinks {
		if _, ok := s.Sink.(*streamSink); ok {
			w.logEvents = false
		}
	}
	return w
}

// Store is what Wrap returns.
type Store struct {
	approval.Store
	sinks     []Configured
	log       *slog.Logger
	now       func() time.Time
	logEvents bool
}

var _ approval.Store = (*Store)(nil)

// Audit writes e to every sink, concurrently, and returns once all have
// answered: nil when every required sink stored it.
func (s *Store) Audit(ctx context.Context, e approval.Event) error {
	if e.At.IsZero() {
		e.At = s.now()
	}
	errs := make([]error, len(s.sinks))
	var wg sync.WaitGroup
	for i, c := range s.sinks {
		wg.Go(func() { errs[i] = c.Sink.Write(ctx, e) })
	}
	wg.Wait()
	var failed []error
	for i, c := range s.sinks {
		switch err := errs[i]; {
		case err == nil:
		case c.Required:
			failed = append(failed, fmt.Errorf("audit sink %s: %w", c.Name, err))
		default:
			if s.log != nil {
				s.log.WarnContext(ctx, "best-effort audit sink failed", "sink", c.Name,
					"kind", string(e.Kind), "approval_id", e.ApprovalID, "error", err.Error())
			}
		}
	}
	err := errors.Join(failed...)
	if err != nil || s.logEvents {
		approval.LogEvent(ctx, s.log, e, err)
	}
	if err != nil {
		return fmt.Errorf("audit %s: %w", e.Kind, err)
	}
	return nil
}

// AuditLog returns up to n of the most recent events, newest last, from the
// first sink.
func (s *Store) AuditLog(ctx context.Context, n int) ([]approval.Event, error) {
	if n <= 0 {
		return nil, nil
	}
	return s.sinks[0].Sink.Read(ctx, Filter{Last: n})
}

// Close closes every sink but the stream, then the wrapped store.
func (s *Store) Close() error {
	errs := make([]error, 0, len(s.sinks)+1)
	for _, c := range s.sinks {
		errs = append(errs, c.Sink.Close())
	}
	return errors.Join(append(errs, s.Store.Close())...)
}

// Stream is the store's own audit stream (Redis, or memory) as a sink:
// Write is store.Audit, and Read scans the newest max events of the stream
// (the stream is capped: store.audit_max_len). Closing it closes nothing;
// the store is closed by its owner.
func Stream(store approval.Auditor, max int) Sink {
	if max <= 0 {
		max = DefaultStreamScan
	}
	return &streamSink{a: store, max: max}
}

// DefaultStreamScan is how many events of the stream Read scans when
// Stream is given no cap: the store's default cap.
const DefaultStreamScan = 100000

type streamSink struct {
	a   approval.Auditor
	max int
}

func (s *streamSink) Write(ctx context.Context, e approval.Event) error { return s.a.Audit(ctx, e) }

func (s *streamSink) Read(ctx context.Context, f Filter) ([]approval.Event, error) {
	n := s.max
	if f == (Filter{Last: f.Last}) && f.Last > 0 {
		n = f.Last // no condition: only the last ones are needed
	}
	all, err := s.a.AuditLog(ctx, n)
	if err != nil {
		return nil, err
	}
	out := all[:0:0]
	for _, e := range all {
		if f.Match(e) {
			out = append(out, e)
		}
	}
	return keepLast(out, f.Last), nil
}

func (s *streamSink) Close() error { return nil }
