package shelltool

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/countersign/countersign/tools"
)

// This file is how the tool describes itself: to the model (Name,
// Description, Schema, at the end) and, for each call, to people (the
// tools.Describer methods).

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

// Name implements tools.Tool.
func (t *Tool) Name() string { return Name }

// Description implements tools.Tool.
func (t *Tool) Description() string {
	return "Run a shell command line with `bash -c` on the server, in the configured working root " +
		"(or a workdir inside it). Standard input is empty, the environment holds only PATH, HOME, " +
		"locale and time-zone variables, the run is killed (with every process it started) at the " +
		"time limit, and stdout and stderr are each capped. Returns the exit code, stdout and stderr. " +
		"Prefer read-only commands; anything that changes the system waits for a person's approval." +
		t.fenceDescription()
}

// fenceDescription tells the model how a call that runs without a card is
// fenced, so that a refusal by the fence is no surprise.
func (t *Tool) fenceDescription() string {
	if t.cfg.Fence.Mode == FenceOff {
		return ""
	}
	return " A call that runs without a person's approval runs fenced by the kernel: it writes only in the working " +
		"root and $TMPDIR (nothing at all when judged read-only), gains no privilege through set-user-ID programs and, " +
		"when it runs on your risk_level low alone, reaches no network; what the fence refused is said in the result."
}

// Schema implements tools.Tool.
func (t *Tool) Schema() json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
		`"command":{"type":"string","description":"The command line, run by bash -c."},`+
		`"workdir":{"type":"string","description":"Directory to run in, relative to the working root. Default: the root."},`+
		`"timeout_seconds":{"type":"integer","minimum":1,"maximum":%d,"description":"Time limit in seconds. Default %d."}},`+
		`"required":["command"],"additionalProperties":false}`,
		int(t.cfg.MaxTimeout/time.Second), int(t.cfg.Timeout/time.Second)))
}
