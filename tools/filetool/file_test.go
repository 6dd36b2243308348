package filetool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/countersign/countersign/tools"
)

func newTool(t testing.TB, edit func(*Config)) *Tool {
	t.Helper()
	cfg := Config{Root: t.TempDir()}
	if edit != nil {
		edit(&cfg)
	}
	tool, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { tool.Close() })
	return tool
}

func call(t testing.TB, tool *Tool, raw string) tools.Result {
	t.Helper()
	return tool.Run(context.Background(), json.RawMessage(raw), tools.RunOptions{})
}

func write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func decode[T any](t testing.TB, res tools.Result) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(res.Data, &v); err != nil {
		t.Fatalf("data %s: %v", res.Data, err)
	}
	return v
}

// The fence holds with the assessor bypassed: every operation on a path
// that leaves the root is refused, and nothing outside changes.
func TestPathsOutsideTheRootAreRefused(t *testing.T) {
	tool := newTool(t, nil)
	root := tool.cfg.Root
	outside := t.TempDir()
	write(t, filepath.Join(outside, "secret"), "top secret")
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "secret-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../", filepath.Join(root, "up")); err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{
		"parent":                  "../secret",
		"dot-dot inside":          "a/../../secret",
		"absolute":                filepath.Join(outside, "secret"),
		"absolute etc":            "/etc/passwd",
		"symlink dir out":         "out/secret",
		"relative symlink up":     "up/" + filepath.Base(outside) + "/secret",
		"symlink file out (read)": "secret-link",
	}
	for name, p := range paths {
		for _, op := range []string{"read", "list", "exists", "stat", "write", "append", "mkdir", "delete"} {
			if name == "symlink file out (read)" && op == "delete" {
				continue // removing the link itself is allowed; tried below
			}
			args := map[string]any{"operation": op, "path": p}
			switch op {
			case "write", "append":
				args["content"] = "pwned"
			case "delete", "mkdir":
				args["recursive"] = true
			}
			raw, _ := json.Marshal(args)
			res := tool.Run(context.Background(), raw, tools.RunOptions{})
			if name == "symlink file out (read)" && (op == "exists" || op == "stat") {
				// The link itself is inside the root: it may be looked at
				// and removed; what it points to is never touched.
				continue
			}
			if name == "symlink file out (read)" && (op == "write" || op == "append" || op == "mkdir") {
				if res.Executed {
					t.Errorf("%s %s through an outward link ran: %s", op, p, res.JSON())
				}
				continue
			}
			if res.Status != tools.StatusDenied || res.Executed || !strings.Contains(res.Message, "did not run") {
				t.Errorf("%s: %s %q: got %s, want denied", name, op, p, res.JSON())
			}
		}
	}
	got, err := os.ReadFile(filepath.Join(outside, "secret"))
	if err != nil || string(got) != "top secret" {
		t.Fatalf("the file outside the root changed: %q, %v", got, err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Fatalf("something was created outside the root: %v", ents)
	}
	// The outward link itself may be deleted; its target stays.
	if res := call(t, tool, `{"operation":"delete","path":"secret-link"}`); res.Status != tools.StatusOK {
		t.Fatalf("deleting the link: %s", res.JSON())
	}
	if _, err := os.Stat(filepath.Join(outside, "secret")); err != nil {
		t.Fatalf("deleting the link removed its target: %v", err)
	}
}

func TestRead(t *testing.T) {
	tool := newTool(t, func(c *Config) { c.MaxReadBytes = 10 })
	root := tool.cfg.Root
	write(t, filepath.Join(root, "small.txt"), "hello")
	write(t, filepath.Join(root, "big.txt"), "0123456789abcdef")
	write(t, filepath.Join(root, "utf8.txt"), "123456789é") // é straddles the cap
	write(t, filepath.Join(root, "bin"), "\x89PNG\r\n\x1a\n\x00\x00")
	write(t, filepath.Join(root, "latin1"), "caf\xe9")
	if err := os.Mkdir(filepath.Join(root, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		path      string
		status    tools.Status
		content   string
		truncated bool
		note      string
		err       string
	}{
		{name: "text", path: "small.txt", status: tools.StatusOK, content: "hello"},
		{name: "capped", path: "big.txt", status: tools.StatusOK, content: "0123456789", truncated: true, note: "was 16 bytes; only the first 10"},
		{name: "capped on a character boundary", path: "utf8.txt", status: tools.StatusOK, content: "123456789", truncated: true},
		{name: "binary summarised", path: "bin", status: tools.StatusOK, note: "binary file of 10 bytes"},
		{name: "invalid utf-8 is binary", path: "latin1", status: tools.StatusOK, note: "binary"},
		{name: "directory", path: "dir", status: tools.StatusError, err: "is a directory; use list"},
		{name: "fifo does not block", path: "fifo", status: tools.StatusError, err: "fifo, not a regular file"},
		{name: "missing", path: "nope", status: tools.StatusError, err: `"nope" does not exist`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, _ := json.Marshal(map[string]string{"operation": "read", "path": tt.path})
			res := tool.Run(context.Background(), raw, tools.RunOptions{})
			if res.Status != tt.status || res.Content != tt.content || res.Truncated != tt.truncated {
				t.Fatalf("got %s", res.JSON())
			}
			if !strings.Contains(res.Note, tt.note) || !strings.Contains(res.Error, tt.err) {
				t.Errorf("note %q error %q, want %q and %q", res.Note, res.Error, tt.note, tt.err)
			}
			if strings.Contains(res.Error, root) {
				t.Errorf("the error shows the root's own path: %q", res.Error)
			}
		})
	}
	res := call(t, tool, `{"operation":"read","path":"bin"}`)
	info := decode[map[string]any](t, res)
	if info["first_bytes"] != "89 50 4e 47 0d 0a 1a 0a 00 00" || info["type"] != "image/png" {
		t.Errorf("binary summary %v", info)
	}
}

func TestList(t *testing.T) {
	tool := newTool(t, func(c *Config) { c.MaxListEntries = 3 })
	root := tool.cfg.Root
	for _, n := range []string{"c.txt", "a.txt", "b/x", "e", "d"} {
		write(t, filepath.Join(root, n), "12345")
	}
	if err := os.Symlink("a.txt", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	res := call(t, tool, `{"operation":"list","path":"."}`)
	type listing struct {
		Total   int     `json:"total"`
		Entries []entry `json:"entries"`
	}
	l := decode[listing](t, res)
	if res.Status != tools.StatusOK || l.Total != 6 || len(l.Entries) != 3 || !res.Truncated {
		t.Fatalf("got %s", res.JSON())
	}
	if !strings.Contains(res.Note, "holds 6 entries; only the first 3") {
		t.Errorf("note %q", res.Note)
	}
	want := []struct{ name, typ string }{{"a.txt", "file"}, {"b", "directory"}, {"c.txt", "file"}}
	for i, w := range want {
		e := l.Entries[i]
		if e.Name != w.name || e.Type != w.typ || e.Mode == "" || e.ModTime == "" {
			t.Errorf("entry %d = %+v, want %s %s", i, e, w.name, w.typ)
		}
	}
	if l.Entries[0].Size != 5 {
		t.Errorf("size %d, want 5", l.Entries[0].Size)
	}
	res = call(t, tool, `{"operation":"list","path":"b"}`)
	if l := decode[listing](t, res); l.Total != 1 || l.Entries[0].Name != "x" || res.Truncated {
		t.Errorf("list b: %s", res.JSON())
	}
	if res := call(t, tool, `{"operation":"list"}`); res.Status != tools.StatusOK {
		t.Errorf("list with no path should list the root: %s", res.JSON())
	}
	if res := call(t, tool, `{"operation":"list","path":"a.txt"}`); res.Status != tools.StatusError || !strings.Contains(res.Error, "not a directory") {
		t.Errorf("list of a file: %s", res.JSON())
	}
}

func TestExistsAndStat(t *testing.T) {
	tool := newTool(t, nil)
	root := tool.cfg.Root
	write(t, filepath.Join(root, "f"), "abc")
	if err := os.Symlink("f", filepath.Join(root, "l")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		raw  string
		want map[string]any
	}{
		{raw: `{"operation":"exists","path":"f"}`, want: map[string]any{"exists": true, "type": "file"}},
		{raw: `{"operation":"exists","path":"nope/x"}`, want: map[string]any{"exists": false}},
		{raw: `{"operation":"exists","path":"l"}`, want: map[string]any{"exists": true, "type": "symlink"}},
		{raw: `{"operation":"stat","path":"f"}`, want: map[string]any{"name": "f", "type": "file", "size": 3.0, "mode": "-rw-r--r--"}},
		{raw: `{"operation":"stat","path":"l"}`, want: map[string]any{"type": "symlink", "target": "f"}},
		{raw: `{"operation":"stat","path":"."}`, want: map[string]any{"type": "directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			res := call(t, tool, tt.raw)
			if res.Status != tools.StatusOK {
				t.Fatalf("got %s", res.JSON())
			}
			got := decode[map[string]any](t, res)
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v (%s)", k, got[k], v, res.Data)
				}
			}
		})
	}
}

func TestWriteAppendMkdirDelete(t *testing.T) {
	tool := newTool(t, nil)
	root := tool.cfg.Root
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			return "<" + err.Error() + ">"
		}
		return string(b)
	}
	steps := []struct {
		raw    string
		status tools.Status
		check  func() string // "" when fine
		err    string
	}{
		{raw: `{"operation":"write","path":"notes.txt","content":"one\n"}`, status: tools.StatusOK,
			check: func() string { return diff(read("notes.txt"), "one\n") }},
		{raw: `{"operation":"write","path":"notes.txt","content":"two\n"}`, status: tools.StatusOK,
			check: func() string { return diff(read("notes.txt"), "two\n") }},
		{raw: `{"operation":"append","path":"notes.txt","content":"three\n"}`, status: tools.StatusOK,
			check: func() string { return diff(read("notes.txt"), "two\nthree\n") }},
		{raw: `{"operation":"append","path":"new.log","content":"x"}`, status: tools.StatusOK,
			check: func() string { return diff(read("new.log"), "x") }},
		{raw: `{"operation":"write","path":"empty","content":""}`, status: tools.StatusOK,
			check: func() string { return diff(read("empty"), "") }},
		{raw: `{"operation":"write","path":"no/dir/f","content":"x"}`, status: tools.StatusError, err: "create it with mkdir first"},
		{raw: `{"operation":"mkdir","path":"a"}`, status: tools.StatusOK},
		{raw: `{"operation":"mkdir","path":"a"}`, status: tools.StatusError, err: `"a" already exists`},
		{raw: `{"operation":"mkdir","path":"p/q/r"}`, status: tools.StatusError, err: "does not exist"},
		{raw: `{"operation":"mkdir","path":"p/q/r","recursive":true}`, status: tools.StatusOK},
		{raw: `{"operation":"write","path":"p/q/r/f","content":"deep"}`, status: tools.StatusOK,
			check: func() string { return diff(read("p/q/r/f"), "deep") }},
		{raw: `{"operation":"write","path":"p","content":"x"}`, status: tools.StatusError, err: "is a directory"},
		{raw: `{"operation":"delete","path":"p"}`, status: tools.StatusError, err: "only with recursive: true",
			check: func() string { return diff(read("p/q/r/f"), "deep") }},
		{raw: `{"operation":"delete","path":"p","recursive":true}`, status: tools.StatusOK,
			check: func() string {
				return diff(read("p/q/r/f"), "<open "+filepath.Join(root, "p/q/r/f")+": no such file or directory>")
			}},
		{raw: `{"operation":"delete","path":"notes.txt"}`, status: tools.StatusOK,
			check: func() string {
				return diff(read("notes.txt"), "<open "+filepath.Join(root, "notes.txt")+": no such file or directory>")
			}},
		{raw: `{"operation":"delete","path":"notes.txt"}`, status: tools.StatusError, err: "does not exist"},
		{raw: `{"operation":"delete","path":".","recursive":true}`, status: tools.StatusDenied, err: "root itself"},
		{raw: `{"operation":"delete","path":"a/..","recursive":true}`, status: tools.StatusDenied, err: "root itself"},
	}
	for _, s := range steps {
		res := call(t, tool, s.raw)
		if res.Status != s.status || !strings.Contains(res.Error, s.err) {
			t.Fatalf("%s: got %s, want %s with %q", s.raw, res.JSON(), s.status, s.err)
		}
		if s.check != nil {
			if d := s.check(); d != "" {
				t.Fatalf("%s: %s", s.raw, d)
			}
		}
	}
	// No temporary files are left behind.
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		if strings.Contains(e.Name(), "countersign") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

func diff(got, want string) string {
	if got == want {
		return ""
	}
	return "content " + strconvQuote(got) + ", want " + strconvQuote(want)
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// A write replaces the file by a rename: a reader holding the old file keeps
// reading the old content whole, and the new file keeps the old mode.
func TestWriteIsAtomic(t *testing.T) {
	tool := newTool(t, nil)
	p := filepath.Join(tool.cfg.Root, "cfg")
	write(t, p, "old content")
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if res := call(t, tool, `{"operation":"write","path":"cfg","content":"new"}`); res.Status != tools.StatusOK {
		t.Fatalf("write: %s", res.JSON())
	}
	after, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(before, after) {
		t.Error("the write changed the file in place; want a new file renamed over it")
	}
	if after.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the old 0600", after.Mode().Perm())
	}
	buf := make([]byte, 64)
	n, _ := old.Read(buf)
	if string(buf[:n]) != "old content" {
		t.Errorf("a reader of the old file saw %q", buf[:n])
	}
}

func TestWriteRefusesSymlinks(t *testing.T) {
	tool := newTool(t, nil)
	root := tool.cfg.Root
	write(t, filepath.Join(root, "target"), "keep")
	if err := os.Symlink("target", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"write", "append"} {
		raw := `{"operation":"` + op + `","path":"link","content":"x"}`
		if res := call(t, tool, raw); res.Executed || !strings.Contains(res.Error, "symbolic link") {
			t.Errorf("%s through a link: %s", op, res.JSON())
		}
	}
	if b, _ := os.ReadFile(filepath.Join(root, "target")); string(b) != "keep" {
		t.Errorf("target changed to %q", b)
	}
}

func TestArgumentErrors(t *testing.T) {
	tool := newTool(t, func(c *Config) { c.MaxWriteBytes = 4 })
	tests := []struct {
		name, raw, want string
	}{
		{name: "no operation", raw: `{"path":"x"}`, want: `argument "operation": is required`},
		{name: "unknown operation", raw: `{"operation":"chmod","path":"x"}`, want: `argument "operation": "chmod" is not one of`},
		{name: "symlink is not offered", raw: `{"operation":"symlink","path":"x"}`, want: `is not one of`},
		{name: "no path", raw: `{"operation":"read"}`, want: `argument "path": is required`},
		{name: "write without content", raw: `{"operation":"write","path":"x"}`, want: `argument "content": is required`},
		{name: "content on read", raw: `{"operation":"read","path":"x","content":"y"}`, want: `argument "content": is only for write and append`},
		{name: "recursive on read", raw: `{"operation":"read","path":"x","recursive":true}`, want: `argument "recursive": is only for delete and mkdir`},
		{name: "content too big", raw: `{"operation":"write","path":"x","content":"12345"}`, want: `argument "content": is 5 bytes; the limit is 4`},
		{name: "wrong type", raw: `{"operation":"delete","path":"x","recursive":"yes"}`, want: `argument "recursive": must be true or false`},
		{name: "unknown argument", raw: `{"operation":"read","path":"x","mode":"0777"}`, want: `argument "mode": is not an argument`},
		{name: "NUL in path", raw: `{"operation":"read","path":"a\u0000b"}`, want: `argument "path": holds a NUL byte`},
		{name: "not an object", raw: `"read"`, want: "must be a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, tool, tt.raw)
			if res.Status != tools.StatusError || res.Executed || !strings.Contains(res.Error, tt.want) {
				t.Fatalf("got %s, want an unexecuted error with %q", res.JSON(), tt.want)
			}
		})
	}
	if res := call(t, tool, `{"operation":"exists","path":"x","risk_level":"low"}`); res.Status != tools.StatusOK {
		t.Errorf("risk_level broke the call: %s", res.JSON())
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	write(t, file, "")
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{name: "no root", cfg: Config{}, want: "root is required"},
		{name: "missing root", cfg: Config{Root: filepath.Join(dir, "nope")}, want: "root"},
		{name: "root is a file", cfg: Config{Root: file}, want: "not a directory"},
		{name: "negative read cap", cfg: Config{Root: dir, MaxReadBytes: -1}, want: "max_read_bytes"},
		{name: "negative list cap", cfg: Config{Root: dir, MaxListEntries: -1}, want: "max_list_entries"},
		{name: "negative write cap", cfg: Config{Root: dir, MaxWriteBytes: -1}, want: "max_write_bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New error %v, want one naming %q", err, tt.want)
			}
		})
	}
}

// A hard link to a file outside the root cannot be told from the file's
// own name, but appending through it would change that outside file: a
// file with more than one name is not appended to. A write, which renames
// a new file over this name only, leaves the other names alone.
func TestAppendRefusesHardLinkedFiles(t *testing.T) {
	tool := newTool(t, nil)
	outside := filepath.Join(t.TempDir(), "secret")
	write(t, outside, "SECRET")
	if err := os.Link(outside, filepath.Join(tool.cfg.Root, "hard")); err != nil {
		t.Skipf("no hard links across these directories: %v", err)
	}
	res := call(t, tool, `{"operation":"append","path":"hard","content":"APPENDED"}`)
	if res.Status != tools.StatusDenied || !strings.Contains(res.Error, "hard link") {
		t.Errorf("append: %s, want it refused for the hard link", res.JSON())
	}
	if res := call(t, tool, `{"operation":"write","path":"hard","content":"new"}`); res.Status != tools.StatusOK {
		t.Errorf("write: %s", res.JSON())
	}
	if b, _ := os.ReadFile(outside); string(b) != "SECRET" {
		t.Errorf("the file outside the root now holds %q", b)
	}
}

// Reading through a hard link would show a file that may live outside the
// root, or be a secret under another name: read refuses a file with more
// than one name, and reads it again once it has one.
func TestReadRefusesHardLinkedFiles(t *testing.T) {
	tool := newTool(t, nil)
	outside := filepath.Join(t.TempDir(), "secret")
	write(t, outside, "SECRET")
	if err := os.Link(outside, filepath.Join(tool.cfg.Root, "hard")); err != nil {
		t.Skipf("no hard links across these directories: %v", err)
	}
	res := call(t, tool, `{"operation":"read","path":"hard"}`)
	if res.Status != tools.StatusDenied || !strings.Contains(res.Error, "hard link") || strings.Contains(res.Content, "SECRET") {
		t.Errorf("read: %s, want it refused for the hard link", res.JSON())
	}
	if err := os.Remove(outside); err != nil {
		t.Fatal(err)
	}
	if res := call(t, tool, `{"operation":"read","path":"hard"}`); res.Status != tools.StatusOK || res.Content != "SECRET" {
		t.Errorf("read of a file with one name: %s", res.JSON())
	}
}

// A FIFO swapped in between append's check and its open must not hang the
// call waiting for a reader.
func TestAppendNeverWaitsOnAFIFO(t *testing.T) {
	tool := newTool(t, nil)
	root := tool.cfg.Root
	reg, fifo, target := filepath.Join(root, "reg"), filepath.Join(root, "fifo"), filepath.Join(root, "f")
	stop := make(chan struct{})
	var flips sync.WaitGroup
	flips.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_ = os.Remove(target)
			if i%2 == 0 {
				_ = os.WriteFile(reg, []byte("x"), 0o644)
				_ = os.Rename(reg, target)
			} else {
				_ = syscall.Mkfifo(fifo, 0o644)
				_ = os.Rename(fifo, target)
			}
		}
	})
	defer flips.Wait()
	defer close(stop)
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		done := make(chan struct{})
		go func() { call(t, tool, `{"operation":"append","path":"f","content":"y"}`); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			// Let the stuck open go: open the FIFO for reading.
			if r, err := os.OpenFile(target, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
				time.Sleep(10 * time.Millisecond)
				r.Close()
			}
			t.Fatal("append hung opening a FIFO")
		}
	}
}

// A file whose name is near the limit can be written: the temporary file's
// name stays within NAME_MAX.
func TestWriteLongName(t *testing.T) {
	tool := newTool(t, nil)
	name := strings.Repeat("a", 250)
	write(t, filepath.Join(tool.cfg.Root, name), "old")
	if res := call(t, tool, `{"operation":"write","path":"`+name+`","content":"new"}`); res.Status != tools.StatusOK {
		t.Fatalf("write: %s", res.JSON())
	}
	if b, _ := os.ReadFile(filepath.Join(tool.cfg.Root, name)); string(b) != "new" {
		t.Errorf("content %q", b)
	}
}

// A write replaces the file with a new one, which must keep the old one's
// owner: a 0600 config file of a service, rewritten by a bot running as
// root, would otherwise become unreadable to that service.
func TestWriteKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root can give a file to another owner")
	}
	tool := newTool(t, nil)
	p := filepath.Join(tool.cfg.Root, "app.conf")
	write(t, p, "old")
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(p, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if res := call(t, tool, `{"operation":"write","path":"app.conf","content":"new"}`); res.Status != tools.StatusOK {
		t.Fatalf("write: %s", res.JSON())
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != 65534 || st.Gid != 65534 || fi.Mode().Perm() != 0o600 {
		t.Errorf("owner %d:%d mode %v, want 65534:65534 and 0600", st.Uid, st.Gid, fi.Mode().Perm())
	}
}

// Opening a FIFO for reading waits for a writer: list and read of one
// return at once, refusing it.
func TestFIFOsNeverHang(t *testing.T) {
	tool := newTool(t, nil)
	if err := syscall.Mkfifo(filepath.Join(tool.cfg.Root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"read", "list", "stat", "exists"} {
		done := make(chan tools.Result, 1)
		go func() { done <- call(t, tool, `{"operation":"`+op+`","path":"fifo"}`) }()
		select {
		case res := <-done:
			if (op == "read" || op == "list") && (res.Status != tools.StatusError || !strings.Contains(res.Error, "fifo")) {
				t.Errorf("%s: %s, want it refused as a fifo", op, res.JSON())
			}
		case <-time.After(2 * time.Second):
			// Let the stuck open go: open the FIFO for writing.
			if w, err := os.OpenFile(filepath.Join(tool.cfg.Root, "fifo"), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				time.Sleep(10 * time.Millisecond)
				w.Close()
			}
			t.Fatalf("%s of a FIFO hung", op)
		}
	}
}

// The schema offers the model exactly the operations check accepts, in
// the same order.
func TestSchemaListsTheOperations(t *testing.T) {
	var schema struct {
		Properties struct {
			Operation struct {
				Enum []string `json:"enum"`
			} `json:"operation"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(newTool(t, nil).Schema(), &schema); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	if got := schema.Properties.Operation.Enum; !slices.Equal(got, operations) {
		t.Errorf("schema enum %q, check accepts %q", got, operations)
	}
}
