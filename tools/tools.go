// Package tools defines what a tool is, the one result every run returns
// (SPEC §4), and the registry that main builds. It also holds what every
// tool does alike: strict argument decoding (DecodeArgs, ArgError), the
// results of calls that did not run (NotRun and its helpers), output caps
// (CappedBuffer, CapText) and the defaulting of a config's limits (Limit).
// The tools themselves live in sub-packages with a "tool" suffix (sqltool,
// shelltool, filetool, httptool).
package tools

import (
	"context"
	"encoding/json"
)

// Tool is something the LLM can call.
type Tool interface {
	// Name is the function name the LLM calls, e.g. "execute_sql".
	Name() string
	// Description is what the LLM reads about the tool.
	Description() string
	// Schema is the JSON schema of the arguments, without risk_level: the
	// registry adds that in one place for every tool.
	Schema() json.RawMessage
	// Run executes the call. It never panics on bad arguments: it returns a
	// Result with StatusError (or StatusDenied when a fence refuses).
	Run(ctx context.Context, args json.RawMessage, opts RunOptions) Result
}

// Previewer is an optional capability: a tool that can show the blast radius
// of a call before anyone approves it. A preview never runs the operation.
type Previewer interface {
	Preview(ctx context.Context, args json.RawMessage) Preview
}

// RunOptions carries what the caller knows about a run.
type RunOptions struct {
	// AutoRun is true when no person approved the call; tools then use their
	// read-only fences (SQL: read-only session and transaction).
	AutoRun bool
	// Progress, when set, is called every few seconds during a long run.
	Progress func(Progress)
}

// Progress is a snapshot of a long run.
type Progress struct {
	ElapsedMS int64  `json:"elapsed_ms"`
	Tail      string `json:"tail"`
}

// Preview shows what a call would touch. Err says why no preview could be
// made; a failed preview never blocks the card.
type Preview struct {
	Summary string   `json:"summary,omitempty"`
	Items   []string `json:"items,omitempty"`
	// Total is how many items there are in all; Items lists the first of
	// them, and a card says how many more there are.
	Total     int  `json:"total,omitempty"`
	Truncated bool `json:"truncated,omitempty"`
	// Estimate is the number of rows a SQL statement would touch, as
	// EXPLAIN estimates it (not a count).
	Estimate int64  `json:"estimate,omitempty"`
	Err      string `json:"error,omitempty"`
}
