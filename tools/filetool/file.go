// Package filetool is the file_operations tool: read, list, exists, stat,
// write, append, mkdir and delete under one configured root. Every path goes
// through an os.Root opened at that root, so absolute paths, ".." and
// symbolic links that lead out of it are refused by the file system layer
// itself, whatever the assessor decided (SPEC §8). No symlink, hard-link,
// chmod or chown operation is offered.
//
// A hard link to a file outside the root, made by something else, cannot
// be told from a file of the root: read reads it. append refuses any file
// with more than one name, and write replaces the name it is given (a new
// file renamed over it), so neither changes the file behind another name.
package filetool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/countersign/countersign/risk/sensitive"
	"github.com/countersign/countersign/tools"
)

// Name is the tool name the LLM calls.
const Name = "file_operations"

// Defaults for the Config fields left zero.
const (
	DefaultMaxReadBytes     = 256 << 10
	DefaultMaxWriteBytes    = 1 << 20
	DefaultMaxListEntries   = 1000
	DefaultPreviewItems     = 50
	DefaultPreviewScanLimit = 10000
)

// Modes of what the tool creates (the process umask still applies). A write
// that replaces a file keeps that file's permissions.
const (
	fileMode fs.FileMode = 0o644
	dirMode  fs.FileMode = 0o755
)

// Config is the file_operations section of the configuration.
type Config struct {
	// Root is the directory every path is relative to. Required.
	Root string `yaml:"root"`
	// MaxReadBytes caps what read returns. Default 256 KiB.
	MaxReadBytes int64 `yaml:"max_read_bytes"`
	// MaxWriteBytes caps the content of one write or append. Default 1 MiB.
	MaxWriteBytes int `yaml:"max_write_bytes"`
	// MaxListEntries caps the entries list returns. Default 1000.
	MaxListEntries int `yaml:"max_list_entries"`
	// PreviewItems caps the paths a preview lists. Default 50.
	PreviewItems int `yaml:"preview_items"`
	// PreviewScanLimit caps the entries a preview of a recursive delete
	// walks. Default 10000.
	PreviewScanLimit int `yaml:"preview_scan_limit"`
	// Sensitive recognises secret paths, so that a symbolic link cannot
	// reach one under a harmless name. main passes the policy's matcher;
	// nil means the default patterns.
	Sensitive *sensitive.Matcher `yaml:"-"`
}

// Tool is the file_operations tool. It is safe for concurrent use.
type Tool struct {
	cfg  Config // Sensitive is never nil
	root *os.Root
}

var (
	_ tools.Tool      = (*Tool)(nil)
	_ tools.Previewer = (*Tool)(nil)
)

// WithDefaults returns c with its zero limits filled in, as New applies
// them; a negative limit is an error naming its key.
func (c Config) WithDefaults() (Config, error) {
	err := errors.Join(
		tools.Limit("max_read_bytes", &c.MaxReadBytes, DefaultMaxReadBytes),
		tools.Limit("max_write_bytes", &c.MaxWriteBytes, DefaultMaxWriteBytes),
		tools.Limit("max_list_entries", &c.MaxListEntries, DefaultMaxListEntries),
		tools.Limit("preview_items", &c.PreviewItems, DefaultPreviewItems),
		tools.Limit("preview_scan_limit", &c.PreviewScanLimit, DefaultPreviewScanLimit),
	)
	return c, err
}

// New checks cfg, fills in defaults and opens the root. Close releases it.
// Errors name the key in the tool's section; the caller names the section.
func New(cfg Config) (*Tool, error) {
	if cfg.Root == "" {
		return nil, errors.New("root is required")
	}
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.Sensitive == nil {
		m, err := sensitive.New(nil)
		if err != nil {
			return nil, fmt.Errorf("sensitive paths: %w", err)
		}
		cfg.Sensitive = m
	}
	fi, err := os.Stat(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("root %q: %w", cfg.Root, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("root %q is not a directory", cfg.Root)
	}
	root, err := os.OpenRoot(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("root %q: %w", cfg.Root, err)
	}
	return &Tool{cfg: cfg, root: root}, nil
}

// Close releases the root directory.
func (t *Tool) Close() error { return t.root.Close() }

// args are the arguments of file_operations (SPEC §1).
type args struct {
	Operation string  `json:"operation"`
	Path      string  `json:"path"`
	Content   *string `json:"content"`
	Recursive bool    `json:"recursive"`
}

// op is a checked call: name is a clean path relative to the root.
type op struct {
	kind      string
	name      string
	shown     string // the path as given, for messages
	content   *string
	recursive bool
}

// operations are the operation names, in the order the schema and
// messages list them.
var operations = []string{"read", "list", "exists", "stat", "write", "append", "mkdir", "delete"}

// check decodes and validates the arguments. A non-nil result is the
// refusal to return instead of running.
func (t *Tool) check(raw json.RawMessage) (op, *tools.Result) {
	var a args
	if err := tools.DecodeArgs(raw, &a); err != nil {
		return op{}, invalid(err)
	}
	o := op{kind: a.Operation, shown: a.Path, content: a.Content, recursive: a.Recursive}
	switch {
	case a.Operation == "":
		return op{}, invalid(tools.MissingArg("operation"))
	case !slices.Contains(operations, a.Operation):
		return op{}, invalid(&tools.ArgError{Arg: "operation", Problem: fmt.Sprintf("%q is not one of %s", a.Operation, strings.Join(operations, ", "))})
	case (a.Operation == "write" || a.Operation == "append") && a.Content == nil:
		return op{}, invalid(tools.MissingArg("content"))
	case a.Operation != "write" && a.Operation != "append" && a.Content != nil:
		return op{}, invalid(&tools.ArgError{Arg: "content", Problem: "is only for write and append"})
	case a.Operation != "delete" && a.Operation != "mkdir" && a.Recursive:
		return op{}, invalid(&tools.ArgError{Arg: "recursive", Problem: "is only for delete and mkdir"})
	case a.Content != nil && len(*a.Content) > t.cfg.MaxWriteBytes:
		return op{}, invalid(&tools.ArgError{Arg: "content", Problem: fmt.Sprintf("is %s bytes; the limit is %s",
			tools.FormatCount(int64(len(*a.Content))), tools.FormatCount(int64(t.cfg.MaxWriteBytes)))})
	}
	name, deny, err := cleanPath(a.Path, a.Operation == "list")
	if deny != "" {
		r := tools.Denied(errors.New(deny))
		return op{}, &r
	}
	if err != nil {
		return op{}, invalid(err)
	}
	o.name = name
	return o, nil
}

// invalid is the refusal of arguments that name what is wrong with them.
func invalid(err error) *tools.Result {
	r := tools.InvalidArgs(err)
	return &r
}

// cleanPath checks a path lexically: relative, and not leaving the root.
// Symbolic links are left to os.Root. deny is set for a path the fence
// refuses; err for one that is malformed.
func cleanPath(p string, emptyIsRoot bool) (name, deny string, err error) {
	switch {
	case p == "" && emptyIsRoot:
		return ".", "", nil
	case p == "":
		return "", "", tools.MissingArg("path")
	case strings.ContainsRune(p, 0):
		return "", "", &tools.ArgError{Arg: "path", Problem: "holds a NUL byte"}
	case filepath.IsAbs(p):
		return "", fmt.Sprintf("path %q is absolute; paths are relative to the file root", p), nil
	}
	c := filepath.Clean(p)
	if c != "." && !filepath.IsLocal(c) {
		return "", fmt.Sprintf("path %q leaves the file root", p), nil
	}
	return c, "", nil
}

// Run implements tools.Tool.
func (t *Tool) Run(ctx context.Context, raw json.RawMessage, _ tools.RunOptions) tools.Result {
	start := time.Now()
	res := t.run(ctx, raw)
	res.DurationMS = time.Since(start).Milliseconds()
	return res
}

func (t *Tool) run(ctx context.Context, raw json.RawMessage) tools.Result {
	o, bad := t.check(raw)
	if bad != nil {
		return *bad
	}
	if err := ctx.Err(); err != nil {
		return tools.NotStarted(errors.New("the call was stopped before it started"))
	}
	if r := t.linkedSecret(o); r != nil {
		return *r
	}
	switch o.kind {
	case "read":
		return t.read(o)
	case "list":
		return t.list(o)
	case "exists":
		return t.exists(o)
	case "stat":
		return t.stat(o)
	case "write":
		return t.write(o)
	case "append":
		return t.append(o)
	case "mkdir":
		return t.mkdir(o)
	case "delete":
		return t.delete(o)
	}
	return *invalid(&tools.ArgError{Arg: "operation", Problem: "is unknown"})
}

// escapes reports whether err is os.Root refusing a path that leads out of
// the root (through "..", an absolute or an outward symbolic link).
func escapes(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}

// before turns an error met before anything changed into a result: a
// refusal for an escape, otherwise an unexecuted error in plain words.
func (o op) before(err error) tools.Result {
	if escapes(err) {
		return o.escaped()
	}
	return tools.NotStarted(plain(o.shown, err))
}

// after turns an error met while changing something into a result.
func (o op) after(err error) tools.Result {
	if escapes(err) {
		return o.escaped()
	}
	return tools.Failed(plain(o.shown, err))
}

// escaped is the refusal of a path that os.Root found leading out of it.
func (o op) escaped() tools.Result {
	return tools.Denied(fmt.Errorf("path %q leads outside the file root through a symbolic link", o.shown))
}

// plain words for the usual file errors, without the root's own path.
func plain(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%q does not exist", path)
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("%q already exists", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("permission denied for %q", path)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s %q: %w", pe.Op, path, pe.Err)
	}
	return fmt.Errorf("%q: %w", path, err)
}

// entry describes one file for stat and list.
type entry struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Size    int64  `json:"size"`
	Mode    string `json:"mode"`
	ModTime string `json:"mtime"`
	Target  string `json:"target,omitempty"`
}

func (t *Tool) describe(name string, fi fs.FileInfo) entry {
	e := entry{
		Name:    fi.Name(),
		Type:    typeName(fi.Mode()),
		Size:    fi.Size(),
		Mode:    fi.Mode().String(),
		ModTime: fi.ModTime().UTC().Format(time.RFC3339),
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		if target, err := t.root.Readlink(name); err == nil {
			e.Target = target
		}
	}
	return e
}

func typeName(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "file"
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m&fs.ModeNamedPipe != 0:
		return "fifo"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "other"
}

func data(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// Config returns the configuration the tool runs with, defaults filled in.
func (t *Tool) Config() Config { return t.cfg }
