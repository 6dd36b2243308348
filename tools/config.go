package tools

import (
	"fmt"
	"time"
)

// Limit fills in a size, count or time setting: a zero *v becomes def, and
// a negative one is an error naming the configuration key. Each tool's New
// calls it once per limit, and so do the agent's and the model client's
// configurations, e.g.
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
