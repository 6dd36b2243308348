package tools

import (
	"encoding/json"
	"strings"
)

// Describer is how a tool shows its calls to people, in one place per
// tool: the card's question, the exact operation text (on the card, in
// the audit log, in the chat), and the direct command that reaches the
// tool without a model. A tool that is not a Describer is shown by
// Describe's generic fallback.
type Describer interface {
	// Title is the card's question, "Run this command?".
	Title() string
	// Operation is the exact operation of a call as people see it: the
	// command line or the statement byte for byte, then the other
	// arguments on lines of their own. Secrets (credentials in HTTP
	// headers and URLs) are masked, and Masked says so: what runs is the
	// stored call, never this text.
	Operation(args json.RawMessage) Operation
	// Direct is the direct command that reaches the tool ("!run"), or the
	// zero Direct when there is none.
	Direct() Direct
}

// Operation is the text of one call as people see it.
type Operation struct {
	Text string
	// Masked is set when secret values in Text are replaced by Mask.
	Masked bool
}

// Mask stands for a secret value that is not shown.
const Mask = "••••••"

// Head is the first line of the operation: the command, the statement,
// the request line.
func (o Operation) Head() string {
	head, _, _ := strings.Cut(o.Text, "\n")
	return head
}

// Direct is a direct command (SPEC §7): "!run <command>" reaches
// execute_command through the same assessment and approvals as the model.
type Direct struct {
	// Verb is the command word, "!run".
	Verb string
	// Usage is how it is written, "!run <command>"; Help says what it does.
	Usage, Help string
	// Parse turns what follows the verb into the tool's arguments, or
	// returns a sentence saying how to write it.
	Parse func(rest string) (args map[string]any, usage string)
}

// describer returns t's Describer, or the generic one.
func describer(t Tool) Describer {
	if d, ok := t.(Describer); ok {
		return d
	}
	return generic{t.Name()}
}

// generic describes a tool that does not describe itself: its arguments
// as compact JSON.
type generic struct{ name string }

func (g generic) Title() string  { return "Run " + g.name + "?" }
func (g generic) Direct() Direct { return Direct{} }

func (g generic) Operation(raw json.RawMessage) Operation {
	var args map[string]any
	if err := decodeObject(raw, &args); err != nil {
		return Operation{Text: string(raw)}
	}
	delete(args, RiskLevelArg)
	compact, err := json.Marshal(args)
	if err != nil {
		return Operation{Text: string(raw)}
	}
	return Operation{Text: string(compact)}
}

// Title is the card's question for a call of the named tool.
func (r *Registry) Title(name string) string {
	t, ok := r.tools[name]
	if !ok {
		return generic{name}.Title()
	}
	return describer(t).Title()
}

// Operation is the operation text of a call of the named tool, as every
// place that shows a call shows it (card, audit log, chat, log). Secrets
// in the call's own arguments (a token on a curl line, mysql -pSECRET, a
// password in SQL text) pass through the registry's redactor like every
// result does, and Masked says so: what runs is still the stored call,
// exactly as approved.
func (r *Registry) Operation(name string, args json.RawMessage) Operation {
	var op Operation
	if t, ok := r.tools[name]; ok {
		op = describer(t).Operation(args)
	} else {
		op = generic{name}.Operation(args)
	}
	if r.redactor != nil {
		var n int
		if op.Text, n = r.redactor.Redact(op.Text); n > 0 {
			op.Masked = true
		}
	}
	return op
}

// Directs returns the direct commands of the registered tools, in
// registration order, each with the name of its tool, then those of the
// tools that are off (see Off).
func (r *Registry) Directs() []NamedDirect {
	var out []NamedDirect
	for _, s := range r.specs {
		if d := describer(r.tools[s.Name]).Direct(); d.Verb != "" {
			out = append(out, NamedDirect{Tool: s.Name, Direct: d})
		}
	}
	return append(out, r.off...)
}

// NamedDirect is a direct command and the tool it reaches.
type NamedDirect struct {
	Tool string
	Direct
	// Off, when set, says why the tool is not available here and how to
	// turn it on, naming the configuration key.
	Off string
}

// Off records the direct command of a tool that exists but is not
// configured, so that using it says how to turn the tool on. It is part of
// building the registry, before it is shared.
func (r *Registry) Off(tool string, d Direct, why string) {
	r.off = append(r.off, NamedDirect{Tool: tool, Direct: d, Off: why})
}
