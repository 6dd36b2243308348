package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/countersign/countersign/tools"
)

// This file computes a call's blast radius for its card (admit) and again
// before an approval is decided (bind.go, rebind).

// preview computes the blast radius of a call for its card, within the
// preview time limit. A preview that fails or takes too long says so; it
// never holds the card back.
func (a *Agent) preview(ctx context.Context, t tools.Tool, args json.RawMessage) *tools.Preview {
	pv, ok := t.(tools.Previewer)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, a.cfg.PreviewTimeout)
	defer cancel()
	ch := make(chan tools.Preview, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				a.log.ErrorContext(ctx, "a tool's preview panicked", "tool", t.Name(), "panic", fmt.Sprint(p))
				ch <- tools.Preview{Err: "the preview failed"}
			}
		}()
		ch <- pv.Preview(ctx, args)
	}()
	select {
	case p := <-ch:
		return &p
	case <-ctx.Done():
		return &tools.Preview{Err: "the preview took too long"}
	}
}
