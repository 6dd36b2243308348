package filetool

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/countersign/countersign/tools"
)

// maxLinks bounds the symbolic links followed while resolving one path,
// as the kernel's ELOOP does.
const maxLinks = 40

// resolve follows the symbolic links in name, inside the root, and returns
// the path they lead to, relative to the root. A link that leaves the root
// (absolute, or climbing above it) stops the walk: os.Root refuses such a
// path anyway when the operation runs. Missing components are kept as they
// are written.
func (t *Tool) resolve(name string) (string, error) {
	rest := strings.Split(name, "/")
	var done []string
	for hops := 0; len(rest) > 0; {
		part := rest[0]
		rest = rest[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return name, nil
			}
			done = done[:len(done)-1]
			continue
		}
		cur := path.Join(append(done, part)...)
		fi, err := t.root.Lstat(cur)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			done = append(done, part)
			continue
		}
		if hops++; hops > maxLinks {
			return "", errors.New("too many levels of symbolic links")
		}
		target, err := t.root.Readlink(cur)
		if err != nil || path.IsAbs(target) {
			return name, nil
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	if len(done) == 0 {
		return ".", nil
	}
	return path.Join(done...), nil
}

// linkedSecret refuses an operation whose path reaches a sensitive file
// only through a symbolic link. The assessment judged the name it was
// given; a harmless-looking link to .env must not read the secret without
// the confirmation the real name would have needed.
func (t *Tool) linkedSecret(o op) *tools.Result {
	if _, direct := t.cfg.Sensitive.Match(o.name); direct {
		return nil // judged under its own name already
	}
	real, err := t.resolve(o.name)
	if err != nil {
		r := o.before(err)
		return &r
	}
	if real == o.name {
		return nil
	}
	if why, ok := t.cfg.Sensitive.Match(real); ok {
		r := tools.Denied(fmt.Errorf("path %q is a symbolic link to %q (%s); ask for that path by its own name so the call can be judged for what it is", o.shown, real, why))
		return &r
	}
	return nil
}
