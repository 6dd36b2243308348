package shelltool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/countersign/countersign/tools"
)

// Preview implements tools.Previewer. For every delete-like command in the
// script (rm, rmdir, unlink, shred, truncate, the sources of mv, the starting
// points of find -delete) it expands the operands the way bash would, against
// the workdir and with the command's own scrubbed environment, and lists the
// paths that exist now. Nothing runs: command and process substitutions make
// the preview fail instead of being executed.
//
// Items are exactly the paths the command would remove (or overwrite): an
// operand that does not exist is not listed but counted in the summary, and a
// directory is listed only when the command would remove it (rm -r, rm -d of
// an empty one, rmdir). A script with no delete-like command gets an empty
// preview. Variables the script sets itself are not known to the preview; a
// script that changes directory first cannot be previewed at all.
func (t *Tool) Preview(ctx context.Context, raw json.RawMessage) tools.Preview {
	var a args
	if err := tools.DecodeArgs(raw, &a); err != nil {
		return tools.Preview{Err: err.Error()}
	}
	dir, deny, err := t.resolveDir(a.Workdir)
	if deny != "" {
		return tools.Preview{Err: deny}
	}
	if err != nil {
		return tools.Preview{Err: err.Error()}
	}
	return previewScript(ctx, a.Command, dir, t.env, t.cfg.PreviewLimit)
}

// errNotRun refuses, in a preview, anything that would need a process.
var errNotRun = errors.New("a command substitution would have to run; previews run nothing")

// maxDirReads bounds the directory reads of one preview's globs.
const maxDirReads = 10000

type target struct {
	path    string // as the command sees it
	isDir   bool
	entries int // inside a directory, counted up to maxCount
}

type scan struct {
	ctx      context.Context
	dir      string
	cfg      *expand.Config
	reads    int
	seen     map[string]bool
	targets  []target
	missing  int
	keptDirs int // directories rm without -r would refuse
	notEmpty int // directories rmdir would refuse
	commands []string
	unsure   []string
}

func previewScript(ctx context.Context, command, dir string, env []string, limit int) tools.Preview {
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return tools.Preview{Err: "the command does not parse, so no preview: " + err.Error()}
	}
	s := &scan{ctx: ctx, dir: dir, seen: map[string]bool{}}
	s.cfg = &expand.Config{
		Env:       expand.ListEnviron(append(append([]string(nil), env...), "PWD="+dir)...),
		CmdSubst:  func(io.Writer, *syntax.CmdSubst) error { return errNotRun },
		ProcSubst: func(*syntax.ProcSubst) (string, error) { return "", errNotRun },
		ReadDir2:  s.readDir,
	}
	if err := s.walk(file, 0); err != nil {
		return tools.Preview{Err: err.Error()}
	}
	if len(s.commands) == 0 {
		return tools.Preview{}
	}
	return s.preview(limit)
}

// maxDepth bounds how deep `bash -c '...'` scripts are opened.
const maxDepth = 3

// walk looks at every simple command in file, in command and process
// substitutions too, and opens the scripts given to a shell with -c.
func (s *scan) walk(file *syntax.File, depth int) error {
	var failed error
	syntax.Walk(file, func(n syntax.Node) bool {
		if failed != nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				if len(n.Assigns) > 0 {
					s.unsure = append(s.unsure, "the command sets variables the preview does not know")
				}
				return true
			}
			failed = s.call(n, depth)
		case *syntax.ForClause, *syntax.DeclClause:
			s.unsure = append(s.unsure, "the command sets variables the preview does not know")
		}
		return true
	})
	return failed
}

func (s *scan) readDir(name string) ([]fs.DirEntry, error) {
	if err := s.ctx.Err(); err != nil {
		return nil, err
	}
	s.reads++
	if s.reads > maxDirReads {
		return nil, fmt.Errorf("the globs read more than %d directories; no preview", maxDirReads)
	}
	return os.ReadDir(name)
}

// wrappers run the command that follows them; value lists the options that
// take a separate argument.
var wrappers = map[string]string{
	"sudo": "-u -g -C -D -h -p -r -t -U -T", "doas": "-u -C", "env": "-u -C -S",
	"nohup": "", "command": "", "exec": "-a", "time": "-f -o", "nice": "-n",
	"ionice": "-c -n -p", "timeout": "-s -k", "stdbuf": "-i -o -e", "builtin": "",
	"xargs": "-a -d -E -I -L -n -P -s --arg-file --delimiter --max-args --max-procs --max-lines --max-chars",
}

// shells run the script given with -c; the preview opens it.
var shells = map[string]bool{"bash": true, "sh": true, "dash": true, "zsh": true, "ksh": true}

// shell previews `bash -c 'script'`: the script is parsed and walked like
// the outer one, when it is a plain string.
func (s *scan) shell(name string, words []*syntax.Word, depth int) error {
	for i, w := range words {
		lit := w.Lit()
		if !strings.HasPrefix(lit, "-") || !strings.Contains(lit, "c") || strings.HasPrefix(lit, "--") {
			if !strings.HasPrefix(lit, "-") {
				return nil // a script file or no -c: nothing to open
			}
			continue
		}
		if i+1 >= len(words) {
			return nil
		}
		if depth >= maxDepth {
			s.unsure = append(s.unsure, "shells nested too deep are not opened")
			return nil
		}
		script, err := expand.Literal(s.cfg, words[i+1])
		if err != nil {
			return fmt.Errorf("cannot preview the script given to %s -c: %w", name, err)
		}
		file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
		if err != nil {
			return fmt.Errorf("the script given to %s -c does not parse, so no preview: %w", name, err)
		}
		return s.walk(file, depth+1)
	}
	return nil
}

func (s *scan) call(c *syntax.CallExpr, depth int) error {
	words := c.Args
	viaXargs := false
	for len(words) > 0 {
		name := words[0].Lit()
		if name == "" {
			s.unsure = append(s.unsure, "a command name is computed at run time")
			return nil
		}
		if name == "cd" || name == "pushd" || name == "popd" {
			return fmt.Errorf("the command changes directory (%s), so the files it would touch cannot be previewed", name)
		}
		base := filepath.Base(name)
		if shells[base] {
			return s.shell(base, words[1:], depth)
		}
		valued, ok := wrappers[base]
		if !ok {
			if _, deletes := deleters[base]; deletes && viaXargs {
				s.unsure = append(s.unsure, base+" also gets operands from xargs' input, which the preview cannot see")
			}
			return s.command(base, words[1:])
		}
		viaXargs = viaXargs || base == "xargs"
		words = skipWrapper(base, valued, words[1:])
	}
	return nil
}

// skipWrapper drops a wrapper's options (and for env its assignments, for
// timeout its duration), leaving the wrapped command first.
func skipWrapper(name, valued string, words []*syntax.Word) []*syntax.Word {
	takes := strings.Fields(valued)
	for len(words) > 0 {
		w := words[0].Lit()
		switch {
		case w == "--":
			words = words[1:]
			if name == "timeout" && len(words) > 0 {
				words = words[1:]
			}
			return words
		case strings.HasPrefix(w, "-") && len(w) > 1:
			words = words[1:]
			for _, t := range takes {
				if w == t && len(words) > 0 {
					words = words[1:]
				}
			}
		case name == "env" && strings.Contains(w, "="):
			words = words[1:]
		default:
			if name == "timeout" && len(words) > 0 {
				words = words[1:] // the duration
			}
			return words
		}
	}
	return words
}

// deleters: what each delete-like command takes as options with values.
var deleters = map[string]string{
	"rm": "", "rmdir": "", "unlink": "", "shred": "-n -s --iterations --size --random-source",
	"truncate": "-s -r --size --reference", "mv": "-t -S --target-directory --suffix", "find": "",
}

func (s *scan) command(name string, words []*syntax.Word) error {
	valued, ok := deleters[name]
	if !ok {
		return nil
	}
	fields, err := expand.Fields(s.cfg, words...)
	if err != nil {
		if errors.Is(err, errNotRun) {
			return fmt.Errorf("cannot preview %s: %w", name, errNotRun)
		}
		return fmt.Errorf("cannot preview %s: expanding its arguments: %w", name, err)
	}
	if name == "find" {
		return s.find(fields)
	}
	flags, operands := splitOptions(fields, strings.Fields(valued))
	s.commands = append(s.commands, name)
	switch name {
	case "rm":
		recursive := flags["r"] || flags["R"] || flags["recursive"]
		emptyDirs := flags["d"] || flags["dir"]
		for _, op := range operands {
			s.add(op, func(fi fs.FileInfo, path string) bool {
				if !fi.IsDir() || recursive {
					return true
				}
				if emptyDirs {
					if ents, err := os.ReadDir(path); err == nil && len(ents) == 0 {
						return true
					}
				}
				s.keptDirs++
				return false
			})
		}
	case "rmdir":
		for _, op := range operands {
			s.add(op, func(fi fs.FileInfo, path string) bool {
				if !fi.IsDir() {
					return false
				}
				if ents, err := os.ReadDir(path); err != nil || len(ents) > 0 {
					s.notEmpty++
					return false
				}
				return true
			})
		}
	case "unlink", "shred", "truncate":
		for _, op := range operands {
			s.add(op, func(fi fs.FileInfo, _ string) bool { return !fi.IsDir() })
		}
	case "mv":
		sources := operands
		if flags["t"] || flags["target-directory"] {
			// every operand is a source
		} else if len(operands) > 1 {
			sources = operands[:len(operands)-1]
		} else {
			sources = nil
		}
		for _, op := range sources {
			s.add(op, func(fs.FileInfo, string) bool { return true })
		}
	}
	return nil
}

// find: only find -delete is a deleter; its starting points are listed, and
// which files under them match is left to find.
func (s *scan) find(fields []string) error {
	deletes := false
	for _, f := range fields {
		if f == "-delete" {
			deletes = true
		}
	}
	if !deletes {
		return nil
	}
	s.commands = append(s.commands, "find -delete")
	s.unsure = append(s.unsure, "find -delete removes what its tests match under the listed starting points; the matches are not previewed")
	for _, f := range fields {
		if strings.HasPrefix(f, "-") || f == "(" || f == "!" {
			break
		}
		s.add(f, func(fs.FileInfo, string) bool { return true })
	}
	return nil
}

// splitOptions separates options from operands the way GNU tools do
// (options may follow operands; "--" ends them). Flags holds each short
// letter and each long name seen.
func splitOptions(fields, valued []string) (map[string]bool, []string) {
	flags := map[string]bool{}
	var operands []string
	takes := func(o string) bool {
		for _, v := range valued {
			if v == o {
				return true
			}
		}
		return false
	}
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		switch {
		case f == "--":
			return flags, append(operands, fields[i+1:]...)
		case strings.HasPrefix(f, "--"):
			name, _, hasValue := strings.Cut(f[2:], "=")
			flags[name] = true
			if !hasValue && takes("--"+name) {
				i++
			}
		case strings.HasPrefix(f, "-") && len(f) > 1:
			for j, c := range f[1:] {
				flags[string(c)] = true
				if takes("-" + string(c)) {
					if j == len(f)-2 {
						i++ // the value is the next field
					}
					break // the rest of this field is the value
				}
			}
		default:
			operands = append(operands, f)
		}
	}
	return flags, operands
}

// add records op when it exists and keep says the command would act on it.
func (s *scan) add(op string, keep func(fs.FileInfo, string) bool) {
	path := op
	if !filepath.IsAbs(path) {
		path = filepath.Join(s.dir, op)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		s.missing++
		return
	}
	if !keep(fi, path) || s.seen[path] {
		return
	}
	s.seen[path] = true
	t := target{path: op, isDir: fi.IsDir()}
	if t.isDir {
		t.entries = countEntries(s.ctx, path, maxCount)
	}
	s.targets = append(s.targets, t)
}

// maxCount caps the entries counted inside one directory.
const maxCount = 100000

func countEntries(ctx context.Context, dir string, limit int) int {
	n := 0
	_ = filepath.WalkDir(dir, func(_ string, _ fs.DirEntry, err error) error {
		if ctx.Err() != nil || n > limit {
			return filepath.SkipAll
		}
		n++
		return nil
	})
	return max(n-1, 0) // not the directory itself
}

func (s *scan) preview(limit int) tools.Preview {
	p := tools.Preview{Total: len(s.targets)}
	var files, dirs, inside int
	for i, t := range s.targets {
		if t.isDir {
			dirs++
			inside += t.entries
		} else {
			files++
		}
		if i < limit {
			p.Items = append(p.Items, t.path)
		}
	}
	p.Truncated = len(s.targets) > limit
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s would act on %s existing %s", strings.Join(unique(s.commands), ", "),
		tools.FormatCount(int64(len(s.targets))), plural(len(s.targets), "path", "paths"))
	if dirs > 0 {
		more := ""
		if inside > maxCount {
			more = " more than"
		}
		fmt.Fprintf(&sb, " (%s %s, %s %s holding%s %s %s)",
			tools.FormatCount(int64(files)), plural(files, "file", "files"),
			tools.FormatCount(int64(dirs)), plural(dirs, "directory", "directories"),
			more, tools.FormatCount(int64(inside)), plural(inside, "entry", "entries"))
	}
	if p.Truncated {
		fmt.Fprintf(&sb, "; the first %d are listed, and %s more", limit, tools.FormatCount(int64(len(s.targets)-limit)))
	}
	if s.missing > 0 {
		fmt.Fprintf(&sb, "; %s %s not exist", tools.FormatCount(int64(s.missing)), plural(s.missing, "operand does", "operands do"))
	}
	if s.keptDirs > 0 {
		fmt.Fprintf(&sb, "; %s %s left alone (rm without -r)", tools.FormatCount(int64(s.keptDirs)), plural(s.keptDirs, "directory is", "directories are"))
	}
	if s.notEmpty > 0 {
		fmt.Fprintf(&sb, "; %s non-empty %s left alone (rmdir)", tools.FormatCount(int64(s.notEmpty)), plural(s.notEmpty, "directory is", "directories are"))
	}
	for _, u := range unique(s.unsure) {
		sb.WriteString("; approximate: " + u)
	}
	p.Summary = sb.String()
	return p
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func unique(ss []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
