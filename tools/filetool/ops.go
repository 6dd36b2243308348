package filetool

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/countersign/countersign/tools"
)

// sniffBytes is how much of a file decides whether it is text.
const sniffBytes = 8 << 10

func (t *Tool) read(o op) tools.Result {
	// O_NONBLOCK: opening a FIFO must not wait for a writer; the type is
	// checked on the open file, so a swap after a Stat cannot fool it.
	f, err := t.root.OpenFile(o.name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return o.before(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return o.before(err)
	}
	switch {
	case fi.IsDir():
		return *invalid(&tools.ArgError{Arg: "path", Problem: fmt.Sprintf("%q is a directory; use list", o.shown)})
	case !fi.Mode().IsRegular():
		return *invalid(&tools.ArgError{Arg: "path", Problem: fmt.Sprintf("%q is a %s, not a regular file", o.shown, typeName(fi.Mode()))})
	}
	if bad := o.oneName(fi, "read"); bad != nil {
		return *bad
	}
	buf := make([]byte, min(fi.Size(), t.cfg.MaxReadBytes)+1)
	n, err := io.ReadFull(io.LimitReader(f, t.cfg.MaxReadBytes+1), buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return o.after(err)
	}
	buf = buf[:n]
	truncated := int64(n) > t.cfg.MaxReadBytes
	if truncated {
		buf = buf[:t.cfg.MaxReadBytes]
	}
	size := max(fi.Size(), int64(len(buf)))
	if tools.LooksBinary(buf[:min(len(buf), sniffBytes)], truncated || len(buf) > sniffBytes) {
		return tools.Result{
			Status:   tools.StatusOK,
			Executed: true,
			Data: data(map[string]any{
				"path": o.shown, "binary": true, "size": size,
				"type": http.DetectContentType(buf), "first_bytes": tools.HexPrefix(buf, 32),
			}),
			Note: fmt.Sprintf("%q is a binary file of %s bytes; its content is not shown as text", o.shown, tools.FormatCount(size)),
		}
	}
	res := tools.Result{Status: tools.StatusOK, Executed: true, Content: string(buf)}
	if truncated {
		res.Content = string(tools.TrimPartialRune(buf))
		res.Truncated = true
		res.Note = tools.TruncationNote(o.shown, size, len(res.Content))
	}
	return res
}

// maxDirEntries bounds the entries a list sorts; beyond it they are counted.
const maxDirEntries = 100000

func (t *Tool) list(o op) tools.Result {
	// O_DIRECTORY: anything else fails at once; opening a FIFO to read
	// would wait for a writer.
	f, err := t.root.OpenFile(o.name, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ENOTDIR) && !escapes(err) {
		return *invalid(&tools.ArgError{Arg: "path", Problem: fmt.Sprintf("%q is not a directory; use stat or read", o.shown)})
	}
	if err != nil {
		return o.before(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return o.before(err)
	}
	if !fi.IsDir() {
		return *invalid(&tools.ArgError{Arg: "path", Problem: fmt.Sprintf("%q is not a directory; use stat or read", o.shown)})
	}
	var names []string
	total := 0
	for {
		batch, err := f.Readdirnames(1024)
		total += len(batch)
		if room := maxDirEntries - len(names); room > 0 {
			names = append(names, batch[:min(room, len(batch))]...)
		}
		if errors.Is(err, io.EOF) || len(batch) == 0 {
			break
		}
		if err != nil {
			return o.after(err)
		}
	}
	slices.Sort(names)
	shown := names[:min(len(names), t.cfg.MaxListEntries)]
	entries := make([]entry, 0, len(shown))
	for _, n := range shown {
		p := filepath.Join(o.name, n)
		fi, err := t.root.Lstat(p)
		if err != nil {
			entries = append(entries, entry{Name: n, Type: "unknown"})
			continue
		}
		entries = append(entries, t.describe(p, fi))
	}
	res := tools.Result{
		Status:   tools.StatusOK,
		Executed: true,
		Data:     data(map[string]any{"path": o.shown, "total": total, "entries": entries}),
	}
	if total > len(shown) {
		res.Truncated = true
		res.Note = fmt.Sprintf("%q holds %s entries; only the first %s by name are shown",
			o.shown, tools.FormatCount(int64(total)), tools.FormatCount(int64(len(shown))))
	}
	return res
}

func (t *Tool) exists(o op) tools.Result {
	fi, err := t.root.Lstat(o.name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return tools.Result{Status: tools.StatusOK, Executed: true, Data: data(map[string]any{"path": o.shown, "exists": false})}
	case err != nil:
		return o.before(err)
	}
	return tools.Result{Status: tools.StatusOK, Executed: true,
		Data: data(map[string]any{"path": o.shown, "exists": true, "type": typeName(fi.Mode())})}
}

func (t *Tool) stat(o op) tools.Result {
	fi, err := t.root.Lstat(o.name)
	if err != nil {
		return o.before(err)
	}
	return tools.Result{Status: tools.StatusOK, Executed: true, Data: data(t.describe(o.name, fi))}
}

// writable checks what is at o.name before a write or append: nothing
// (nil), or a regular file (its info).
func (t *Tool) writable(o op) (fs.FileInfo, *tools.Result) {
	if o.name == "." {
		return nil, invalid(&tools.ArgError{Arg: "path", Problem: "the root itself is a directory"})
	}
	fi, err := t.root.Lstat(o.name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		r := o.before(err)
		return nil, &r
	case fi.IsDir():
		return nil, invalid(&tools.ArgError{Arg: "path", Problem: fmt.Sprintf("%q is a directory", o.shown)})
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, invalid(&tools.ArgError{Arg: "path", Problem: fmt.Sprintf("%q is a symbolic link; write to the file it points to", o.shown)})
	case !fi.Mode().IsRegular():
		return nil, invalid(&tools.ArgError{Arg: "path", Problem: fmt.Sprintf("%q is a %s, not a regular file", o.shown, typeName(fi.Mode()))})
	}
	return fi, nil
}

// keepOwner gives the new file f the owner and group of the file old it
// replaces, so a service's file stays readable to the service.
func keepOwner(f *os.File, old fs.FileInfo) error {
	want, ok := old.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if got, ok := fi.Sys().(*syscall.Stat_t); ok && got.Uid == want.Uid && got.Gid == want.Gid {
		return nil
	}
	if err := f.Chown(int(want.Uid), int(want.Gid)); err != nil {
		// %v, not %w: plain() would shorten a wrapped EPERM to
		// "permission denied" and lose the reason.
		return fmt.Errorf("the new file cannot keep the owner %d:%d of the one it replaces (%v); nothing was changed", want.Uid, want.Gid, err)
	}
	return nil
}

// write replaces the file atomically: the content goes to a temporary file
// in the same directory, which is then renamed over the target, so a reader
// sees the old file or the new one, never half of it.
//
// The new file keeps the old one's permissions, owner and group; when the
// owner cannot be kept (a bot not running as root, replacing another
// user's file), nothing is changed.
func (t *Tool) write(o op) tools.Result {
	old, bad := t.writable(o)
	if bad != nil {
		return *bad
	}
	mode := fileMode
	if old != nil {
		mode = old.Mode().Perm()
	}
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	// The temporary name keeps within NAME_MAX (255 bytes) whatever the
	// target's length: at most 100 bytes of it, cut on a character.
	base := filepath.Base(o.name)
	if len(base) > 100 {
		base = string(tools.TrimPartialRune([]byte(base[:100])))
	}
	tmp := filepath.Join(filepath.Dir(o.name), "."+base+".countersign-"+hex.EncodeToString(suffix[:]))
	f, err := t.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return o.noParent(err)
	}
	if old != nil {
		err = keepOwner(f, old)
	}
	if err == nil {
		_, err = io.WriteString(f, *o.content)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = t.root.Rename(tmp, o.name)
	}
	if err != nil {
		_ = t.root.Remove(tmp)
		return o.before(err) // the target is untouched
	}
	return tools.Result{Status: tools.StatusOK, Executed: true,
		Data: data(map[string]any{"path": o.shown, "bytes_written": len(*o.content)})}
}

func (t *Tool) append(o op) tools.Result {
	if _, bad := t.writable(o); bad != nil {
		return *bad
	}
	// O_NONBLOCK: a FIFO swapped in after the check must not make the open
	// wait for a reader; what was opened is checked again on the open file.
	f, err := t.root.OpenFile(o.name, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, fileMode)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) {
			return *invalid(&tools.ArgError{Arg: "path", Problem: fmt.Sprintf("%q is a fifo, not a regular file", o.shown)})
		}
		return o.noParent(err)
	}
	if bad := o.appendable(f); bad != nil {
		_ = f.Close()
		return *bad
	}
	_, err = io.WriteString(f, *o.content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return o.after(err)
	}
	res := tools.Result{Status: tools.StatusOK, Executed: true}
	m := map[string]any{"path": o.shown, "bytes_written": len(*o.content)}
	if fi, err := t.root.Stat(o.name); err == nil {
		m["size"] = fi.Size()
	}
	res.Data = data(m)
	return res
}

// appendable checks the file append opened: a regular file with no other
// name. A hard link cannot be told from the file's own name, and one of its
// other names may be outside the root, where appending would change it.
func (o op) appendable(f *os.File) *tools.Result {
	fi, err := f.Stat()
	if err != nil {
		r := o.before(err)
		return &r
	}
	if !fi.Mode().IsRegular() {
		return invalid(&tools.ArgError{Arg: "path", Problem: fmt.Sprintf("%q is a %s, not a regular file", o.shown, typeName(fi.Mode()))})
	}
	return o.oneName(fi, "appended to; write replaces this name only")
}

// oneName refuses a file with more than one name (hard links): one of its
// other names may be outside the file root, or be a sensitive file the
// assessment would have asked about, and nothing in this name tells. The
// check is on the open file, so a link made after a Stat cannot slip by.
// not says what is not done to it.
func (o op) oneName(fi fs.FileInfo, not string) *tools.Result {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
		r := tools.Denied(fmt.Errorf("%q has %d names (hard links), and another may be outside the file root, so it is not %s", o.shown, st.Nlink, not))
		return &r
	}
	return nil
}

func (t *Tool) mkdir(o op) tools.Result {
	if o.name == "." {
		return *invalid(&tools.ArgError{Arg: "path", Problem: "the root already exists"})
	}
	var err error
	if o.recursive {
		err = t.root.MkdirAll(o.name, dirMode)
	} else {
		err = t.root.Mkdir(o.name, dirMode)
	}
	if err != nil {
		return o.before(err)
	}
	return tools.Result{Status: tools.StatusOK, Executed: true, Data: data(map[string]any{"path": o.shown, "created": true})}
}

func (t *Tool) delete(o op) tools.Result {
	if o.name == "." {
		return tools.Denied(errors.New("the file root itself cannot be deleted"))
	}
	fi, err := t.root.Lstat(o.name)
	if err != nil {
		return o.before(err)
	}
	if fi.IsDir() && !o.recursive {
		return *invalid(&tools.ArgError{Arg: "recursive", Problem: fmt.Sprintf("%q is a directory; delete it and everything in it only with recursive: true", o.shown)})
	}
	if fi.IsDir() {
		err = t.root.RemoveAll(o.name)
	} else {
		err = t.root.Remove(o.name) // a symbolic link goes, not what it points to
	}
	if err != nil {
		return o.after(err)
	}
	return tools.Result{Status: tools.StatusOK, Executed: true,
		Data: data(map[string]any{"path": o.shown, "deleted": typeName(fi.Mode())})}
}

// noParent words a missing directory when creating a file.
func (o op) noParent(err error) tools.Result {
	if errors.Is(err, fs.ErrNotExist) {
		return tools.NotStarted(fmt.Errorf("the directory of %q does not exist; create it with mkdir first", o.shown))
	}
	return o.before(err)
}
