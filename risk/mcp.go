package risk

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
)

// This file judges the calls of tools that MCP servers offer. An MCP
// server describes its own tools, annotations included, and nothing stops
// a server from calling a delete "read-only": so the policy reads the
// annotations as hints that only ever raise the risk, unless the operator
// marked the server trusted. In order:
//
//  1. The operator's setting for the tool (mcp.servers.<name>.policy: an
//     exact tool name, else the longest matching glob): block blocks,
//     auto runs as a pre-authorisation, confirm waits for a person whatever
//     the model says.
//  2. Pre-authorisations (risk.tools.<function>.preauthorized) and modes
//     apply as to any tool: strict confirms everything else.
//  3. A tool destructive by its hints (readOnlyHint not true, and
//     destructiveHint true or absent, the spec's default) is a code-level
//     danger: the model's low does not lower it.
//  4. The model's risk_level, as for any tool.
//  5. A tool of a trusted server with readOnlyHint: true is whitelisted.
//  6. Anything else (read-only by an untrusted server, or not destructive)
//     is confirmed.

// RuleOperator names the operator's own setting for an MCP tool (block or
// confirm; auto is reported as RulePreauthorized, the operator's
// approval given in advance).
const RuleOperator Rule = "operator"

// MCPTool is what the policy knows of one tool of an MCP server, as the
// server listed it when the bot started.
type MCPTool struct {
	// Server is the server's name in the configuration; Tool is the tool's
	// own name on that server.
	Server, Tool string
	// Trusted is the server's trusted setting: its readOnlyHint is
	// believed.
	Trusted bool
	// ReadOnlyHint and DestructiveHint are the tool's annotations; a nil
	// DestructiveHint is absent (true by the spec).
	ReadOnlyHint    bool
	DestructiveHint *bool
	// Setting is the operator's rule for this tool, or "" for none; From
	// names the configuration entry that set it.
	Setting Decision
	From    string
}

// Destructive reports whether the tool is destructive by its hints, as
// the MCP spec reads them: not read-only, and destructiveHint true or
// absent.
func (t MCPTool) Destructive() bool {
	return !t.ReadOnlyHint && (t.DestructiveHint == nil || *t.DestructiveHint)
}

// WithMCP returns a copy of p that judges calls of the named functions
// (the names the model calls them by) as calls of MCP tools. p itself is
// unchanged; both stay safe for concurrent use.
func (p *Policy) WithMCP(byFunction map[string]MCPTool) *Policy {
	q := *p
	q.mcp = maps.Clone(byFunction)
	return &q
}

// MCPTools returns the MCP tools p knows, by function name.
func (p *Policy) MCPTools() map[string]MCPTool { return maps.Clone(p.mcp) }

// assessMCP judges one call of an MCP tool (see the rules above). extra
// are the notes Assess gathered (risk_level and mode notes).
func (p *Policy) assessMCP(function string, t MCPTool, a args, mode Mode, llm Level, extra []string) Verdict {
	name := clip(t.Server) + "/" + clip(t.Tool)
	var v Verdict
	switch t.Setting {
	case Block:
		v = Verdict{Decision: Block, Risk: High, Rule: RuleOperator,
			Reasons: []string{"the operator blocks " + name + " (" + t.From + ")"}}
	case Auto:
		v = Verdict{Decision: Auto, Risk: Low, Rule: RulePreauthorized,
			Reasons: []string{"the operator runs " + name + " without a card (" + t.From + ")"}}
	case Confirm:
		risk := Medium
		if llm == High || t.Destructive() {
			risk = High
		}
		v = Verdict{Decision: Confirm, Risk: risk, Rule: RuleOperator,
			Reasons: []string{"the operator asks a person to approve every call of " + name + " (" + t.From + ")"}}
	default:
		j := judgement{op: a.compactWithout(riskLevelKey)}
		switch {
		case t.Destructive():
			hint := "destructiveHint: true"
			if t.DestructiveHint == nil {
				hint = "no destructiveHint, which the MCP spec reads as true"
			}
			j.danger = []string{name + " may destroy data by its own hints (readOnlyHint not true, " + hint + ")"}
		case t.ReadOnlyHint && t.Trusted:
			j.readOnly = true
			j.why = []string{"the trusted server " + clip(t.Server) + " marks " + clip(t.Tool) + " read-only (readOnlyHint: true)"}
		case t.ReadOnlyHint:
			j.why = []string{clip(t.Server) + " is not trusted, so its readOnlyHint on " + clip(t.Tool) + " is a hint, not a proof"}
		default:
			j.why = []string{name + " changes something (readOnlyHint not true), though not destructively by its hints (destructiveHint: false)"}
		}
		v = p.decide(function, mode, llm, j)
	}
	v.LLMLevel = llm
	v.Reasons = append(v.Reasons[:len(v.Reasons):len(v.Reasons)], extra...)
	return v
}

// MCPRules are the operator's settings for one server's tools: tool names
// or globs (path.Match syntax: * ? [...]) mapped to auto, confirm or
// block. "*" is a setting for the whole server.
type MCPRules struct {
	key   string
	exact map[string]Decision
	globs []string // longest first, then in order
	glob  map[string]Decision
}

// CompileMCPRules validates the settings at key (e.g.
// "mcp.servers.fs.policy"). An error names the entry and the fix.
func CompileMCPRules(key string, m map[string]string) (*MCPRules, error) {
	r := &MCPRules{key: key, exact: map[string]Decision{}, glob: map[string]Decision{}}
	for _, pat := range sortedKeys(m) {
		d := Decision(strings.TrimSpace(m[pat]))
		if d != Auto && d != Confirm && d != Block {
			return nil, fmt.Errorf("%s[%q]: %q is not one of auto, confirm, block", key, pat, m[pat])
		}
		if strings.TrimSpace(pat) == "" {
			return nil, fmt.Errorf("%s: a tool name or glob is empty", key)
		}
		if !strings.ContainsAny(pat, "*?[") {
			r.exact[pat] = d
			continue
		}
		if _, err := path.Match(pat, ""); err != nil {
			return nil, fmt.Errorf("%s[%q]: not a valid glob (%v); use * ? and [...]", key, pat, err)
		}
		r.glob[pat] = d
		r.globs = append(r.globs, pat)
	}
	slices.SortStableFunc(r.globs, func(a, b string) int { return len(b) - len(a) })
	return r, nil
}

// For returns the setting for tool and the entry that gave it, or "" when
// none applies: an exact name first, then the longest glob that matches
// (globs of one length in byte order).
func (r *MCPRules) For(tool string) (Decision, string) {
	if r == nil {
		return "", ""
	}
	if d, ok := r.exact[tool]; ok {
		return d, fmt.Sprintf("%s[%q]: %s", r.key, tool, d)
	}
	for _, g := range r.globs {
		if ok, _ := path.Match(g, tool); ok {
			return r.glob[g], fmt.Sprintf("%s[%q]: %s", r.key, g, r.glob[g])
		}
	}
	return "", ""
}
