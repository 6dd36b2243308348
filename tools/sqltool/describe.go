package sqltool

import (
	"encoding/json"
	"strings"

	"github.com/countersign/countersign/tools"
)

// This file is how the tool describes itself: to the model (Name,
// Description, Schema, at the end) and, for each call, to people (the
// tools.Describer methods).

var _ tools.Describer = (*Tool)(nil)

// DirectCommand is !sql, which reaches execute_sql without a model.
var DirectCommand = tools.Direct{
	Verb:  "!sql",
	Usage: "!sql <statement>",
	Help:  "run one SQL statement",
	Parse: func(rest string) (map[string]any, string) {
		if rest == "" {
			return nil, "Usage: !sql <statement>, e.g. !sql SELECT COUNT(*) FROM orders"
		}
		return map[string]any{"sql": rest}, ""
	},
}

// Title implements tools.Describer.
func (t *Tool) Title() string { return "Run this SQL?" }

// Operation implements tools.Describer: the statement byte for byte, then
// the connection when one is named.
func (t *Tool) Operation(raw json.RawMessage) tools.Operation {
	var a struct {
		SQL string `json:"sql"`
	}
	if json.Unmarshal(raw, &a) != nil || strings.TrimSpace(a.SQL) == "" {
		return tools.Operation{Text: string(raw)}
	}
	return tools.Operation{Text: a.SQL + tools.ArgLines(raw, "sql")}
}

// Direct implements tools.Describer.
func (t *Tool) Direct() tools.Direct { return DirectCommand }

// Name implements tools.Tool.
func (t *Tool) Name() string { return Name }

// Description implements tools.Tool.
func (t *Tool) Description() string { return t.description }

// Schema implements tools.Tool.
func (t *Tool) Schema() json.RawMessage { return t.schema }
