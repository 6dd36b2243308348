package auditsink

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/countersign/countersign/approval"
)

func TestFileContract(t *testing.T) {
	testContract(t, func(t *testing.T) Sink {
		f, err := OpenFile(FileOptions{Path: filepath.Join(t.TempDir(), "logs", "audit.jsonl")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	})
}

// TestFileRotates: past MaxSize the file becomes path.1, the backups shift,
// the oldest beyond MaxBackups goes, and reading returns what is kept, in
// order.
func TestFileRotates(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	line, _ := jsonLine(numbered(10))
	const perFile = 3
	f, err := OpenFile(FileOptions{Path: path, MaxSize: int64(perFile * len(line)), MaxBackups: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var all []approval.Event
	for i := 10; i < 21; i++ { // 11 events of the same length: 4 files' worth
		all = append(all, numbered(i))
		if err := f.Write(ctx, numbered(i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		file  string
		lines int
	}{{path, 2}, {path + ".1", 3}, {path + ".2", 3}} {
		data, err := os.ReadFile(tt.file)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(string(data), "\n"); got != tt.lines {
			t.Errorf("%s holds %d lines, want %d", filepath.Base(tt.file), got, tt.lines)
		}
	}
	if _, err := os.Stat(path + ".3"); !os.IsNotExist(err) {
		t.Errorf("a third backup exists (err %v); max_backups is 2", err)
	}
	got, err := f.Read(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(all[3:], got, eventOpts); diff != "" {
		t.Errorf("Read after rotation (-want +got):\n%s", diff)
	}

	// Reopened, the sink goes on where it was: the size counts.
	f.Close()
	f, err = OpenFile(FileOptions{Path: path, MaxSize: int64(perFile * len(line)), MaxBackups: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := 21; i < 23; i++ {
		if err := f.Write(ctx, numbered(i)); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(path)
	if got := strings.Count(string(data), "\n"); got != 1 {
		t.Errorf("after reopening and two more events the file holds %d lines, want 1 (rotated at 3)", got)
	}
}

// TestFileRepairsATornLine: a file a crash left without its last newline
// gets one before the next event, so that event is a line of its own.
func TestFileRepairsATornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	first, _ := jsonLine(numbered(1))
	if err := os.WriteFile(path, first[:len(first)-1], 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(FileOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Write(context.Background(), numbered(2)); err != nil {
		t.Fatal(err)
	}
	got, err := f.Read(context.Background(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]approval.Event{numbered(1), numbered(2)}, got, eventOpts); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestFileFailsWhenTheDiskIsFull: a write the disk refuses is an error,
// not a silent loss (/dev/full answers every write with ENOSPC).
func TestFileFailsWhenTheDiskIsFull(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full here")
	}
	f, err := OpenFile(FileOptions{Path: "/dev/full", MaxSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for range 2 { // the second would rotate a regular file of MaxSize 1
		if err := f.Write(context.Background(), numbered(1)); err == nil || !strings.Contains(err.Error(), "no space") {
			t.Fatalf("Write to /dev/full = %v, want no space left", err)
		}
	}
	if _, err := os.Stat("/dev/full.1"); !os.IsNotExist(err) {
		t.Fatalf("a device was rotated: %v", err)
	}
}

// TestFileFollow: Follow shows the last events, then each new one, across
// a rotation.
func TestFileFollow(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	line, _ := jsonLine(numbered(10))
	f, err := OpenFile(FileOptions{Path: path, MaxSize: int64(2 * len(line)), MaxBackups: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := 10; i < 13; i++ {
		if err := f.Write(ctx, numbered(i)); err != nil {
			t.Fatal(err)
		}
	}
	other := numbered(13)
	other.Channel = "C2"
	if err := f.Write(ctx, other); err != nil {
		t.Fatal(err)
	}
	ch := collect(t, FileLog{Path: path, PollInterval: 5 * time.Millisecond}, Filter{Channel: "C1", Last: 2})
	expect(t, ch, numbered(11), numbered(12))
	for i := 14; i < 19; i++ { // rotates twice more
		if err := f.Write(ctx, numbered(i)); err != nil {
			t.Fatal(err)
		}
		expect(t, ch, numbered(i))
	}
	select {
	case e := <-ch:
		t.Fatalf("an unexpected event was followed: %+v", e)
	default:
	}
}
