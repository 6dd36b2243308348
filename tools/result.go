package tools

import "encoding/json"

// Status is the outcome of a tool call as the LLM sees it (SPEC §4).
type Status string

// The statuses. Only ok and error mean the operation ran.
const (
	StatusOK        Status = "ok"
	StatusError     Status = "error"
	StatusBlocked   Status = "blocked"
	StatusCancelled Status = "cancelled"
	StatusExpired   Status = "expired"
	StatusDenied    Status = "denied"
)

// Column describes one column of a SQL result.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Result is the one result every tool call gets. It marshals to the compact
// JSON the LLM receives; the same fields feed the approval card.
type Result struct {
	Status   Status `json:"status"`
	Executed bool   `json:"executed"`
	// Message is a plain sentence: for executed:false it says the operation
	// did not run and should not be retried unless the user asks again.
	Message string `json:"message,omitempty"`
	// Error is the error in plain words (safe to show).
	Error string `json:"error,omitempty"`

	// Shell.
	ExitCode *int   `json:"exit_code,omitempty"`
	Stdout   string `json:"stdout,omitempty"`
	Stderr   string `json:"stderr,omitempty"`

	// SQL.
	Columns      []Column `json:"columns,omitempty"`
	Rows         [][]any  `json:"rows,omitempty"`
	RowCount     *int     `json:"row_count,omitempty"`
	RowsAffected *int64   `json:"rows_affected,omitempty"`

	// HTTP.
	HTTPStatus int               `json:"http_status,omitempty"`
	Headers    map[string]string `json:"headers,omitempty"`
	Body       string            `json:"body,omitempty"`
	// Outside names the host a response came from when the operator did
	// not make it reachable (tools.http_request.allow_hosts, allow_cidrs):
	// a public host, whose text may try to steer the model. The agent
	// tells the policy, which trusts the model's low risk_level no more
	// for the rest of the turn (risk.taint).
	Outside string `json:"outside,omitempty"`

	// Fence says, in words the model can act on, what the kernel's fence
	// around a call that ran without a card refused (a write outside the
	// folders it may write, the network, a set-user-ID gain). The agent
	// does not run the same call again without a card in that turn.
	Fence string `json:"fence,omitempty"`
	// Fenced says the kernel's fence was around the run (tools that fence
	// set it), for the run's trace span. Not part of what the model reads.
	Fenced bool `json:"-"`

	// Files and anything else structured (entries of a list, a stat).
	Content string          `json:"content,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`

	// Truncated is set when any output was capped; Note says how.
	Truncated bool   `json:"truncated,omitempty"`
	Note      string `json:"note,omitempty"`
	// Redacted is how many values that looked like secrets were replaced
	// by "[redacted: <rule>]" before anyone saw the result.
	Redacted int `json:"redacted,omitempty"`

	DurationMS int64 `json:"duration_ms"`

	// Cancelled and expired calls: who decided and why.
	DecidedBy string `json:"decided_by,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// JSON is the compact form given to the LLM.
func (r Result) JSON() string {
	b, err := json.Marshal(r)
	if err != nil {
		return `{"status":"error","executed":false,"error":"result could not be encoded"}`
	}
	return string(b)
}
