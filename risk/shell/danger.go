package shell

import (
	"strings"
)

// Code-level dangers (SPEC §2 rule 4): commands a person must approve,
// whatever the LLM says.

// writes builds the handler of a command that changes files, no more: not
// a look, not a danger.
func writes(what string) handler {
	return func(j *judge, c *cmd) { j.unknown(c.name + " " + what) }
}

// initCmd: init 0 and init 6 power off and reboot; other levels too.
func initCmd(j *judge, c *cmd) {
	if len(c.args) == 0 {
		j.unknown("init with no runlevel")
		return
	}
	j.danger(c.name + " " + c.args[0].text + " changes the runlevel")
}

// eval runs its words as code: a danger, and the code is judged too.
func eval(j *judge, c *cmd) {
	j.danger("eval runs code built at run time")
	if len(c.args) > 0 {
		j.shellString(c.name, c.args, c.depth)
	}
}

// source FILE runs a script in this shell.
func source(j *judge, c *cmd) {
	if len(c.args) == 0 {
		j.unknown(c.name + " with no file")
		return
	}
	if c.args[0].dynamic {
		j.danger(c.name + " runs code from " + c.args[0].text)
		return
	}
	if stdinPaths[c.args[0].text] {
		// What standard input holds is judged where it is fed (a here-
		// document, echo ... |); a download piped in is a danger there.
		j.unknown(c.name + " runs a script from standard input")
		return
	}
	j.unknown(c.name + " runs the script " + c.args[0].text)
}

// shells can run a script given with -c; that script is parsed again and
// judged like the rest, so bash -c 'ls' is still a look.
var shells = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true,
	"ash": true, "fish": true, "csh": true, "tcsh": true, "yash": true, "posh": true,
}

var shellSpec = mustSpec("-o -O --rcfile --init-file")

func shell(j *judge, c *cmd) {
	opts, ops := shellSpec.parseLeading(c.args)
	script := false
	for _, o := range opts {
		if o.short == 'c' || o.long == "command" {
			script = true
		}
		// bash -k -c 'ls LD_PRELOAD=x': -k and -a change what the script's
		// assignments do, which the nested judge does not know.
		if o.short == 'k' || o.short == 'a' || o.short == 'o' && in(o.value.text, "keyword", "allexport") {
			j.unknown(c.name + " " + o.String() + " changes how the script's assignments work")
		}
	}
	switch {
	case script && len(ops) == 0:
		j.unknown(c.name + " -c with no script")
	case script && ops[0].dynamic:
		j.danger(c.name + " -c runs a script built at run time")
	case script:
		j.nested(ops[0].text, c.depth)
	case len(ops) == 0 && !j.fedNow:
		// timeout 5 /bin/sh, git -c core.pager=sh, env /bin/sh: a shell
		// handed to another program, or started to read a terminal.
		j.danger(c.name + " starts a shell with no script, which runs whatever reaches it: " + flRunsCode)
	case len(ops) == 0:
		j.unknown(c.name + " reads a script from standard input")
	case ops[0].dynamic:
		j.danger(c.name + " runs a script from " + ops[0].text)
	default:
		j.unknown(c.name + " runs the script " + ops[0].text)
	}
}

// interpreters maps each interpreter to the options that hand it code on
// the command line. A cluster holding one of the letters counts (perl -ne).
var interpreters = map[string]string{
	"python": "c", "python2": "c", "python3": "c", "pypy": "c", "pypy3": "c",
	"perl": "eE", "ruby": "e", "node": "ep", "nodejs": "ep", "deno": "", "bun": "e",
	"php": "rR", "lua": "e", "luajit": "e", "Rscript": "e", "tclsh": "", "pwsh": "c", "powershell": "c",
	"osascript": "e", "jshell": "", "groovy": "e", "julia": "e", "erl": "", "elixir": "e",
}

// interpreterName strips a version: python3.12 is python3.
func interpreterName(name string) string {
	if _, ok := interpreters[name]; ok {
		return name
	}
	return strings.TrimRight(name, "0123456789.")
}

func interpreter(j *judge, c *cmd) {
	if c.trusted && versionOnly(c.name, c.args) {
		return // python3 --version
	}
	flags := interpreters[interpreterName(c.name)]
	for i, a := range c.args {
		t := a.text
		if a.dynamic || !strings.HasPrefix(t, "-") {
			break
		}
		code := ""
		switch {
		case t == "--eval" || t == "--print" || strings.EqualFold(t, "-command") || strings.EqualFold(t, "-encodedcommand"):
		case !strings.HasPrefix(t, "--") && strings.ContainsAny(t[1:], flags) && flags != "":
			// perl -e'...' holds its code; python3 -c CODE has it next.
			if k := strings.IndexAny(t[1:], flags); k+2 < len(t) {
				code = t[k+2:]
			}
		default:
			continue
		}
		if code == "" && i+1 < len(c.args) {
			code = c.args[i+1].text
		}
		j.danger(c.name + " " + t + " runs code given on the command line")
		j.interpreterCode(c.name, code, c.depth)
		return
	}
	if len(c.args) == 0 && !j.fedNow {
		j.danger(c.name + " starts an interpreter with no program, which runs whatever reaches it: " + flRunsCode)
		return
	}
	for _, a := range c.args {
		if !strings.HasPrefix(a.text, "-") || a.dynamic {
			if a.dynamic {
				j.danger(c.name + " runs code from " + a.text)
				return
			}
			if c.name == "deno" && a.text == "eval" {
				j.danger("deno eval runs code given on the command line")
				return
			}
			break
		}
	}
	j.unknown(c.name + " runs a program")
}

// destructiveWords, in a database client's command line, mean it is asked
// to destroy data. The SQL tool judges SQL properly; this is the shell
// side's coarse look at the same danger.
var dbClients = map[string]bool{"mysql": true, "mariadb": true, "psql": true, "sqlite3": true, "redis-cli": true,
	"mongo": true, "mongosh": true, "clickhouse-client": true, "cqlsh": true, "mysqladmin": true}

var destructiveWords = []string{"DROP", "TRUNCATE", "DELETE", "ALTER", "FLUSHALL", "FLUSHDB",
	"SHUTDOWN", "DROPDATABASE", "DELETEMANY", "REMOVE(", "UPDATE", "GRANT", "REVOKE", "CONFIG SET", "DEBUG"}

func dbClient(j *judge, c *cmd) {
	if c.trusted && (versionOnly(c.name, c.args) || j.dbRead(c)) {
		return // psql --version, mysql -e 'SHOW PROCESSLIST', redis-cli info (dbclients.go)
	}
	var all strings.Builder
	for _, a := range c.args {
		all.WriteString(strings.ToUpper(a.text))
		all.WriteByte(' ') // redis-cli config set: the words make one command
	}
	for _, w := range destructiveWords {
		if strings.Contains(all.String(), w) {
			j.danger(c.name + " runs " + w)
			return
		}
	}
	j.unknown(c.name + " talks to a database")
}
