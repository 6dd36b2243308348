package shelltool

import (
	"encoding/json"
	"strings"

	"github.com/countersign/countersign/tools"
)

var _ tools.Describer = (*Tool)(nil)

// DirectCommand is !run, which reaches execute_command without a model.
var DirectCommand = tools.Direct{
	Verb:  "!run",
	Usage: "!run <command>",
	Help:  "run a shell command",
	Parse: func(rest string) (map[string]any, string) {
		if rest == "" {
			return nil, "Usage: !run <command>, e.g. !run df -h"
		}
		return map[string]any{"command": rest}, ""
	},
}

// Title implements tools.Describer.
func (t *Tool) Title() string { return "Run this command?" }

// Operation implements tools.Describer: the command line byte for byte,
// then the working directory and time limit when given.
func (t *Tool) Operation(raw json.RawMessage) tools.Operation {
	var a struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(raw, &a) != nil || strings.TrimSpace(a.Command) == "" {
		return tools.Operation{Text: string(raw)}
	}
	return tools.Operation{Text: a.Command + tools.ArgLines(raw, "command")}
}

// Direct implements tools.Describer.
func (t *Tool) Direct() tools.Direct { return DirectCommand }
