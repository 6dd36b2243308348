package tools

import (
	"fmt"
	"time"
)

// Limit fills in one of a tool's size or time limits: a zero *v becomes
// def, and a negative one is an error naming the configuration key. Each
// tool's New calls it once per limit, e.g.
//
//	err := errors.Join(
//		tools.Limit("max_read_bytes", &cfg.MaxReadBytes, DefaultMaxReadBytes),
//		tools.Limit("max_list_entries", &cfg.MaxListEntries, DefaultMaxListEntries),
//	)
func Limit[T int | int64 | time.Duration](key string, v *T, def T) error {
	switch {
	case *v == 0:
		*v = def
	case *v < 0:
		return fmt.Errorf("%s %v must be positive", key, *v)
	}
	return nil
}
