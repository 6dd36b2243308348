package main

import (
	"strings"
	"testing"

	"github.com/countersign/countersign/tools/fence"
	"github.com/countersign/countersign/tools/mcptool"
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

// How calls without a card are fenced is said by config check (and, when
// the kernel cannot fence, under the banner); MCP servers get the command
// tool's user and fence.
func TestFenceLineAndMCPAsCommands(t *testing.T) {
	_, probe := fence.Probe()
	type fenceCase struct {
		name      string
		mode      string
		enabled   bool
		want      string
		warn      bool
		mcpFenced bool
	}
	tests := []fenceCase{
		{"off", shelltool.FenceOff, true, "fence.mode is off", false, false},
		{"shell tool off", "", false, "", false, probe == nil},
	}
	if probe == nil {
		tests = append(tests, fenceCase{"auto on a kernel with Landlock", "", true, "the kernel fences calls that run without a card (Landlock ABI", false, true})
	} else {
		tests = append(tests, fenceCase{"auto on a kernel without Landlock", "", true, "this kernel cannot fence calls", true, false})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c fileConfig
			c.Tools.Command.Enabled = &tt.enabled
			c.Tools.Command.Config.Fence.Mode = tt.mode
			c.Tools.Command.Config.RunAs = "65534:65534"
			line, warn := fenceLine(c)
			if !strings.Contains(line, tt.want) || warn != tt.warn || (tt.want == "") != (line == "") {
				t.Errorf("fenceLine = %q, %v; want %q, %v", line, warn, tt.want, tt.warn)
			}
			o := mcpAsCommands(c, mcptool.Options{})
			if o.RunAs != "65534:65534" || o.Fence != tt.mcpFenced {
				t.Errorf("MCP options: run_as %q fence %v; want the command user, fence %v", o.RunAs, o.Fence, tt.mcpFenced)
			}
		})
	}
}
