package redact

// Config is the tools.redact section of the configuration file.
type Config struct {
	// Enabled turns the scanner on; default true. Off, secrets in tool
	// output reach the model, the chat, the cards and the audit log.
	Enabled *bool `yaml:"enabled"`
	// Allow lists exact values that pass even when a rule matches them
	// (a published test token, a public id that looks like a key).
	Allow []string `yaml:"allow"`
}

// On reports whether redaction is on: Enabled when given, else true.
func (c Config) On() bool { return c.Enabled == nil || *c.Enabled }
