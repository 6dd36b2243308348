package auditsink_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/approvaltest"
	"github.com/countersign/countersign/approval/auditsink"
	"github.com/countersign/countersign/approval/memstore"
)

func quiet() *slog.Logger { return slog.New(slog.NewJSONHandler(io.Discard, nil)) }

// TestWrappedStoreContract: a wrapped store is still an approval.Store,
// with the stream and a file, and with the file alone (AuditLog then reads
// the file).
func TestWrappedStoreContract(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(map[bool]string{true: "stream and file", false: "file only"}[stream], func(t *testing.T) {
			var (
				mu     sync.Mutex
				stores = map[string]approval.Store{}
			)
			approvaltest.Run(t, func(t *testing.T, ns string) approval.Store {
				mu.Lock()
				defer mu.Unlock()
				if s, ok := stores[ns]; ok {
					return s
				}
				inner := memstore.New(memstore.Options{Logger: quiet()})
				f, err := auditsink.OpenFile(auditsink.FileOptions{Path: filepath.Join(t.TempDir(), "audit.jsonl")})
				if err != nil {
					t.Fatal(err)
				}
				var sinks []auditsink.Configured
				if stream {
					sinks = append(sinks, auditsink.Configured{Name: "stream", Sink: auditsink.Stream(inner, 0), Required: true})
				}
				sinks = append(sinks, auditsink.Configured{Name: "file", Sink: f, Required: true})
				s := auditsink.Wrap(inner, sinks, quiet())
				stores[ns] = s
				t.Cleanup(func() { s.Close() })
				return s
			})
		})
	}
}

// fakeSink records what it is given, or fails every write.
type fakeSink struct {
	mu     sync.Mutex
	events []approval.Event
	err    error
}

func (f *fakeSink) Write(_ context.Context, e approval.Event) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	f.events = append(f.events, e)
	return nil
}

func (f *fakeSink) Read(context.Context, auditsink.Filter) ([]approval.Event, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]approval.Event(nil), f.events...), nil
}

func (f *fakeSink) Close() error { return nil }

// TestWrapFailsClosed: the Audit call fails exactly when a required sink
// (or the stream) cannot write; a best-effort failure is logged and the
// others still receive the event.
func TestWrapFailsClosed(t *testing.T) {
	broken := errors.New("disk on fire")
	tests := []struct {
		name                 string
		streamUp             bool
		fileErr, mysqlErr    error
		fileReq, mysqlReq    bool
		wantErr              bool
		wantLog, wantNotLogs string
	}{
		{name: "all write", streamUp: true, fileReq: true, mysqlReq: true},
		{name: "required file fails", streamUp: true, fileErr: broken, fileReq: true, wantErr: true, wantLog: "audit write failed"},
		{name: "required mysql fails", streamUp: true, mysqlErr: broken, mysqlReq: true, fileReq: true, wantErr: true},
		{name: "best-effort file fails", streamUp: true, fileErr: broken, wantLog: "best-effort audit sink failed"},
		{name: "best-effort both fail", streamUp: true, fileErr: broken, mysqlErr: broken, wantLog: "disk on fire"},
		{name: "stream down, sinks fine", streamUp: false, fileReq: true, mysqlReq: true, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inner := memstore.New(memstore.Options{Logger: quiet()})
			if !tt.streamUp {
				inner.Close() // every call fails from now on
			}
			file, mysql := &fakeSink{err: tt.fileErr}, &fakeSink{err: tt.mysqlErr}
			var logs bytes.Buffer
			s := auditsink.Wrap(inner, []auditsink.Configured{
				{Name: "stream", Sink: auditsink.Stream(inner, 0), Required: true},
				{Name: "file", Sink: file, Required: tt.fileReq},
				{Name: "mysql", Sink: mysql, Required: tt.mysqlReq},
			}, slog.New(slog.NewJSONHandler(&logs, nil)))
			err := s.Audit(context.Background(), approval.Event{Kind: approval.KindCard, ApprovalID: "a1"})
			if (err != nil) != tt.wantErr {
				t.Fatalf("Audit = %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr && tt.fileErr != nil && !errors.Is(err, broken) {
				t.Errorf("the error does not wrap the sink's: %v", err)
			}
			for name, sink := range map[string]*fakeSink{"file": file, "mysql": mysql} {
				if sink.err == nil && len(sink.events) != 1 {
					t.Errorf("the %s sink got %d events, want 1 (every sink gets every event)", name, len(sink.events))
				}
			}
			if !strings.Contains(logs.String(), tt.wantLog) {
				t.Errorf("the log lacks %q:\n%s", tt.wantLog, logs.String())
			}
		})
	}
}

// TestWrapSinksAgreeOnTheTime: an event without a time gets one before it
// is fanned out, the same in every sink.
func TestWrapSinksAgreeOnTheTime(t *testing.T) {
	a, b := &fakeSink{}, &fakeSink{}
	s := auditsink.Wrap(memstore.New(memstore.Options{Logger: quiet()}), []auditsink.Configured{
		{Name: "a", Sink: a, Required: true}, {Name: "b", Sink: b, Required: true},
	}, quiet())
	before := time.Now()
	if err := s.Audit(context.Background(), approval.Event{Kind: approval.KindExpiry}); err != nil {
		t.Fatal(err)
	}
	if at := a.events[0].At; at.Before(before) || !at.Equal(b.events[0].At) {
		t.Errorf("times %v and %v, want equal and after %v", at, b.events[0].At, before)
	}
}

// TestWrapKeepsDedupe: a wrapped store still dedupes chat events across
// replicas (approval.Deduper is part of approval.Store): the wrapper
// reaches the store's FirstDelivery.
func TestWrapKeepsDedupe(t *testing.T) {
	sinks := []auditsink.Configured{{Name: "file", Sink: &fakeSink{}, Required: true}}
	s := auditsink.Wrap(memstore.New(memstore.Options{Logger: quiet()}), sinks, quiet())
	ctx := context.Background()
	if first, err := s.FirstDelivery(ctx, "slack:Ev1", time.Minute); err != nil || !first {
		t.Fatalf("FirstDelivery = %v, %v", first, err)
	}
	if first, _ := s.FirstDelivery(ctx, "slack:Ev1", time.Minute); first {
		t.Error("a redelivery was first again: the wrapper does not reach the store")
	}
}

// TestWrapFailsClosedWhenTheAuditFolderIsGone: a required audit file whose
// folder was removed under the running bot takes no more writes that no
// reader would see: the store's Audit fails, so the operation it describes
// does not run, and the folder is not made again behind the operator's
// back. Once the operator makes it again, the next event starts a new file.
func TestWrapFailsClosedWhenTheAuditFolderIsGone(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "logs")
	path := filepath.Join(dir, "audit.jsonl")
	f, err := auditsink.OpenFile(auditsink.FileOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	inner := memstore.New(memstore.Options{Logger: quiet()})
	s := auditsink.Wrap(inner, []auditsink.Configured{{Name: "file", Sink: f, Required: true}}, quiet())
	defer s.Close()
	ev := func(id string) approval.Event { return approval.Event{Kind: approval.KindCard, ApprovalID: id} }
	if err := s.Audit(ctx, ev("before")); err != nil {
		t.Fatalf("Audit with the folder there: %v", err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	err = s.Audit(ctx, ev("gone"))
	if err == nil || !strings.Contains(err.Error(), "folder") {
		t.Fatalf("Audit with the folder gone = %v, want an error naming the folder", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the folder was made again (stat: %v)", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := s.Audit(ctx, ev("after")); err != nil {
		t.Fatalf("Audit once the folder is back: %v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(data); !strings.Contains(got, `"after"`) || strings.Contains(got, `"gone"`) {
		t.Errorf("the new file holds %q, want the event after the folder came back and not the refused one", got)
	}
}

// TestFileReopensARemovedFile: a file removed (or moved away) while its
// folder stays is opened again at its path, so later events reach a reader
// instead of a file with no name.
func TestFileReopensARemovedFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	f, err := auditsink.OpenFile(auditsink.FileOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ev := func(id string) approval.Event { return approval.Event{Kind: approval.KindCard, ApprovalID: id} }
	if err := f.Write(ctx, ev("one")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, path+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := f.Write(ctx, ev("two")); err != nil {
		t.Fatalf("Write after the file was moved away: %v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no file at the path after a write: %v", err)
	}
	if !strings.Contains(string(data), `"two"`) {
		t.Errorf("the file at the path holds %q, want the event written after the move", data)
	}
}

// nilStore has no store behind it: any method that reaches it panics.
type nilStore struct{ approval.Store }

// TestWrapForwardsEveryMethod: every method of approval.Store but the
// audit log's own (Audit, AuditLog: the sinks') reaches the wrapped store,
// the guarantees the bot relies on among them (the count of approvals, the
// inbox journal, the MCP pins), so that an audit sink can switch none off.
func TestWrapForwardsEveryMethod(t *testing.T) {
	s := auditsink.Wrap(nilStore{}, []auditsink.Configured{{Name: "file", Sink: &fakeSink{}, Required: true}}, quiet())
	ownAudit := map[string]bool{"Audit": true, "AuditLog": true}
	reached := 0
	approvaltest.CallEach(t, s, func(string) {}, func(name string, panicked any) {
		err, _ := panicked.(error)
		switch {
		case ownAudit[name] && panicked != nil:
			t.Errorf("%s reached the wrapped store (%v); the sinks keep the audit log", name, panicked)
		case ownAudit[name]:
		case panicked == nil:
			t.Errorf("%s answered without asking the wrapped store", name)
		case err == nil || !strings.Contains(err.Error(), "nil pointer"):
			t.Errorf("%s panicked before it reached the wrapped store: %v", name, panicked)
		default:
			reached++
		}
	})
	if reached < 30 {
		t.Errorf("%d methods reached the wrapped store; the reflection is broken", reached)
	}
}
