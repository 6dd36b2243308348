package risk

import (
	"fmt"
	"path"
	"strings"

	"github.com/countersign/countersign/risk/sensitive"
)

// fileOps are the operations of file_operations; true marks the read-only
// ones the whitelist runs at once.
var fileOps = map[string]bool{
	"read": true, "list": true, "exists": true, "stat": true,
	"write": false, "append": false, "mkdir": false, "delete": false,
}

// judgeFile applies the file rules. Paths are relative to the configured
// root, which the policy does not know: a path that is absolute, starts with
// ~ or climbs out with .. leaves the root whatever the root is.
func (p *Policy) judgeFile(a args) judgement {
	op, err := a.requiredStr("operation")
	if err != nil {
		return malformed(err)
	}
	readOnly, known := fileOps[op]
	if !known {
		return malformed(fmt.Errorf("argument %q: %q is not one of read, list, exists, stat, write, append, mkdir, delete", "operation", clip(op)))
	}
	name, ok, err := a.str("path")
	if err != nil {
		return malformed(err)
	}
	if !ok || name == "" {
		if op != "list" {
			return malformed(fmt.Errorf("argument %q is missing", "path"))
		}
		name = "."
	}
	recursive, err := a.boolean("recursive")
	if err != nil {
		return malformed(err)
	}
	if err := a.kind("content", '"'); err != nil {
		return malformed(err)
	}

	var j judgement
	if why := leavesRoot("path", name); why != "" {
		j.absurd = append(j.absurd, why)
		return j
	}
	clean := path.Clean(name)
	j.op = op + " " + clean
	if why, ok := p.sensitive.Match(name); ok {
		j.danger = append(j.danger, why)
	} else if op == "list" {
		// A listing shows the names of the secrets a directory holds (.aws),
		// as ls does in a shell.
		if why, ok := p.sensitive.MatchDir(name); ok {
			j.danger = append(j.danger, why)
		}
	}
	if op == "write" || op == "append" {
		if why, ok := sensitive.RunsLater(clean); ok {
			j.danger = append(j.danger, why)
		}
	}
	if op == "delete" && recursive {
		j.danger = append(j.danger, "recursive delete of "+clip(clean))
	}
	if readOnly {
		j.readOnly = true
		j.why = []string{op + " is a read-only file operation"}
	} else {
		j.why = []string{op + " changes files"}
	}
	return j
}

// leavesRoot returns why a path relative to the configured root leaves it,
// or "". arg names the argument for the reason.
func leavesRoot(arg, name string) string {
	switch {
	case strings.IndexByte(name, 0) >= 0:
		return fmt.Sprintf("the %s contains a NUL byte", arg)
	case strings.HasPrefix(name, "/"):
		return fmt.Sprintf("the %s %s is absolute; it leaves the configured root", arg, clip(name))
	case strings.HasPrefix(name, "~"):
		return fmt.Sprintf("the %s %s starts with ~; it leaves the configured root", arg, clip(name))
	}
	if c := path.Clean(name); c == ".." || strings.HasPrefix(c, "../") {
		return fmt.Sprintf("the %s %s climbs out of the configured root", arg, clip(name))
	}
	return ""
}
