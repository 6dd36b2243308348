package risk

import (
	"github.com/countersign/countersign/risk/shell"
	"github.com/countersign/countersign/risk/sqlrisk"
)

// Facts are what a call asks for, read from its arguments for the approval
// rules to match on (the Verdict says how risky it is; Facts say what it
// is): the kinds of the statements of an execute_sql call, the commands of
// an execute_command call.
type Facts struct {
	// Statements are the SQL statements of execute_sql, in order.
	Statements []sqlrisk.Statement `json:"statements,omitempty"`
	// Commands are the commands of execute_command, wrappers and the
	// commands they run both listed.
	Commands []shell.Command `json:"commands,omitempty"`
	// Unread is set when the call is of a tool with facts (execute_sql,
	// execute_command) and its text could not be read to the end (it does
	// not parse, a command name is computed at run time, an argument is
	// missing): it could be anything, and rules must match it as such.
	Unread bool `json:"unread,omitempty"`
}

// Facts reads what c asks for. It is pure and safe for concurrent use, like
// Assess. Tools other than execute_sql and execute_command have no facts.
func (p *Policy) Facts(c Call) Facts {
	var f Facts
	switch c.Tool {
	case ToolSQL, ToolCommand:
	default:
		return f
	}
	a, err := parseArgs(c.Args)
	if err != nil {
		return Facts{Unread: true}
	}
	ok := false
	if c.Tool == ToolSQL {
		var text string
		if text, err = a.requiredText("sql"); err == nil {
			f.Statements, ok = p.sql.Statements(text)
		}
	} else {
		var cmd string
		if cmd, err = a.requiredText("command"); err == nil {
			f.Commands, ok = p.shell.Commands(cmd)
		}
	}
	f.Unread = !ok
	return f
}
