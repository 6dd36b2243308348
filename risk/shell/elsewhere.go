package shell

import (
	"strings"
)

// Commands that run other commands later or elsewhere: trap and alias run
// them later, ssh on another host, script through a shell, docker and
// kubectl exec inside a container. rm -rf / is just as absurd there.

// trap 'CMD' SIGNAL runs CMD later; alias NAME='CMD' may. Neither is a
// look, and what they would run is judged for absurd and dangerous forms.
func deferred(j *judge, c *cmd) {
	j.unknown(c.name + " sets up a command to run later")
	for _, a := range c.args {
		if strings.HasPrefix(a.text, "-") {
			continue
		}
		text := a.text
		if c.name == "alias" {
			var name string
			name, text, _ = strings.Cut(text, "=")
			if !a.dynamic && text != "" {
				if j.aliases == nil {
					j.aliases = map[string]string{}
				}
				j.aliases[name] = text
			}
		}
		if a.dynamic {
			j.danger(c.name + " runs a command built at run time")
		} else if text != "" {
			j.remote(func() { j.nested(text, c.depth) })
		}
		if c.name == "trap" {
			return // the rest are signal names
		}
	}
}

// remote judges commands that run somewhere the script cannot look after
// them (another host, a container, later): absurd and dangerous findings
// stand; what is merely not read-only is already said by the caller.
func (j *judge) remote(judge func()) {
	before := len(j.res.Unknown)
	judge()
	j.res.Unknown = j.res.Unknown[:before]
}

var sshSpec = mustSpec("-b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w -B")

// ssh HOST COMMAND runs COMMAND on another machine through its shell.
func ssh(j *judge, c *cmd) {
	_, rest := sshSpec.parseLeading(c.args)
	j.unknown(c.name + " runs commands on another host")
	if len(rest) > 1 {
		j.remote(func() { j.shellString(c.name, rest[1:], c.depth) })
		if len(rest) == 2 && shells[rest[1].text] {
			j.danger(c.name + " " + rest[0].text + " " + rest[1].text + " " + effBlindShell)
		}
	} else if len(rest) == 1 && !hasAnyOpt(c.args, "-N -O -G -V -Q") {
		j.danger(c.name + " " + rest[0].text + " " + effBlindShell)
	}
}

var scriptSpec = mustSpec("-c -E -I -O -B -T -t -m --command --echo --log-in --log-out --log-io --log-timing --logging-format")

// script -c COMMAND runs COMMAND through a shell, recording a typescript.
func scriptCmd(j *judge, c *cmd) {
	opts, _ := scriptSpec.parseInto(j, c.args)
	j.unknown(c.name + " records a session to a file")
	for _, o := range opts {
		if o.is('c', "command") {
			if o.value.dynamic {
				j.danger(c.name + " -c runs a command built at run time")
				continue
			}
			j.nested(o.value.text, c.depth)
		}
	}
}
