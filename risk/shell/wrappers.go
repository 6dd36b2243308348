package shell

import (
	"strings"
)

// Wrappers run another command: sudo ls, timeout 5 ls, xargs rm. The inner
// command is judged as if it stood alone; the wrapper adds what it does
// itself (sudo: a danger; xargs: feeds unknown input to the inner command).

// parseLeading reads the wrapper's own options, stopping at the first
// operand or after "--": everything after belongs to the inner command.
func (sp optSpec) parseLeading(args []arg) (opts []opt, rest []arg) {
	for i := 0; i < len(args); i++ {
		t := args[i].text
		if args[i].dynamic || len(t) < 2 || t[0] != '-' {
			return opts, args[i:]
		}
		if t == "--" {
			return opts, args[i+1:]
		}
		// Parsed alone, an option that takes a value has none at the end
		// of its word: the value is the next word.
		o, _ := sp.parseArgs(args[i : i+1])
		if n := len(o); n > 0 && !o[n-1].hasValue && sp.has(o[n-1]) && i+1 < len(args) {
			i++
			o[n-1].value, o[n-1].hasValue = args[i], true
		}
		opts = append(opts, o...)
	}
	return opts, nil
}

// wrapper builds the handler of a command that runs its operands as a
// command. danger, when set, is recorded for the wrapper itself.
func wrapper(spec string, danger string) handler {
	sp := mustSpec(spec)
	return func(j *judge, c *cmd) {
		_, rest := sp.parseLeading(c.args)
		if danger != "" {
			j.danger(c.name + " " + danger)
		}
		if len(rest) == 0 {
			if danger == "" {
				j.unknown(c.name + " with no command")
			}
			return
		}
		j.command(rest, c.depth)
	}
}

var sudoSpec = mustSpec("-u -g -C -D -h -p -r -t -U -T --user --group --close-from --chdir --host --prompt --role --type --other-user --command-timeout")

// sudo, doas, pkexec, run0: a danger whatever they run (SPEC rule 4).
func sudo(j *judge, c *cmd) {
	opts, rest := sudoSpec.parseLeading(c.args)
	for len(rest) > 0 && isAssignment(rest[0].text) {
		name, value, _ := strings.Cut(rest[0].text, "=")
		j.carriedVar(name, arg{text: value, dynamic: rest[0].dynamic}, c.depth)
		rest = rest[1:]
	}
	if len(rest) == 0 {
		for _, o := range opts {
			if o.is('i', "login") || o.is('s', "shell") {
				j.danger(c.name + " opens a root shell")
				return
			}
		}
		j.danger(c.name + " changes what root may do")
		return
	}
	j.danger(c.name + " runs " + rest[0].text + " as root")
	j.command(rest, c.depth)
}

var suSpec = mustSpec("-c -s -g -G -w --command --session-command --shell --group --supp-group --whitelist-environment")

// su runs a shell or -c COMMAND as another user.
func su(j *judge, c *cmd) {
	opts, _ := suSpec.parseInto(j, c.args)
	j.danger(c.name + " runs commands as another user")
	for _, o := range opts {
		if o.is('c', "command") || o.long == "session-command" {
			if o.value.dynamic {
				j.danger(c.name + " -c runs a command built at run time")
				continue
			}
			j.nested(o.value.text, c.depth)
		}
	}
}

func isAssignment(t string) bool {
	name, _, ok := strings.Cut(t, "=")
	if !ok || name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

var envSpec = mustSpec("-u -C -S -P --unset --chdir --split-string")

// env [-i] [-u NAME] [NAME=VALUE]... [COMMAND]: prints the environment
// without a command; else judges the command and the variables it sets.
func env(j *judge, c *cmd) {
	args := c.args
	for len(args) > 0 && args[0].text == "-" {
		args = args[1:] // env - is env -i
	}
	opts, rest := envSpec.parseLeading(args)
	var split []arg
	for _, o := range opts {
		if o.is('S', "split-string") {
			if o.value.dynamic {
				j.unknown("env -S splits a string built at run time")
				return
			}
			for _, f := range strings.Fields(o.value.text) {
				split = append(split, arg{text: f})
			}
		}
	}
	for len(rest) > 0 && isAssignment(rest[0].text) {
		name, value, _ := strings.Cut(rest[0].text, "=")
		j.carriedVar(name, arg{text: value, dynamic: rest[0].dynamic}, c.depth)
		j.exportsPreload(name)
		if !safePrefixVar(name, value, !rest[0].dynamic) {
			j.unknown("env sets " + name)
		}
		rest = rest[1:]
	}
	rest = append(split, rest...)
	if len(rest) == 0 {
		return // prints the (scrubbed) environment
	}
	for _, o := range opts {
		if o.is('C', "chdir") {
			// env -C DIR CMD runs CMD in DIR: followed like cd.
			outer := j.cwd
			cdCheck(j, &cmd{name: "cd"}, nil, []arg{o.value})
			j.command(rest, c.depth)
			j.cwd = outer
			return
		}
	}
	j.command(rest, c.depth)
}

var timeoutSpec = mustSpec("-s -k --signal --kill-after")

// timeout DURATION COMMAND.
func timeout(j *judge, c *cmd) {
	_, rest := timeoutSpec.parseLeading(c.args)
	if len(rest) < 2 {
		j.unknown("timeout with no command")
		return
	}
	j.command(rest[1:], c.depth)
}

var commandSpec = mustSpec("")

// command [-p] [-v|-V] NAME: with -v or -V and one name it only prints
// what NAME is; anything else is judged as the command it names.
func command(j *judge, c *cmd) {
	opts, rest := commandSpec.parseLeading(c.args)
	for _, o := range opts {
		if (o.is('v', "") || o.is('V', "")) && len(rest) <= 1 {
			return // command -v NAME prints what NAME is; with more words, judge them as run
		}
	}
	if len(rest) == 0 {
		return
	}
	j.command(rest, c.depth)
}

var timeSpec = mustSpec("-o -f --output --format")

// time [-o FILE] COMMAND (the program, not the shell keyword).
func timeCmd(j *judge, c *cmd) {
	opts, rest := timeSpec.parseLeading(c.args)
	for _, o := range opts {
		if o.is('o', "output") {
			j.output(o.value, "time -o")
		}
	}
	if len(rest) > 0 {
		j.command(rest, c.depth)
	}
}

var ioniceSpec = mustSpec("-c -n -p -P -u --class --classdata --pid --pgid --uid")

func ionice(j *judge, c *cmd) {
	opts, rest := ioniceSpec.parseLeading(c.args)
	for _, o := range opts {
		if o.is('p', "pid") || o.is('P', "pgid") || o.is('u', "uid") {
			j.unknown("ionice changes the priority of running processes")
			return
		}
	}
	if len(rest) == 0 {
		j.unknown("ionice with no command")
		return
	}
	j.command(rest, c.depth)
}

// busybox APPLET ARGS: the applet is the command.
func busybox(j *judge, c *cmd) {
	if len(c.args) == 0 || strings.HasPrefix(c.args[0].text, "-") {
		j.unknown("busybox with no applet")
		return
	}
	j.command(c.args, c.depth)
}

var xargsSpec = mustSpec("-a -d -E -I -L -n -P -s -J -R --arg-file --delimiter --eof --max-lines --max-args --max-procs --max-chars --process-slot-var")

// xargs COMMAND: the command gets words from standard input. Into a reader
// it is still a look (xargs grep foo); into anything else it is "xargs into
// a writer", a danger, since nobody can see which files it will touch.
func xargs(j *judge, c *cmd) {
	opts, rest := xargsSpec.parseLeading(c.args)
	argFile(j, c.name, opts)
	if len(rest) == 0 {
		return // xargs alone is echo
	}
	if splicesCode(opts, rest) {
		// ls | xargs -I{} sh -c 'wc -l {}': a file named $(rm -rf ~) runs.
		j.danger(c.name + " -I puts its input into the code " + rest[0].text + " runs")
	}
	j.feed(c.name, rest, c.depth)
}

// splicesCode reports whether xargs -I R (or -i, R={}) hands a shell or
// an interpreter a script that holds R, which the input replaces.
func splicesCode(opts []opt, rest []arg) bool {
	repl := ""
	for _, o := range opts {
		switch {
		case o.is('I', ""):
			repl = o.value.text
		case o.is('i', "replace"):
			repl = "{}"
			if o.hasValue && o.value.text != "" {
				repl = o.value.text
			}
		}
	}
	if repl == "" {
		return false
	}
	name, _, _ := commandName(rest[0])
	if !shells[name] && !interpreterKnown(name) && name != "eval" && name != "bash" {
		return false
	}
	for _, a := range rest[1:] {
		if strings.Contains(a.text, repl) {
			return true
		}
	}
	return false
}

// argFile: xargs -a FILE echo hands the lines of FILE to the command, which
// may print them: a secret there is read.
func argFile(j *judge, name string, opts []opt) {
	for _, o := range opts {
		if o.hasValue && o.is('a', "arg-file") {
			j.secret(name+" -a", o.value)
		}
	}
}

// feed judges a command that gets unseen arguments from a wrapper (xargs,
// parallel, find -exec): absurd and dangerous findings stand; if it is not
// read-only, that is a danger of its own.
func (j *judge) feed(wrapper string, argv []arg, depth int) {
	before := len(j.res.Unknown)
	// The input adds words nobody has seen: to a reader with options that
	// write (ls | xargs sed -n 1p, and a file called -i), that is not a look.
	full := append(append(make([]arg, 0, len(argv)+1), argv...), arg{text: "$(" + wrapper + " input)", dynamic: true})
	j.command(full, depth)
	if len(j.res.Unknown) > before {
		j.res.Unknown = j.res.Unknown[:before]
		j.danger(wrapper + " feeds its input to " + argv[0].text + ", which is not read-only")
	}
}

var parallelSpec = mustSpec("-j -S -a -d -I -n -N -L -C -E --jobs --results --res --arg-file --delimiter --colsep --joblog --tmpdir --workdir --sshlogin --halt --delay --timeout --basefile --return --max-args --max-replace-args --tag-string --env --memfree --load")

// parallel COMMAND ::: INPUTS, or parallel ::: COMMANDS.
func parallel(j *judge, c *cmd) {
	opts, rest := parallelSpec.parseLeading(c.args)
	argFile(j, c.name, opts)
	j.unknown("parallel runs commands in parallel")
	var command, inputs []arg
	for i, a := range rest {
		if strings.HasPrefix(a.text, ":::") {
			command, inputs = rest[:i], rest[i+1:]
			break
		}
		command = rest[:i+1]
	}
	if len(command) > 0 {
		j.feed(c.name, command, c.depth)
		return
	}
	for _, in := range inputs {
		if in.dynamic {
			j.danger("parallel runs commands built at run time")
			continue
		}
		j.nested(in.text, c.depth)
	}
}

var watchSpec = mustSpec("-n -d --interval --differences -q --equexit")

// watch COMMAND runs it again and again through sh -c (or exec with -x).
func watch(j *judge, c *cmd) {
	opts, rest := watchSpec.parseLeading(c.args)
	j.unknown("watch runs a command again and again")
	if len(rest) == 0 {
		return
	}
	if hasOpt(opts, 'x', "exec") {
		j.command(rest, c.depth)
		return
	}
	j.shellString(c.name, rest, c.depth)
}

// shellString judges words a command joins with spaces and hands to a shell
// (eval, watch, ssh): each must be known.
func (j *judge) shellString(name string, words []arg, depth int) {
	var b strings.Builder
	for i, w := range words {
		if w.dynamic {
			j.danger(name + " runs a command built at run time")
			return
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w.text)
	}
	j.nested(b.String(), depth)
}

var chrootSpec = mustSpec("--userspec --groups")

// chroot DIR [COMMAND]: runs in another root; judged but never a look.
func chroot(j *judge, c *cmd) {
	_, rest := chrootSpec.parseLeading(c.args)
	j.unknown("chroot runs a command in another root")
	if len(rest) > 1 {
		j.farSide("chroot "+rest[0].text, rest[1:], c.depth)
	} else {
		j.danger("chroot " + effBlindShell)
	}
}

// taskset MASK COMMAND, or taskset -p (changes a running process).
func taskset(j *judge, c *cmd) {
	opts, rest := commandSpec.parseLeading(c.args)
	if hasOpt(opts, 'p', "pid") || len(rest) < 2 {
		j.unknown("taskset changes a running process")
		return
	}
	j.command(rest[1:], c.depth)
}

var execSpec = mustSpec("-a")

// exec COMMAND replaces the shell; exec alone only applies its
// redirections (exec 2>/dev/null), which are judged where they stand.
func execCmd(j *judge, c *cmd) {
	_, rest := execSpec.parseLeading(c.args)
	if len(rest) > 0 {
		j.command(rest, c.depth)
	}
}
