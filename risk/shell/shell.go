// Package shell judges a shell command line by parsing it with mvdan.cc/sh and
// looking at every simple command in the tree. It says whether the script is
// absurd (never to run), dangerous (needs a person), or made only of known
// readers used read-only. It runs nothing.
package shell

// Analysis is what the parser found in one script. The zero value (nothing
// absurd, nothing dangerous, not read-only) means "confirm", so an analysis
// that gives up half way fails closed.
type Analysis struct {
	// Absurd holds one reason per command that must never run (SPEC §2 rule 1).
	Absurd []string
	// Danger holds one reason per code-level danger (SPEC §2 rule 4).
	Danger []string
	// ReadOnly is true only when the script parsed and every simple command
	// in it is a known reader used read-only, with harmless redirections.
	ReadOnly bool
	// Unknown holds why the script is not read-only when it is neither absurd
	// nor dangerous: "unknown command deploy.sh", "does not parse: ...".
	Unknown []string
}
