package auditsink

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/countersign/countersign/approval"
)

// FileOptions configure a File.
type FileOptions struct {
	// Path is the current file; its backups are Path.1 (the newest) to
	// Path.MaxBackups (the oldest).
	Path string
	// MaxSize is the size in bytes past which the file is rotated before
	// the next event is written (default 100 MiB).
	MaxSize int64
	// MaxBackups is how many rotated files are kept (default 10).
	MaxBackups int
	// PollInterval is how often Follow looks for new lines (default 500ms).
	PollInterval time.Duration
}

// File is a sink that appends each event as one JSON line to a file, and
// syncs it to disk before Write returns. When the file would grow past
// MaxSize it is renamed Path.1 (Path.1 becomes Path.2, and so on; the
// oldest beyond MaxBackups is removed) and a new file is started.
//
// The rotation is this package's own rather than lumberjack's: it syncs
// every line, rotates at a size in bytes, and names backups so that a
// reader finds them in order. One process writes a file: give each replica
// its own path.
type File struct {
	FileLog
	maxSize    int64
	maxBackups int

	mu     sync.Mutex
	f      *os.File // nil once closed
	size   int64
	rotate bool // a regular file: rotated by size (a device such as /dev/stdout is not)
}

// Interface guards.
var (
	_ Sink     = (*File)(nil)
	_ Follower = (*File)(nil)
	_ Follower = FileLog{}
)

// OpenFile opens (creating it and its folder when missing) the file sink.
func OpenFile(o FileOptions) (*File, error) {
	if o.Path == "" {
		return nil, errors.New("no path")
	}
	if o.MaxSize <= 0 {
		o.MaxSize = 100 << 20
	}
	if o.MaxBackups <= 0 {
		o.MaxBackups = 10
	}
	if err := os.MkdirAll(filepath.Dir(o.Path), 0o700); err != nil {
		return nil, fmt.Errorf("create the folder of %s: %w", o.Path, err)
	}
	s := &File{FileLog: FileLog{Path: o.Path, PollInterval: o.PollInterval}, maxSize: o.MaxSize, maxBackups: o.MaxBackups}
	if err := s.open(); err != nil {
		return nil, err
	}
	return s, nil
}

// open opens Path for appending. A file a crash left without its final
// newline gets one, so the next event starts a line of its own.
func (s *File) open() error {
	f, err := os.OpenFile(s.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open audit file: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("open audit file: %w", err)
	}
	s.f, s.size, s.rotate = f, st.Size(), st.Mode().IsRegular()
	if s.rotate && s.size > 0 && !endsInNewline(s.Path, s.size) {
		if _, err := f.Write([]byte("\n")); err != nil {
			return fmt.Errorf("write audit file: %w", err)
		}
		s.size++
	}
	return nil
}

func endsInNewline(path string, size int64) bool {
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	b := make([]byte, 1)
	_, err = f.ReadAt(b, size-1)
	return err != nil || b[0] == '\n'
}

// Write appends e as one line and syncs the file.
func (s *File) Write(_ context.Context, e approval.Event) error {
	line, err := jsonLine(e)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return ErrClosed
	}
	if s.rotate {
		if err := s.samePathLocked(); err != nil {
			return err
		}
	}
	if s.rotate && s.size > 0 && s.size+int64(len(line)) > s.maxSize {
		if err := s.rotateLocked(); err != nil {
			return err
		}
	}
	n, err := s.f.Write(line)
	s.size += int64(n)
	if err == nil {
		err = s.f.Sync()
	}
	if err != nil {
		return fmt.Errorf("write audit file: %w", err)
	}
	return nil
}

// samePathLocked checks that Path still names the open file before a
// write. A file whose name is gone still takes writes, and they would
// reach no reader: when its folder has disappeared the write fails (fail
// closed; the folder is not made again behind the operator's back), and
// when only the file was removed or replaced, it is opened again at Path.
func (s *File) samePathLocked() error {
	st, err := os.Stat(s.Path)
	if err == nil {
		if cur, err := s.f.Stat(); err == nil && os.SameFile(cur, st) {
			return nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("write audit file: check %s: %w", s.Path, err)
	} else if _, derr := os.Stat(filepath.Dir(s.Path)); derr != nil {
		return fmt.Errorf("write audit file: its folder %s is gone (%w), so the event cannot be kept: make the folder again (the next event then starts the file anew) or point the audit file elsewhere and restart", filepath.Dir(s.Path), derr)
	}
	old := s.f
	if err := s.open(); err != nil {
		if s.f != old {
			_ = s.f.Close()
		}
		s.f = old
		return fmt.Errorf("write audit file: %s was removed or replaced, and opening it again failed: %w", s.Path, err)
	}
	_ = old.Close() // its name is gone: nothing more reaches a reader through it
	return nil
}

// jsonLine is e as the file keeps it: one JSON object and a newline.
func jsonLine(e approval.Event) ([]byte, error) {
	line, err := json.Marshal(&e)
	if err != nil {
		return nil, fmt.Errorf("encode audit event: %w", err)
	}
	return append(line, '\n'), nil
}

// rotateLocked renames the current file Path.1, shifting the backups up
// and dropping the oldest, and starts a new file.
func (s *File) rotateLocked() error {
	if err := s.f.Close(); err != nil {
		return fmt.Errorf("rotate audit file: %w", err)
	}
	s.f = nil
	err := os.Remove(backup(s.Path, s.maxBackups))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("rotate audit file: %w", err)
	}
	for i := s.maxBackups - 1; i >= 1; i-- {
		err := os.Rename(backup(s.Path, i), backup(s.Path, i+1))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("rotate audit file: %w", err)
		}
	}
	if err := os.Rename(s.Path, backup(s.Path, 1)); err != nil {
		return fmt.Errorf("rotate audit file: %w", err)
	}
	return s.open()
}

func backup(path string, i int) string { return path + "." + strconv.Itoa(i) }

// Close closes the file.
func (s *File) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

// FileLog reads what a File wrote: its backups, oldest first, then the
// current file. It needs no write access.
type FileLog struct {
	Path         string
	PollInterval time.Duration // Follow's (default 500ms)
}

// Read returns the matching events of every file, oldest first.
func (l FileLog) Read(ctx context.Context, f Filter) ([]approval.Event, error) {
	var out []approval.Event
	err := l.scanAll(ctx, f, func(e approval.Event) { out = append(out, e) })
	if err != nil {
		return nil, err
	}
	return keepLast(out, f.Last), nil
}

// scanAll calls fn with the matching events of the backups and the
// current file, in order. A missing file is no events.
func (l FileLog) scanAll(ctx context.Context, f Filter, fn func(approval.Event)) error {
	var paths []string
	for i := 1; ; i++ {
		if _, err := os.Stat(backup(l.Path, i)); err != nil {
			break
		}
		paths = append(paths, backup(l.Path, i))
	}
	for i := len(paths) - 1; i >= 0; i-- {
		if err := scanFile(ctx, paths[i], f, fn); err != nil {
			return err
		}
	}
	return scanFile(ctx, l.Path, f, fn)
}

func scanFile(ctx context.Context, path string, f Filter, fn func(approval.Event)) error {
	file, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read audit file: %w", err)
	}
	defer file.Close()
	lr := lineReader{r: file, path: path}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		e, ok, err := lr.next()
		if err != nil || !ok {
			return err
		}
		if f.Match(e) {
			fn(e)
		}
	}
}

// lineReader reads whole JSON lines; a last line without its newline (one
// being written) is kept for the next call.
type lineReader struct {
	r       io.Reader
	br      *bufio.Reader
	partial []byte
	path    string
	line    int
}

// next returns the next complete event, or ok=false at the end for now.
func (lr *lineReader) next() (approval.Event, bool, error) {
	if lr.br == nil {
		lr.br = bufio.NewReaderSize(lr.r, 64<<10)
	}
	for {
		chunk, err := lr.br.ReadSlice('\n')
		lr.partial = append(lr.partial, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			return approval.Event{}, false, nil
		}
		if err != nil {
			return approval.Event{}, false, fmt.Errorf("read audit file: %w", err)
		}
		line := bytes.TrimSpace(lr.partial)
		lr.partial = lr.partial[:0]
		lr.line++
		if len(line) == 0 {
			continue
		}
		var e approval.Event
		if err := json.Unmarshal(line, &e); err != nil {
			return e, false, fmt.Errorf("audit file %s line %d: not an audit event: %w", lr.path, lr.line, err)
		}
		return e, true, nil
	}
}

// Follow calls fn with the last f.Last matching events (all when 0), then
// with each matching event written later, following the file across
// rotations, until ctx ends.
func (l FileLog) Follow(ctx context.Context, f Filter, fn func(approval.Event) error) error {
	interval := l.PollInterval
	if interval <= 0 {
		interval = 500 * time.Millisecond
	}
	// The current file is opened first and read to its end as part of the
	// backlog, so that nothing written meanwhile is missed or repeated.
	cur, err := os.Open(l.Path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read audit file: %w", err)
	}
	defer func() {
		if cur != nil {
			cur.Close()
		}
	}()
	var backlog []approval.Event
	keep := func(e approval.Event) { backlog = append(backlog, e) }
	for i := l.backups(); i >= 1; i-- {
		if err := scanFile(ctx, backup(l.Path, i), f, keep); err != nil {
			return err
		}
	}
	var lr *lineReader
	if cur != nil {
		lr = &lineReader{r: cur, path: l.Path}
		if err := drain(lr, f, keep); err != nil {
			return err
		}
	}
	for _, e := range keepLast(backlog, f.Last) {
		if err := fn(e); err != nil {
			return err
		}
	}
	var ferr error // the first error fn returned
	emit := func(e approval.Event) {
		if ferr == nil {
			ferr = fn(e)
		}
	}
	follow := func(lr *lineReader) error {
		if err := drain(lr, f, emit); err != nil {
			return err
		}
		return ferr
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if lr != nil {
			if err := follow(lr); err != nil {
				return err
			}
		}
		// Rotated (or created): finish the old file, then start the new one.
		st, err := os.Stat(l.Path)
		if err != nil {
			continue
		}
		if cur != nil {
			if old, err := cur.Stat(); err == nil && os.SameFile(old, st) {
				continue
			}
			if err := follow(lr); err != nil {
				return err
			}
			cur.Close()
			cur = nil
		}
		if cur, err = os.Open(l.Path); err != nil {
			cur = nil
			return fmt.Errorf("read audit file: %w", err)
		}
		lr = &lineReader{r: cur, path: l.Path}
		if err := follow(lr); err != nil {
			return err
		}
	}
}

func (l FileLog) backups() int {
	n := 0
	for {
		if _, err := os.Stat(backup(l.Path, n+1)); err != nil {
			return n
		}
		n++
	}
}

// drain reads every complete line there is now.
func drain(lr *lineReader, f Filter, fn func(approval.Event)) error {
	for {
		e, ok, err := lr.next()
		if err != nil || !ok {
			return err
		}
		if f.Match(e) {
			fn(e)
		}
	}
}
