package risk

import (
	"fmt"
	"slices"
)

// vouch returns the LLM's level as rule 5 may use it. A low level counts
// as absent when the call holds what the assessor cannot read (SQL built
// at run time: EXECUTE of a prepared statement, EXECUTE IMMEDIATE of an
// expression) or when the turn has read an HTTP response from a public
// host (Call.Outside, with Config.Taint on): the call then goes on to the
// whitelist, and a call that is not a plain read waits for a person, its
// card saying why.
func (p *Policy) vouch(c Call, llm Level, j judgement) (Level, judgement) {
	if c.Outside != "" && p.taint {
		j.unvouched = append(j.unvouched[:len(j.unvouched):len(j.unvouched)], fmt.Sprintf(
			"this turn read an HTTP response from %s, a public host, and text from outside may steer the assistant", clip(c.Outside)))
	}
	if llm != Low || len(j.unvouched) == 0 {
		return llm, j
	}
	if !j.readOnly {
		why := make([]string, 0, len(j.unvouched)+len(j.why)+1)
		why = append(why, j.unvouched...)
		why = append(why, "so the assistant's low risk_level does not count: it cannot vouch for what the assessor cannot read, nor for text from outside that may have steered it")
		for _, w := range j.why {
			if !slices.Contains(j.unvouched, w) {
				why = append(why, w)
			}
		}
		j.why = why
	}
	return "", j
}
