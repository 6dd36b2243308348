package testenv

import (
	"os"
	"strings"
)

// Running reports whether a live process (not a zombie) runs whose command
// line holds command, its words separated as the kernel keeps them or by
// spaces. Give a command no other test runs (an odd number of seconds to
// sleep), since tests of other packages run beside it.
func Running(command string) bool {
	want := strings.ReplaceAll(command, " ", "\x00")
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && (strings.Contains(string(b), want) || strings.Contains(string(b), command)) {
			if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && strings.Contains(string(st), ") Z") {
				continue // a zombie: dead, not yet reaped
			}
			return true
		}
	}
	return false
}
