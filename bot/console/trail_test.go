package console_test

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// trail keeps the last lines of what the console served and of what each
// browser said over the DevTools protocol, for the log of a browser step
// that failed: it tells a request that never reached the console from a
// handler that did not answer, and a page the browser never finished
// loading from one it finished without saying so. Each speaker has lines
// of its own, so that a wait polling the browser does not push the
// console's out.
type trail struct {
	mu    sync.Mutex
	rings map[string]*ring
}

type ring struct {
	lines []string
	next  int
}

// trailLines and trailWidth bound what a failed test prints.
const (
	trailLines = 150
	trailWidth = 240
)

func (tr *trail) add(who, format string, args ...any) {
	line := time.Now().Format("15:04:05.000") + " " + fmt.Sprintf(format, args...)
	if len(line) > trailWidth {
		line = line[:trailWidth] + "…"
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.rings == nil {
		tr.rings = map[string]*ring{}
	}
	r := tr.rings[who]
	if r == nil {
		r = &ring{}
		tr.rings[who] = r
	}
	if len(r.lines) < trailLines {
		r.lines = append(r.lines, line)
		return
	}
	r.lines[r.next] = line
	r.next = (r.next + 1) % trailLines
}

// String is each speaker's lines kept, oldest first.
func (tr *trail) String() string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var b strings.Builder
	for _, who := range slices.Sorted(maps.Keys(tr.rings)) {
		r := tr.rings[who]
		fmt.Fprintf(&b, "%s:\n%s\n", who, strings.Join(append(slices.Clone(r.lines[r.next:]), r.lines[:r.next]...), "\n"))
	}
	return b.String()
}

// serve notes when each request to h begins and ends.
func (tr *trail) serve(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tr.add("console", "begin %s %s from %s", r.Method, r.URL.Path, r.RemoteAddr)
		defer tr.add("console", "end %s %s from %s", r.Method, r.URL.Path, r.RemoteAddr)
		h.ServeHTTP(w, r)
	})
}
