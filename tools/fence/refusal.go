package fence

import (
	"path/filepath"
	"strings"
)

// A fenced run that the fence stopped fails like any program refused by
// the kernel: EACCES (Landlock), EPERM, EROFS, a network that is
// unreachable. The kernel tells the program, not the bot, so Refusals
// reads what the program said on its standard error, in the words of
// coreutils, bash, curl and the resolver, and keeps what the fence
// explains: a write to a path it does not allow, a network error in an
// offline run, a set-user-ID program refused its gain. A program that
// fails silently, or in other words, is not seen.

// Refusals lists what the fence s refused a run in dir, as read from
// the run's standard error: each item is a short phrase ("a write to
// /etc/cron.d/x", "the network", "a set-user-ID gain"), at most once.
func Refusals(stderr string, s Spec, dir string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(what string) {
		if !seen[what] {
			seen[what] = true
			out = append(out, what)
		}
	}
	for line := range strings.Lines(stderr) {
		line = strings.TrimSpace(line)
		low := strings.ToLower(line)
		switch {
		case strings.Contains(low, "no new privileges"), strings.Contains(low, "no_new_privs"):
			add("a set-user-ID gain")
		case s.Offline && (offlineError(low) || strings.Contains(low, "connect: permission denied") ||
			strings.Contains(low, "/dev/tcp/") || strings.Contains(low, "/dev/udp/")):
			add("network access")
		case strings.Contains(low, "permission denied"), strings.Contains(low, "operation not permitted"),
			strings.Contains(low, "read-only file system"):
			if p := deniedPath(line); p != "" && !s.allows(abs(p, dir)) {
				add("a write to " + abs(p, dir))
			} else if p == "" && len(s.Write) == 0 && strings.Contains(low, "read-only file system") {
				add("a write")
			}
		}
	}
	return out
}

// offlineError reports whether a line of standard error (lower case) says
// the network could not be reached. (Landlock's own refusal of a TCP
// connect is EACCES, "connect: Permission denied" to bash.)
func offlineError(low string) bool {
	for _, w := range []string{"network is unreachable", "temporary failure in name resolution",
		"could not resolve host", "name or service not known", "cannot assign requested address",
		"no address associated", "unable to resolve", "connection refused", "no route to host"} {
		if strings.Contains(low, w) {
			return true
		}
	}
	return false
}

// deniedPath finds the path a refusal line names: the last quoted text
// before the error (touch: cannot touch '/x': Permission denied), else the
// word before the colon (bash: /x: Permission denied; sh: 1: cannot create
// /x: Permission denied). It returns "" when the line names none.
func deniedPath(line string) string {
	i := strings.LastIndex(strings.ToLower(line), ": ")
	if i < 0 {
		return ""
	}
	head := line[:i]
	for _, q := range [][2]string{{"'", "'"}, {"‘", "’"}, {"`", "'"}, {`"`, `"`}} {
		if j := strings.LastIndex(head, q[1]); j > 0 {
			if k := strings.LastIndex(head[:j], q[0]); k >= 0 && k+len(q[0]) < j {
				return head[k+len(q[0]) : j]
			}
		}
	}
	if j := strings.LastIndex(head, ": "); j >= 0 {
		head = head[j+2:]
	}
	if j := strings.LastIndexByte(head, ' '); j >= 0 {
		head = head[j+1:]
	}
	if strings.ContainsRune(head, '/') || head != "" && !strings.ContainsAny(head, " :") && strings.Contains(line, head+":") {
		return head
	}
	return ""
}

// abs is path p of a run in dir.
func abs(p, dir string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p)
}

// allows reports whether s lets a run write the absolute path p.
func (s Spec) allows(p string) bool {
	for _, w := range s.Write {
		if rel, err := filepath.Rel(w, p); err == nil && filepath.IsLocal(rel) || p == w {
			return true
		}
	}
	for _, d := range writable {
		if p == d {
			return true
		}
	}
	return false
}
