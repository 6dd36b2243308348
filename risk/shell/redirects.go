package shell

import (
	"strings"

	"github.com/countersign/countersign/risk/sensitive"
	"mvdan.cc/sh/v3/syntax"
)

// Redirections: where a statement's output goes and what it reads.

// harmlessSinks are output targets that keep a script read-only.
var harmlessSinks = map[string]bool{
	"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true,
	"/dev/fd/1": true, "/dev/fd/2": true, "/dev/tty": true,
}

// redirects judges a statement's redirections.
func (j *judge) redirects(rs []*syntax.Redirect) {
	for _, r := range rs {
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			continue
		case syntax.DplIn, syntax.DplOut:
			if t, ok := word(r.Word).lit(); ok && (t == "-" || isDigits(t)) {
				continue // 2>&1, >&2, <&0, >&-
			}
			if r.Op == syntax.DplIn {
				j.unknown("reads from a file descriptor named at run time")
				continue
			}
			j.output(word(r.Word), r.Op.String())
		case syntax.RdrIn:
			w := word(r.Word)
			if t, ok := w.lit(); ok {
				if j.isSecret(t) || j.isSecret(joinPath(j.cwd, t)) {
					j.danger("< " + t + " reads a secret")
				}
				if isRawDisk(t) || in(t, "/dev/mem", "/dev/kmem", "/dev/port") {
					j.danger("< " + t + " reads raw disk or memory, which holds every secret on it")
				}
				if strings.HasPrefix(t, "/dev/tcp/") || strings.HasPrefix(t, "/dev/udp/") {
					j.unknown("< " + t + " opens a network connection")
				}
				continue
			}
			if strings.HasPrefix(j.resolve(w), "/dev/") {
				j.unknown("reads from " + w.text + ", a device named at run time")
				continue
			}
			// < "$f": like a reader's operand named at run time (see the
			// package doc); a loop variable's words are checked.
			if p := j.resolve(w); isRawDisk(p) {
				j.danger("< " + w.text + " reads raw disk, which holds every secret on it")
				continue
			}
			j.secret("<", w)
		default:
			j.output(word(r.Word), r.Op.String())
		}
	}
}

// output judges a write to target: harmless, a raw disk (absurd), a secret
// (danger), or any other file (a plain write: not read-only).
func (j *judge) output(target arg, op string) {
	t, ok := target.lit()
	if ok && harmlessSinks[t] {
		return
	}
	if t := j.resolve(target); isRawDisk(t) || target.dynamic && strings.HasPrefix(t, "/dev/") && !harmlessSinks[t] {
		// > /dev/$DISK could be any disk: blocked.
		j.absurd("writing to " + target.text + " would destroy the disk")
		return
	}
	if j.isSecret(target.text) {
		j.danger(op + " " + target.text + " overwrites a secret")
		return
	}
	if _, later := sensitive.RunsLater(target.text); later {
		j.danger(op + " " + target.text + " changes what runs at login, boot or on a schedule")
		return
	}
	if strings.HasPrefix(target.text, "/proc/") || strings.HasPrefix(target.text, "/sys/") {
		// echo b > /proc/sysrq-trigger reboots; /proc/sys and /sys tune the kernel.
		j.danger(op + " " + target.text + " changes the running kernel")
		return
	}
	if strings.HasPrefix(target.text, "/dev/tcp/") || strings.HasPrefix(target.text, "/dev/udp/") {
		j.danger(op + " " + target.text + " sends data over the network")
		return
	}
	if dev, ok := strings.CutPrefix(target.text, "/dev/"); ok && !strings.HasPrefix(dev, "shm/") &&
		!strings.HasPrefix(dev, "tty") && !strings.HasPrefix(dev, "pts/") && !strings.HasPrefix(dev, "fd/") {
		// /dev/mem, /dev/port, /dev/watchdog, /dev/console: devices, not files.
		j.danger(op + " " + target.text + " writes to a device")
		return
	}
	j.unknown(op + " " + target.text + " writes a file")
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// truncation records a danger when a statement exists only to empty a
// file: > app.log, : > app.log, true > f, echo -n > f, printf ” > f,
// cat /dev/null > f (the shell builtins' truncate).
func (j *judge) truncation(s *syntax.Stmt) {
	if len(s.Redirs) == 0 {
		return
	}
	empty := s.Cmd == nil
	if c, ok := s.Cmd.(*syntax.CallExpr); ok {
		argv := words(c.Args, nil)
		switch {
		case len(argv) == 0:
			empty = true
		case len(argv) == 1 && in(argv[0].text, ":", "true", "false"):
			empty = true
		case len(argv) == 2 && argv[0].text == "echo" && argv[1].text == "-n",
			len(argv) == 2 && argv[0].text == "printf" && argv[1].text == "",
			len(argv) == 2 && argv[0].text == "cat" && argv[1].text == "/dev/null":
			empty = true
		}
	}
	if !empty {
		return
	}
	for _, r := range s.Redirs {
		if r.Op != syntax.RdrOut && r.Op != syntax.RdrClob || r.Word == nil {
			continue
		}
		if t := word(r.Word); !harmlessSinks[t.text] {
			j.danger(r.Op.String() + " " + t.text + " empties the file")
		}
	}
}
