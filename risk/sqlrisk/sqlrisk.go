// Package sqlrisk judges one SQL text with a MySQL grammar (the TiDB parser).
// It says whether the text is dangerous (needs a person) or a single plain
// read. It runs nothing and fails closed on anything it cannot parse.
package sqlrisk

// Analysis is what the parser found in one SQL text. The zero value means
// "confirm".
type Analysis struct {
	// Danger holds one reason per code-level danger (SPEC §2 rule 4).
	Danger []string
	// ReadOnly is true only for one parsed read statement with nothing that
	// writes, locks, sleeps or reads files.
	ReadOnly bool
	// Unknown holds why the text is not read-only when it is not dangerous.
	Unknown []string
}
