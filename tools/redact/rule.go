package redact

//go:generate go run ./internal/rulegen

// rule is one of gitleaks' rules as the generated table holds it
// (rules_gitleaks.go): what the detector needs to apply it to text, the
// expression still a source to compile when it is first needed.
type rule struct {
	id string
	// regex finds a candidate; keywords are lower-case words of which the
	// text must hold one for regex to be tried at all (none: always).
	regex    string
	keywords []string
	// entropy, when not zero, is the Shannon entropy the secret must
	// exceed; secretGroup the group of regex that is the secret (0: the
	// first group that matched anything, or the whole match).
	entropy     float64
	secretGroup int
	allow       []allowlist
}

// allowlist lets a candidate through: when its regex matches the target
// (the secret, or the whole "match", or the "line"), or the secret holds
// one of its stopwords; when and is set, both of those it has must hold.
type allowlist struct {
	and       bool
	target    string
	regex     string // gitleaks' regexes joined into one, "" when none
	stopwords []string
}
