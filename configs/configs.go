// Package configs holds the documented example configuration, embedded so
// that `countersign config example` prints it and a test keeps it valid and
// complete.
package configs

import _ "embed"

// Example is configs/countersign.example.yaml: every key, with its default
// or an example value, and a comment saying what it does.
//
//go:embed countersign.example.yaml
var Example []byte
