package filetool

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/countersign/countersign/tools"
)

// This file is how the tool describes itself: to the model (Name,
// Description, Schema, at the end) and, for each call, to people (the
// tools.Describer methods).

var _ tools.Describer = (*Tool)(nil)

// contentShown is how much of a write's content an operation text shows.
const contentShown = 500

// fileUsage says how to write !file.
const fileUsage = "Usage: !file <operation> <path>, e.g. !file read logs/app.log; " +
	"!file write <path> <content>; !file delete -r <path>. Operations: read, list, exists, stat, write, append, mkdir, delete"

// DirectCommand is !file, which reaches file_operations without a model.
var DirectCommand = tools.Direct{
	Verb:  "!file",
	Usage: "!file <operation> <path>",
	Help:  "read, list, exists, stat, write <path> <content>, append, mkdir, delete [-r]",
	Parse: parseDirect,
}

func parseDirect(rest string) (map[string]any, string) {
	op, rest, _ := strings.Cut(rest, " ")
	op = strings.ToLower(op)
	rest = strings.TrimSpace(rest)
	args := map[string]any{"operation": op}
	switch op {
	case "read", "list", "exists", "stat":
		if rest == "" && op != "list" {
			return nil, fileUsage
		}
		if rest == "" {
			rest = "."
		}
		args["path"] = rest
	case "write", "append":
		path, content, found := strings.Cut(rest, " ")
		if path == "" || !found {
			return nil, fileUsage
		}
		args["path"] = path
		args["content"] = content
	case "mkdir", "delete":
		if flag, path, found := strings.Cut(rest, " "); found && (flag == "-r" || flag == "--recursive") {
			args["recursive"] = true
			rest = strings.TrimSpace(path)
		}
		if rest == "" {
			return nil, fileUsage
		}
		args["path"] = rest
	default:
		return nil, fileUsage
	}
	return args, ""
}

// Title implements tools.Describer.
func (t *Tool) Title() string { return "Do this file operation?" }

// Operation implements tools.Describer: "operation path", the other
// arguments, then the content of a write (its first 500 bytes, and how
// long it is).
func (t *Tool) Operation(raw json.RawMessage) tools.Operation {
	var a struct {
		Operation string  `json:"operation"`
		Path      string  `json:"path"`
		Content   *string `json:"content"`
	}
	if json.Unmarshal(raw, &a) != nil || a.Operation == "" {
		return tools.Operation{Text: string(raw)}
	}
	var b strings.Builder
	b.WriteString(a.Operation + " " + a.Path)
	b.WriteString(tools.ArgLines(raw, "operation", "path", "content"))
	if a.Content != nil {
		shown, cut := tools.CapText(*a.Content, contentShown)
		fmt.Fprintf(&b, "\n--- content, %d bytes", len(*a.Content))
		if cut {
			fmt.Fprintf(&b, ", first %d shown", contentShown)
		}
		b.WriteString(" ---\n" + shown)
	}
	return tools.Operation{Text: b.String()}
}

// Direct implements tools.Describer.
func (t *Tool) Direct() tools.Direct { return DirectCommand }

// Name implements tools.Tool.
func (t *Tool) Name() string { return Name }

// Description implements tools.Tool.
func (t *Tool) Description() string {
	return "Work with files under the configured root directory. Operations: read (a text file; capped, " +
		"binary files are summarised), list (a directory's entries with sizes, modes and times), exists, " +
		"stat, write (replaces the file atomically with content), append (adds content), mkdir " +
		"(recursive creates parents), delete (a directory only with recursive: true). Paths are relative " +
		"to the root; absolute paths and paths leaving the root are refused. read, list, exists and stat " +
		"run at once; the others wait for a person's approval."
}

// Schema implements tools.Tool.
func (t *Tool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"operation":{"type":"string","enum":["read","list","exists","stat","write","append","mkdir","delete"],"description":"What to do."},` +
		`"path":{"type":"string","description":"Path relative to the root; \".\" is the root itself."},` +
		`"content":{"type":"string","description":"Text to write or append (write and append only)."},` +
		`"recursive":{"type":"boolean","description":"delete: also a directory and everything in it; mkdir: create missing parents."}},` +
		`"required":["operation","path"],"additionalProperties":false}`)
}
