package filetool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"syscall"

	"github.com/countersign/countersign/tools"
)

// Preview implements tools.Previewer: what exists at the path now, and what
// the operation would do to it. For a recursive delete it walks the
// directory (up to preview_scan_limit entries) and lists the first paths it
// would remove. It changes nothing.
func (t *Tool) Preview(ctx context.Context, raw json.RawMessage) tools.Preview {
	o, bad := t.check(raw)
	if bad != nil {
		return tools.Preview{Err: bad.Error}
	}
	fi, err := t.root.Lstat(o.name)
	if escapes(err) {
		return tools.Preview{Err: fmt.Sprintf("path %q leads outside the file root through a symbolic link", o.shown)}
	}
	if errors.Is(err, fs.ErrNotExist) {
		switch o.kind {
		case "write", "append":
			return tools.Preview{Summary: fmt.Sprintf("%q does not exist; it would be created with %s bytes", o.shown, tools.FormatCount(int64(len(*o.content))))}
		case "mkdir":
			return tools.Preview{Summary: fmt.Sprintf("%q does not exist; it would be created", o.shown)}
		}
		return tools.Preview{Summary: fmt.Sprintf("%q does not exist", o.shown)}
	}
	if err != nil {
		return tools.Preview{Err: plain(o.shown, err).Error()}
	}
	now := t.what(o, fi)
	switch {
	case o.kind == "write" && fi.Mode().IsRegular():
		return tools.Preview{Summary: fmt.Sprintf("%s; it would be replaced by %s bytes", now, tools.FormatCount(int64(len(*o.content))))}
	case o.kind == "append" && fi.Mode().IsRegular():
		return tools.Preview{Summary: fmt.Sprintf("%s; %s bytes would be added", now, tools.FormatCount(int64(len(*o.content))))}
	case o.kind == "mkdir":
		return tools.Preview{Summary: now + "; it already exists"}
	case o.kind == "delete" && fi.IsDir() && !o.recursive:
		return tools.Preview{Summary: now + "; without recursive the delete would be refused"}
	case o.kind == "delete" && fi.IsDir():
		return t.previewTree(ctx, o)
	case o.kind == "delete":
		return tools.Preview{Summary: now + "; it would be deleted", Items: []string{o.shown}, Total: 1}
	}
	return tools.Preview{Summary: now}
}

// what describes what is at the path: a file's size, a directory's count.
func (t *Tool) what(o op, fi fs.FileInfo) string {
	switch {
	case fi.Mode().IsRegular():
		return fmt.Sprintf("%q is a file of %s bytes", o.shown, tools.FormatCount(fi.Size()))
	case fi.IsDir():
		n, err := t.countDir(o.name)
		if err != nil {
			return fmt.Sprintf("%q is a directory", o.shown)
		}
		return fmt.Sprintf("%q is a directory of %s %s", o.shown, tools.FormatCount(int64(n)), plural(n, "entry", "entries"))
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := t.root.Readlink(o.name)
		return fmt.Sprintf("%q is a symbolic link to %q", o.shown, target)
	}
	return fmt.Sprintf("%q is a %s", o.shown, typeName(fi.Mode()))
}

func (t *Tool) countDir(name string) (int, error) {
	f, err := t.root.OpenFile(name, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	for {
		batch, err := f.Readdirnames(1024)
		n += len(batch)
		if err != nil || len(batch) == 0 {
			return n, nil
		}
	}
}

// previewTree walks a directory a recursive delete would remove. The walk
// does not follow symbolic links (RemoveAll removes links, not targets).
func (t *Tool) previewTree(ctx context.Context, o op) tools.Preview {
	var (
		p                  tools.Preview
		files, dirs, other int
		size               int64
		cut                bool
	)
	err := fs.WalkDir(t.root.FS(), o.name, func(name string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return nil // unreadable: counted as far as it goes
		}
		if p.Total >= t.cfg.PreviewScanLimit {
			cut = true
			return fs.SkipAll
		}
		p.Total++
		if len(p.Items) < t.cfg.PreviewItems {
			p.Items = append(p.Items, path.Join(o.shown, relTo(o.name, name)))
		}
		switch {
		case d.IsDir():
			dirs++
		case d.Type().IsRegular():
			files++
			if fi, err := d.Info(); err == nil {
				size += fi.Size()
			}
		default:
			other++
		}
		return nil
	})
	if err != nil {
		return tools.Preview{Err: "walking the directory: " + err.Error()}
	}
	p.Truncated = len(p.Items) < p.Total || cut
	atLeast := ""
	if cut {
		atLeast = "at least "
	}
	p.Summary = fmt.Sprintf("%q and everything in it would be deleted: %s%s %s, %s %s and %s other %s, %s bytes in files",
		o.shown, atLeast, tools.FormatCount(int64(files)), plural(files, "file", "files"),
		tools.FormatCount(int64(dirs)), plural(dirs, "directory", "directories"),
		tools.FormatCount(int64(other)), plural(other, "entry", "entries"), tools.FormatCount(size))
	if len(p.Items) < p.Total {
		p.Summary += fmt.Sprintf("; the first %d paths are listed, and %s%s more", len(p.Items), atLeast, tools.FormatCount(int64(p.Total-len(p.Items))))
	}
	return p
}

func relTo(base, name string) string {
	if base == "." {
		return name
	}
	if name == base {
		return "."
	}
	return name[len(base)+1:]
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
