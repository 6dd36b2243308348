// Package oncall resolves the on-call approvers of an approver list
// ("oncall:pagerduty:P123", "oncall:opsgenie:<schedule id>") to the
// e-mail addresses of the people on call now, through each service's REST
// API (one file per service), with a short cache shared by every card and
// click, and a timeout that never holds a decision longer than that
// cache's age.
//
// It only adds approvers. A service that is down, slow or refuses the
// token leaves its entry standing for nobody, and says so (Answer.Err):
// the static approvers of the list decide, and the card says it fell back.
// Who is on call is read again once the cache's age has passed, and never
// served stale: a person who went off call cannot approve.
//
// It knows nothing of chat: the bot matches the addresses to chat users
// through its adapters (adapters.Extras.ByEmail).
package oncall

import (
	"fmt"
	"strings"
)

// Prefix starts an on-call approver entry.
const Prefix = "oncall:"

// The services an entry may name.
const (
	PagerDuty = "pagerduty"
	Opsgenie  = "opsgenie"
)

// Services are the services an entry may name, in the order errors list
// them.
var Services = []string{PagerDuty, Opsgenie}

// Entry is one on-call approver entry: a service and a schedule in it.
type Entry struct {
	Service  string // PagerDuty or Opsgenie
	Schedule string // the schedule's id
}

// String is the entry as an approver list writes it.
func (e Entry) String() string { return Prefix + e.Service + ":" + e.Schedule }

// Title is the service's name as people write it ("PagerDuty").
func (e Entry) Title() string {
	switch e.Service {
	case PagerDuty:
		return "PagerDuty"
	case Opsgenie:
		return "Opsgenie"
	}
	return e.Service
}

// Is reports whether an approver entry is an on-call entry (well formed
// or not).
func Is(entry string) bool {
	return strings.HasPrefix(strings.TrimSpace(entry), Prefix)
}

// Parse reads an on-call entry, "oncall:<service>:<schedule id>". ok is
// false for an entry of another kind; err says what is wrong with an
// on-call entry that cannot be read, and how to write it.
func Parse(entry string) (e Entry, ok bool, err error) {
	entry = strings.TrimSpace(entry)
	if !strings.HasPrefix(entry, Prefix) {
		return Entry{}, false, nil
	}
	service, schedule, found := strings.Cut(strings.TrimPrefix(entry, Prefix), ":")
	service, schedule = strings.TrimSpace(service), strings.TrimSpace(schedule)
	switch {
	case service != PagerDuty && service != Opsgenie:
		return Entry{}, true, fmt.Errorf("%q: the service must be one of %s (oncall:pagerduty:<schedule id>)", entry, strings.Join(Services, ", "))
	case !found || schedule == "":
		return Entry{}, true, fmt.Errorf("%q names no schedule; write oncall:%s:<schedule id>", entry, service)
	case strings.ContainsAny(schedule, " \t/?#%"):
		return Entry{}, true, fmt.Errorf("%q: %q is not a schedule id", entry, schedule)
	}
	return Entry{Service: service, Schedule: schedule}, true, nil
}
