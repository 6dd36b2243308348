package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// RiskLevelArg is the optional argument the registry adds to every tool's
// schema (SPEC §1). Tools never declare it themselves, and DecodeArgs ignores
// it, so a tool's own argument struct does not need a field for it.
const RiskLevelArg = "risk_level"

// riskLevelSchema is the one description of risk_level, shared by every tool.
var riskLevelSchema = json.RawMessage(`{"type":"string","enum":["low","medium","high"],` +
	`"description":"How risky this call is: low = safe to run at once; medium/high = needs a person's approval. Leave it out when unsure."}`)

// Spec is what the LLM is told about one tool: its name, its description
// and the JSON schema of its arguments, risk_level included.
type Spec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Registry holds the tools main wired in. It is built once and read-only
// afterwards, so it is safe for concurrent use.
type Registry struct {
	tools map[string]Tool
	specs []Spec // in registration order
	off   []NamedDirect
	// shown are the tools as everything downstream gets them: wrapped so
	// that their output passes through redactor (see Redact).
	shown    map[string]Tool
	redactor Redactor
}

// NewRegistry checks and indexes the tools. An empty or duplicate name, a
// schema that is not a JSON object schema, or a schema that declares
// risk_level itself is an error naming the tool.
func NewRegistry(ts ...Tool) (*Registry, error) {
	r := &Registry{tools: make(map[string]Tool, len(ts))}
	for i, t := range ts {
		if t == nil {
			return nil, fmt.Errorf("register tool #%d: tool is nil", i+1)
		}
		name := t.Name()
		if name == "" {
			return nil, fmt.Errorf("register tool #%d: name is empty", i+1)
		}
		if _, dup := r.tools[name]; dup {
			return nil, fmt.Errorf("register tool %q: name registered twice", name)
		}
		params, err := withRiskLevel(t.Schema())
		if err != nil {
			return nil, fmt.Errorf("register tool %q: schema: %w", name, err)
		}
		r.tools[name] = t
		r.specs = append(r.specs, Spec{Name: name, Description: t.Description(), Parameters: params})
	}
	return r, nil
}

// Lookup returns the tool with that name, as callers must run it: when
// the registry redacts (Redact), its results and previews are redacted.
func (r *Registry) Lookup(name string) (Tool, bool) {
	if r.shown != nil {
		t, ok := r.shown[name]
		return t, ok
	}
	t, ok := r.tools[name]
	return t, ok
}

// Specs returns every tool's spec in registration order. The caller may keep
// or change the returned values; the registry keeps its own copy.
func (r *Registry) Specs() []Spec {
	out := make([]Spec, len(r.specs))
	for i, s := range r.specs {
		s.Parameters = bytes.Clone(s.Parameters)
		out[i] = s
	}
	return out
}

// withRiskLevel merges the risk_level property into an object schema.
func withRiskLevel(schema json.RawMessage) (json.RawMessage, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(schema, &top); err != nil || top == nil {
		return nil, errors.New("not a JSON object")
	}
	var typ string
	if err := json.Unmarshal(top["type"], &typ); err != nil || typ != "object" {
		return nil, errors.New(`"type" must be "object"`)
	}
	props := map[string]json.RawMessage{}
	if raw, ok := top["properties"]; ok {
		if err := json.Unmarshal(raw, &props); err != nil || props == nil {
			return nil, errors.New(`"properties" must be an object`)
		}
	}
	if _, ok := props[RiskLevelArg]; ok {
		return nil, fmt.Errorf("declares %q itself; the registry adds it to every tool", RiskLevelArg)
	}
	props[RiskLevelArg] = riskLevelSchema
	p, err := json.Marshal(props)
	if err != nil {
		return nil, fmt.Errorf("encode properties: %w", err)
	}
	top["properties"] = p
	out, err := json.Marshal(top)
	if err != nil {
		return nil, fmt.Errorf("encode schema: %w", err)
	}
	return out, nil
}

// Run runs the named tool and always returns one result: an unknown name is
// an error result that did not run, and a tool that panics gives an error
// result instead of taking the caller down (it is marked executed, since it
// may have started). DurationMS is filled in when the tool left it zero.
func (r *Registry) Run(ctx context.Context, name string, args json.RawMessage, opts RunOptions) (res Result) {
	t, ok := r.Lookup(name)
	if !ok {
		return NotStarted(fmt.Errorf("there is no tool named %q", name))
	}
	start := time.Now()
	defer func() {
		if p := recover(); p != nil {
			res = Failed(fmt.Errorf("the %s tool failed unexpectedly; the operation may have partly run", name))
		}
		if res.DurationMS == 0 {
			res.DurationMS = time.Since(start).Milliseconds()
		}
	}()
	return t.Run(ctx, args, opts)
}

// Preview returns the named tool's preview of a call; ok is false when the
// tool has none to offer (unknown tool, or not a Previewer). A panicking
// previewer gives a preview whose Err says so.
func (r *Registry) Preview(ctx context.Context, name string, args json.RawMessage) (p Preview, ok bool) {
	t, _ := r.Lookup(name)
	pv, isPreviewer := t.(Previewer)
	if !isPreviewer {
		return Preview{}, false
	}
	defer func() {
		if recover() != nil {
			p, ok = Preview{Err: "the preview failed unexpectedly"}, true
		}
	}()
	return pv.Preview(ctx, args), true
}
