package main

import "github.com/countersign/countersign/tools/shelltool"

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
