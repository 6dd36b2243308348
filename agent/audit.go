package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/tools"
)

// This file writes the audit log: every event goes through audit; a run is
// recorded by auditExecution; a call whose record could not be written
// gets auditFailed and does not run; operation is how a call is named
// in it (and in the log).

// systemUser decides what no person decided: expiry, and cancellations
// the agent makes when it cannot keep an approval.
var systemUser = approval.User{ID: "countersign", Name: "Countersign"}

// audit appends an event. An error means the record was not written and
// the operation it describes must not run.
func (a *Agent) audit(ctx context.Context, e approval.Event) error {
	if e.At.IsZero() {
		e.At = a.now()
	}
	if err := a.store.Audit(ctx, e); err != nil {
		a.log.ErrorContext(ctx, "writing an audit event", "kind", e.Kind, "approval", e.ApprovalID, "tool", e.Tool, "error", err)
		return fmt.Errorf("write audit event %s: %w", e.Kind, err)
	}
	return nil
}

// auditExecution records a run. The run has happened, so a failure here is
// only logged.
func (a *Agent) auditExecution(ctx context.Context, actor approval.User, approvalID, channel, tool, op string, decision approval.AuditDecision, res tools.Result) {
	detail := res.Error
	if res.ExitCode != nil {
		detail = strings.TrimSpace(fmt.Sprintf("exit %d %s", *res.ExitCode, detail))
	}
	if why := interruption(ctx); why != "" {
		// The run was cut short with its turn (!cancel, a shutdown): the
		// record is written all the same, and says so.
		detail = strings.TrimSpace(why + "; " + detail)
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
		defer cancel()
	}
	_ = a.audit(ctx, approval.Event{
		Kind: approval.KindExecution, Actor: actor.ID, ApprovalID: approvalID, Tool: tool, Operation: op,
		Decision: decision, Outcome: approval.Outcome(res.Status), Channel: channel, DurationMS: res.DurationMS,
		Detail: strings.TrimSpace(fmt.Sprintf("%s (%d ms)", detail, res.DurationMS)),
	})
}

// auditFailed is the result of a call whose audit record could not be
// written: it does not run (SPEC §6).
func auditFailed() tools.Result {
	r := tools.NotRun(tools.StatusError, "Countersign could not write its audit record, so the operation was not run")
	r.Error = "audit log unavailable"
	return r
}

// operationCap caps the operation text the audit log and the log keep.
const operationCap = 1000

// operation is the text of a call for the audit log and the log, as the
// tool describes it (secrets masked), capped at operationCap bytes.
func (a *Agent) operation(tool string, args json.RawMessage) string {
	op := a.tools.Operation(tool, args).Text
	if shown, cut := tools.CapText(op, operationCap); cut {
		op = shown + "…"
	}
	return op
}
