package main

import (
	"cmp"
	"fmt"

	"github.com/countersign/countersign/tools/fence"
	"github.com/countersign/countersign/tools/mcptool"
	"github.com/countersign/countersign/tools/shelltool"
)

// commandsNotAsRoot is run's option for the countersign binary (runMain):
// a bot running as root (euid 0) with no tools.execute_command.run_as runs
// its commands as nobody (shelltool.RootDefault), since a root command can
// read the bot's environment and configuration whatever else is done,
// unless tools.execute_command.allow_root says root is meant. Tests that
// call run directly keep their commands as the test's own user.
func commandsNotAsRoot(euid int) option {
	return func(c *fileConfig) {
		cmd := &c.Tools.Command
		if !cmd.AllowRoot {
			cmd.Config.RunAs = shelltool.RootDefault(cmd.Config.RunAs, euid)
		}
	}
}

// mcpAsCommands gives MCP stdio servers the command tool's fences
// (tools/mcptool/program.go): its user (run_as as resolved, so nobody for
// the countersign binary running as root, see commandsNotAsRoot) and,
// unless tools.execute_command.fence.mode is off or the kernel cannot
// fence, the kernel's fence.
func mcpAsCommands(cfg fileConfig, o mcptool.Options) mcptool.Options {
	c := cfg.Tools.Command
	o.RunAs = c.Config.RunAs
	_, err := fence.Probe()
	o.Fence = c.Config.Fence.Mode != shelltool.FenceOff && err == nil
	return o
}

// unfencedTools names the tools whose calls this kernel cannot fence
// (agent.Config.Unfenced): without Landlock, and with the fence not
// switched off, a command that would run without a card gets one.
func unfencedTools(cfg fileConfig) map[string]string {
	c := cfg.Tools.Command
	if !on(c.Enabled, true) || c.Config.Fence.Mode == shelltool.FenceOff {
		return nil
	}
	if _, err := fence.Probe(); err != nil {
		return map[string]string{shelltool.Name: "this host's kernel cannot fence a command that runs without a card (" + err.Error() +
			"), so a person approves it instead (tools.execute_command.fence.mode: off runs such commands unfenced)"}
	}
	return nil
}

// notOfflineTools names the tools whose calls on the model's low alone
// this host cannot keep off the network (agent.Config.NotOffline): the
// kernel fences, fence.network is deny, but a network namespace cannot be
// made (a container's default seccomp profile), so such a call gets a card
// rather than failing to start.
func notOfflineTools(cfg fileConfig) map[string]string {
	c := cfg.Tools.Command
	if !on(c.Enabled, true) || c.Config.Fence.Mode == shelltool.FenceOff || c.Config.Fence.Network == "allow" {
		return nil
	}
	if _, err := fence.Probe(); err != nil {
		return nil // unfencedTools makes every such call a card already
	}
	if err := fence.ProbeOffline(); err != nil {
		return map[string]string{shelltool.Name: "this host cannot keep a command the model alone rated low off the network (" + err.Error() +
			"), so a person approves it instead (tools.execute_command.fence.network: allow runs it fenced but online)"}
	}
	return nil
}

// fenceLine says how calls that run without a card are fenced on this
// kernel, for config check; warn is set when the kernel cannot fence
// them, for the banner too.
func fenceLine(cfg fileConfig) (line string, warn bool) {
	c := cfg.Tools.Command
	if !on(c.Enabled, true) {
		return "", false
	}
	if c.Config.Fence.Mode == shelltool.FenceOff {
		return "tools.execute_command.fence.mode is off: calls that run without a card, and MCP servers, run without the kernel's fence", false
	}
	v, err := fence.Probe()
	if err != nil {
		return fmt.Sprintf("this kernel cannot fence calls that run without a card (%v): each command that would "+
			"run without one gets a card instead; MCP servers run unfenced. "+
			"Set tools.execute_command.fence.mode: off to run them unfenced knowingly", err), true
	}
	if why := notOfflineTools(cfg)[shelltool.Name]; why != "" {
		return fmt.Sprintf("the kernel fences calls that run without a card (Landlock ABI %d, no_new_privs), but %s", v, why), true
	}
	return fmt.Sprintf("the kernel fences calls that run without a card (Landlock ABI %d, no_new_privs): "+
		"writes only in the root and a private TMPDIR, none for a read-only call; the model's low alone is offline (fence.network: %s)",
		v, cmp.Or(c.Config.Fence.Network, "deny")), false
}
