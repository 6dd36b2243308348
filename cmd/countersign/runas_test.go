package main

import (
	"testing"

	"github.com/countersign/countersign/tools/shelltool"
)

// The binary runs a root bot's commands as nobody unless run_as or
// allow_root says otherwise; other users keep their own.
func TestCommandsNotAsRoot(t *testing.T) {
	tests := []struct {
		name      string
		euid      int
		runAs     string
		allowRoot bool
		want      string
	}{
		{"root without run_as", 0, "", false, shelltool.Unprivileged},
		{"root with run_as", 0, "1000", false, "1000"},
		{"root with allow_root", 0, "", true, ""},
		{"another user", 1000, "", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c fileConfig
			c.Tools.Command.Config.RunAs, c.Tools.Command.AllowRoot = tt.runAs, tt.allowRoot
			commandsNotAsRoot(tt.euid)(&c)
			if got := c.Tools.Command.Config.RunAs; got != tt.want {
				t.Errorf("run_as = %q, want %q", got, tt.want)
			}
			if w := rootWarning(c, tt.euid); (w != "") != (tt.euid == 0 && tt.want == "" && !tt.allowRoot) {
				t.Errorf("root warning %q", w)
			}
		})
	}
}
