package tools

import (
	"fmt"
	"maps"
	"slices"
)

// With returns a registry holding r's tools and then ts (MCP tools, known
// only once their servers have started), checked as NewRegistry checks
// them. r is unchanged; the copy keeps everything else r holds (the
// directs of tools that are off, and whatever wraps every run).
func (r *Registry) With(ts ...Tool) (*Registry, error) {
	q := *r
	q.tools = maps.Clone(r.tools)
	q.specs = slices.Clone(r.specs)
	q.off = slices.Clone(r.off)
	extra, err := NewRegistry(ts...)
	if err != nil {
		return nil, err
	}
	for _, s := range extra.specs {
		if _, dup := q.tools[s.Name]; dup {
			return nil, fmt.Errorf("register tool %q: name registered twice", s.Name)
		}
		q.tools[s.Name] = extra.tools[s.Name]
		q.specs = append(q.specs, s)
	}
	if r.shown != nil {
		// The new tools' output passes through the same redactor as
		// every other tool's.
		q.Redact(r.redactor)
	}
	return &q, nil
}
