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
	// AutoBy says why a call runs without a card, for the kernel's fence
	// (SPEC §8), which depends on it: a call judged read-only writes
	// nothing, one run on the model's word alone stays off the network.
	// Empty for a call a person approved. A tool that fences treats a
	// value it does not know, or AutoRun without AutoBy, as the tightest
	// fence.
	AutoBy AutoReason
	// Progress, when set, is called every few seconds during a long run.
	Progress func(Progress)
}

// AutoReason is why a call runs without a card.
type AutoReason string

// The reasons a call runs without a card (risk's rules whitelist,
// preauthorized and llm).
const (
	AutoReadOnly AutoReason = "read-only"     // the assessor judged it read-only
	AutoOperator AutoReason = "preauthorized" // an operator pre-authorised it
	AutoModel    AutoReason = "model"         // the model's low risk_level alone
)

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
