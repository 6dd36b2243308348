package console

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/countersign/countersign/approval"
	"github.com/countersign/countersign/approval/auditsink"
	"github.com/countersign/countersign/tools"
)

// What the decisions teach, read from the audit log: how long cards wait,
// how many there are, who decides, and which operations people approve
// again and again without ever cancelling, offered as a preauthorized
// entry to copy. Nothing is applied by itself: the operator copies an
// entry into the configuration, or not.

// defaultRepeats is how many approvals without a cancel make a suggestion.
const defaultRepeats = 3

// insightsWindow is how far back the insights read by default.
const insightsWindow = 7 * 24 * time.Hour

// report is the insights of a window of the audit log.
type report struct {
	Channels  []channelTimes
	Days      []dayCount
	Approvers []count // who gave the deciding approval, most first
	Expired   int
	Asked     int
	// Suggestions are operations approved at least Repeats times, never
	// cancelled, with the preauthorized entry that would let them run.
	Suggestions []suggestion
	Repeats     int
	// Calibration is, for each risk_level the model gave, how the code
	// and the people judged the same calls.
	Calibration []calibration
}

// calibration is what became of the calls the model gave one level.
type calibration struct {
	Level string
	Calls int
	// Agreed: the code's level was the model's; Raised: the code's was
	// higher; Lowered: lower.
	Agreed, Raised, Lowered int
	// Carded calls waited for a person, who approved or cancelled them
	// (the rest expired or wait).
	Carded, Approved, Cancelled int
}

// levelRank orders the risk levels; an unknown one ranks 0.
func levelRank(l string) int {
	switch l {
	case "low":
		return 1
	case "medium":
		return 2
	case "high":
		return 3
	}
	return 0
}

type channelTimes struct {
	Channel  string
	Decided  int
	P50, P95 time.Duration
}

type dayCount struct {
	Day   string
	Cards int
}

type count struct {
	Who string
	N   int
}

type suggestion struct {
	Tool, Operation string
	Approved        int
	// YAML is the entry to copy under risk.tools.<tool>.preauthorized.
	YAML string
}

// story is what the log says of one approval.
type story struct {
	tool, op, channel string
	asked, decided    time.Time
	verdict           approval.Outcome // approved, cancelled, expired, or ""
	by                string           // who decided
	llm               string           // the model's risk_level, when it gave one
}

// insights reads events (oldest first); repeats is the suggestion's bar.
func insights(events []approval.Event, repeats int) report {
	if repeats <= 0 {
		repeats = defaultRepeats
	}
	stories := map[string]*story{}
	var order []string
	get := func(id string) *story {
		s, ok := stories[id]
		if !ok {
			s = &story{}
			stories[id] = s
			order = append(order, id)
		}
		return s
	}
	cal := map[string]*calibration{}
	for _, e := range events {
		if e.Kind == approval.KindAssessment && e.LLMLevel != "" {
			c := cal[e.LLMLevel]
			if c == nil {
				c = &calibration{Level: e.LLMLevel}
				cal[e.LLMLevel] = c
			}
			c.Calls++
			switch m, k := levelRank(e.LLMLevel), levelRank(e.Risk); {
			case k == m:
				c.Agreed++
			case k > m:
				c.Raised++
			default:
				c.Lowered++
			}
		}
		if e.ApprovalID == "" {
			continue
		}
		switch {
		case e.Kind == approval.KindAssessment && e.Decision == approval.DecisionConfirm:
			s := get(e.ApprovalID)
			s.tool, s.op, s.channel, s.asked, s.llm = e.Tool, e.Operation, e.Channel, e.At, e.LLMLevel
		case e.Kind == approval.KindClick && (e.Outcome == approval.Outcome(approval.Approved) || e.Outcome == approval.Outcome(approval.Cancelled)):
			s := get(e.ApprovalID)
			if s.decided.IsZero() {
				s.decided, s.verdict, s.by = e.At, e.Outcome, e.Actor
			}
		case e.Kind == approval.KindExpiry:
			s := get(e.ApprovalID)
			if s.decided.IsZero() {
				s.decided, s.verdict = e.At, approval.Outcome(approval.Expired)
			}
		}
	}
	r := report{Repeats: repeats}
	waits := map[string][]time.Duration{}
	days := map[string]int{}
	type opKey struct{ tool, op string }
	approved, cancelled := map[opKey]int{}, map[opKey]int{}
	approvers := map[string]int{}
	for _, id := range order {
		s := stories[id]
		if s.asked.IsZero() {
			continue // asked before the window
		}
		r.Asked++
		days[s.asked.UTC().Format("2006-01-02")]++
		if c := cal[s.llm]; c != nil {
			c.Carded++
			switch s.verdict {
			case approval.Outcome(approval.Approved):
				c.Approved++
			case approval.Outcome(approval.Cancelled):
				c.Cancelled++
			}
		}
		k := opKey{s.tool, s.op}
		switch s.verdict {
		case approval.Outcome(approval.Approved):
			approved[k]++
			approvers[s.by]++
		case approval.Outcome(approval.Cancelled):
			cancelled[k]++
		case approval.Outcome(approval.Expired):
			r.Expired++
			continue
		default:
			continue
		}
		waits[s.channel] = append(waits[s.channel], s.decided.Sub(s.asked))
	}
	for ch, w := range waits {
		slices.Sort(w)
		r.Channels = append(r.Channels, channelTimes{Channel: ch, Decided: len(w), P50: quantile(w, 0.50), P95: quantile(w, 0.95)})
	}
	slices.SortFunc(r.Channels, func(a, b channelTimes) int { return cmp.Compare(a.Channel, b.Channel) })
	for d, n := range days {
		r.Days = append(r.Days, dayCount{d, n})
	}
	slices.SortFunc(r.Days, func(a, b dayCount) int { return cmp.Compare(a.Day, b.Day) })
	for who, n := range approvers {
		r.Approvers = append(r.Approvers, count{who, n})
	}
	slices.SortFunc(r.Approvers, func(a, b count) int { return cmp.Or(cmp.Compare(b.N, a.N), cmp.Compare(a.Who, b.Who)) })
	for k, n := range approved {
		// A masked operation is not the text that runs: no exact entry.
		if n < repeats || cancelled[k] > 0 || k.op == "" || strings.Contains(k.op, tools.Mask) || strings.Contains(k.op, "\n") {
			continue
		}
		r.Suggestions = append(r.Suggestions, suggestion{Tool: k.tool, Operation: k.op, Approved: n,
			YAML: "risk:\n  tools:\n    " + k.tool + ":\n      preauthorized:\n        - " + strconv.Quote(k.op)})
	}
	for _, c := range cal {
		r.Calibration = append(r.Calibration, *c)
	}
	slices.SortFunc(r.Calibration, func(a, b calibration) int {
		return cmp.Or(cmp.Compare(levelRank(a.Level), levelRank(b.Level)), cmp.Compare(a.Level, b.Level))
	})
	slices.SortFunc(r.Suggestions, func(a, b suggestion) int {
		return cmp.Or(cmp.Compare(b.Approved, a.Approved), cmp.Compare(a.Tool, b.Tool), cmp.Compare(a.Operation, b.Operation))
	})
	return r
}

// quantile is the q-quantile of sorted (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// insightsPage shows the report of the channels the person may read.
func (h *handlers) insights(w http.ResponseWriter, r *http.Request) {
	c, ok := h.signedIn(w, r)
	if !ok {
		return
	}
	p := h.base(c, "Insights")
	if h.s.audit == nil {
		p.Banner = "No audit log is readable here: configure audit.file or audit.mysql, or a Redis store, for the insights."
		h.render(w, http.StatusOK, "insights", p)
		return
	}
	n, _ := strconv.Atoi(r.URL.Query().Get("n"))
	events, err := h.read(r.Context(), auditsink.Filter{Since: h.s.now().Add(-insightsWindow)})
	if err != nil {
		p.Banner = "The audit log cannot be read just now; try again in a moment."
		h.render(w, http.StatusServiceUnavailable, "insights", p)
		return
	}
	mine := events[:0:0]
	for _, e := range events {
		if e.Channel != "" && h.bot.ConsoleMayRead(c.who(), e.Channel) || e.Kind == approval.KindExpiry {
			mine = append(mine, e)
		}
	}
	rep := insights(mine, n)
	p.Report = &rep
	h.render(w, http.StatusOK, "insights", p)
}
