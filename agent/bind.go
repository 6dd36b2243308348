package agent

import (
	"context"
	"fmt"
	"slices"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/tools"
)

// This file makes the card bind what it showed (SPEC §5): at the moment
// of approval the blast radius is computed again, and when it changed the
// call does not run; the card shows the new preview and asks again.

// estimateMargin is how much a SQL statement's estimated rows may grow
// between the card and the approval before the card asks again: 10 %, and
// at least estimateSlack rows, since EXPLAIN's estimates wander a little.
const (
	estimateMargin = 10 // per cent
	estimateSlack  = 10 // rows
)

// rebind computes rec's preview again for an approval. It returns the
// updated record and how the blast radius changed, or "" when it did not
// (or cannot be compared: the card showed no preview).
func (a *Agent) rebind(ctx context.Context, rec *approval.Approval) (*approval.Approval, string, error) {
	t, ok := a.tools.Lookup(rec.Tool)
	if !ok || rec.Preview == nil || rec.Preview.Err != "" {
		return rec, "", nil
	}
	fresh := a.preview(ctx, t, rec.Args)
	if fresh == nil {
		return rec, "", nil
	}
	why := changed(rec.Preview, fresh)
	if why == "" {
		return rec, "", nil
	}
	updated, err := a.store.SetPreview(ctx, rec.ID, fresh)
	if err != nil {
		return rec, "", fmt.Errorf("record the new preview of approval %s: %w", rec.ID, err)
	}
	return updated, why, nil
}

// changed says how the blast radius of now differs from was, the preview
// the card showed, or "" when it is the same.
func changed(was, now *tools.Preview) string {
	switch {
	case now.Err != "":
		return "the blast radius can no longer be computed (" + now.Err + ")"
	case was.Estimate > 0 || now.Estimate > 0:
		limit := was.Estimate + max(was.Estimate*estimateMargin/100, estimateSlack)
		if now.Estimate > limit {
			return fmt.Sprintf("the estimated rows grew from about %d to about %d", was.Estimate, now.Estimate)
		}
		return ""
	}
	wasItems, nowItems := slices.Clone(was.Items), slices.Clone(now.Items)
	slices.Sort(wasItems)
	slices.Sort(nowItems)
	if !slices.Equal(wasItems, nowItems) || was.Total != now.Total {
		added := 0
		for _, it := range nowItems {
			if _, found := slices.BinarySearch(wasItems, it); !found {
				added++
			}
		}
		return fmt.Sprintf("it now covers %d items (%d not on the card) where the card showed %d",
			max(now.Total, len(now.Items)), added, max(was.Total, len(was.Items)))
	}
	return ""
}
