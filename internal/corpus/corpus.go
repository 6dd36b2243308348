// Package corpus reads the peer test corpora: labelled tool calls from other
// projects' test suites, kept in ../shared/corpora beside the repository
// (never in it; see that folder's README). The risk tests check the
// assessor against them, and skip with a message when the folder is absent.
package corpus

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
)

// Case is one labelled call.
type Case struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
	// Accept lists the verdicts that count as right: auto, confirm, block.
	Accept []string `json:"accept"`
	Source string   `json:"source"`
	Orig   string   `json:"orig"`
	Name   string   `json:"name"`

	// File and Line say where the case was read, for messages.
	File string `json:"-"`
	Line int    `json:"-"`
	// Text is the command or the SQL of the call.
	Text string `json:"-"`
}

// AutoOnly reports whether auto is the only right verdict.
func (c Case) AutoOnly() bool { return len(c.Accept) == 1 && c.Accept[0] == "auto" }

// BlockOnly reports whether block is the only right verdict.
func (c Case) BlockOnly() bool { return len(c.Accept) == 1 && c.Accept[0] == "block" }

// Allows reports whether decision is one of the right verdicts.
func (c Case) Allows(decision string) bool { return slices.Contains(c.Accept, decision) }

// Where is "file:line", for messages.
func (c Case) Where() string { return fmt.Sprintf("%s:%d", c.File, c.Line) }

// Dir returns ../shared/corpora relative to the repository root (the first
// folder above the working directory that holds go.mod), or why it is not
// there.
func Dir() (dir, missing string) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err.Error()
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", "no go.mod above the package directory"
		}
		dir = parent
	}
	corpora := filepath.Join(dir, "..", "shared", "corpora")
	if _, err := os.Stat(corpora); err != nil {
		return "", corpora + " is absent (the corpora live beside the repository, never in it)"
	}
	return corpora, ""
}

// Read reads every case of every *.jsonl file in dir, in file order, with
// the files sorted by name.
func Read(dir string) ([]Case, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no *.jsonl in %s", dir)
	}
	sort.Strings(files)
	var out []Case
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		name := filepath.Base(path)
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for n := 1; sc.Scan(); n++ {
			if len(bytes.TrimSpace(sc.Bytes())) == 0 {
				continue
			}
			var c Case
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, n, err)
			}
			if len(c.Accept) == 0 {
				return nil, fmt.Errorf("%s:%d: no accept list", name, n)
			}
			var a struct {
				Command string `json:"command"`
				SQL     string `json:"sql"`
			}
			_ = json.Unmarshal(c.Args, &a)
			c.File, c.Line, c.Text = name, n, a.Command+a.SQL
			out = append(out, c)
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return out, nil
}

// Load is Read of Dir for a test: it skips the test with a message when
// the corpora are absent and fails it when they cannot be read. tool, when
// not empty, keeps only the cases of that tool.
func Load(tb testing.TB, tool string) []Case {
	tb.Helper()
	dir, missing := Dir()
	if missing != "" {
		tb.Skip("peer corpora not checked: " + missing)
	}
	all, err := Read(dir)
	if err != nil {
		tb.Fatalf("read the peer corpora: %v", err)
	}
	if tool == "" {
		return all
	}
	var out []Case
	for _, c := range all {
		if c.Tool == tool {
			out = append(out, c)
		}
	}
	return out
}
