package shell

import (
	"strings"
)

// Commands carried inside another program: an option, an operand or an
// environment variable whose value a program runs as a command (an
// editor's -c '!cmd', tar --to-command, rsync -e, git -c core.pager=,
// PAGER=, LESSOPEN=). One table says where; the walker parses what is
// carried as a nested script, so rm -rf / there is as absurd as anywhere.
// What cannot be seen (a value computed at run time, a script file) is a
// danger, never merely unknown.

// carried says how a program reads the command it is handed.
type carried uint8

const (
	shellText    carried = iota // a script for a shell: sh -c TEXT
	editorText                  // an editor, pager or debugger command: !CMD and shell CMD run a shell
	sqlText                     // a database client's command: \! CMD, system CMD, .shell CMD
	codeText                    // code in a language of the program's own (emacs --eval): a danger
	unseenFile                  // a file of commands this cannot read: a danger
	gitSetting                  // git -c KEY=VALUE: VALUE is carried when KEY runs programs
	pipeText                    // LESSOPEN: "|CMD %s", a shell command after a leading |
	remoteHelper                // git's ext:: transport: a command, with "% " for a space
)

// carrier is one place where a program runs a command it was handed.
type carrier struct {
	// Tools are the programs, space separated; "" for Vars rows, which
	// hold whatever command the variable reaches.
	Tools string
	// Opts are the options whose value carries the command: "-e --rsh".
	// "+" is a word that starts with + (vim +CMD); "@" is any operand;
	// "@WORD" is the operand after WORD (salt '*' cmd.run CMD); a word
	// like "-ex" is a single-dash long option.
	Opts string
	// Sub, when set, names the subcommands the options belong to: the row
	// applies only when one of them is among the operands (git rebase -x).
	Sub string
	// Prefixes, when set, are what a value must start with for the rest
	// to be the command, space separated: "exec=" for tar's
	// --checkpoint-action, "ProxyCommand=" for ssh -o.
	Prefixes string
	// Vars are environment variables whose value carries a command.
	Vars string
	Kind carried
	// subs, opts and prefixes are Sub, Opts and Prefixes split into
	// words once, by buildCarriers (STYLE habit 4).
	subs, opts, prefixes []string
	// Sample is a command line the tests read; it must come out absurd
	// (every sample carries rm -rf /).
	Sample string
}

// carriers is the catalogue.
var carriers = []carrier{
	// Editors, pagers, viewers and debuggers given a command or a hook.
	{Tools: "vim vi nvim view ex gvim vimdiff rvim rview evim", Opts: "-c --cmd +", Kind: editorText, Sample: "vim -c '!rm -rf /' -c q x"},
	{Tools: "vim vi nvim view ex gvim vimdiff", Opts: "-S -u", Kind: unseenFile, Sample: ""},
	{Tools: "less more most", Opts: "+", Kind: editorText, Sample: "less '+!rm -rf /' /etc/hosts"},
	{Tools: "emacs emacsclient", Opts: "--eval -eval -f --funcall -l --load -x --script", Kind: codeText},
	{Tools: "man", Opts: "-P --pager -H --html", Kind: shellText, Sample: "man -P 'rm -rf /' ls"},
	{Tools: "gdb", Opts: "-ex --eval-command -iex --init-eval-command", Kind: editorText, Sample: "gdb -batch -ex 'shell rm -rf /'"},
	{Tools: "gdb", Opts: "-x --command -ix --init-command", Kind: unseenFile},
	{Vars: "PAGER MANPAGER GIT_PAGER SYSTEMD_PAGER PSQL_PAGER BAT_PAGER DELTA_PAGER AWS_PAGER EDITOR VISUAL GIT_EDITOR GIT_SEQUENCE_EDITOR SUDO_EDITOR KUBE_EDITOR FCEDIT BROWSER", Kind: shellText, Sample: "PAGER='rm -rf /' man ls"},
	{Vars: "LESSOPEN LESSCLOSE", Kind: pipeText, Sample: "LESSOPEN='|rm -rf / %s' less x"},
	{Vars: "PROMPT_COMMAND BASH_ENV ENV GIT_SSH_COMMAND GIT_SSH GIT_EXTERNAL_DIFF GIT_ASKPASS SSH_ASKPASS SUDO_ASKPASS GIT_PROXY_COMMAND RSYNC_RSH RSYNC_CONNECT_PROG", Kind: shellText, Sample: "GIT_SSH_COMMAND='rm -rf /' git fetch"},

	// Version control: settings and options that run programs.
	{Tools: "git", Opts: "-c", Kind: gitSetting, Sample: "git -c core.pager='rm -rf /' log"},
	{Tools: "git", Opts: "--upload-pack --receive-pack --exec", Kind: shellText, Sample: "git clone --upload-pack='rm -rf /' x y"},
	{Tools: "git", Sub: "rebase", Opts: "-x --exec", Kind: shellText, Sample: "git rebase -x 'rm -rf /' HEAD~3"},
	{Tools: "git", Sub: "ls-remote clone fetch pull archive", Opts: "-u", Kind: shellText, Sample: "git ls-remote -u 'rm -rf /' origin"},
	{Tools: "git", Sub: "difftool", Opts: "-x --extcmd", Kind: shellText, Sample: "git difftool -x 'rm -rf /' HEAD"},
	{Tools: "git", Sub: "filter-branch", Opts: "--tree-filter --index-filter --msg-filter --env-filter --commit-filter --parent-filter --tag-name-filter", Kind: shellText, Sample: "git filter-branch --tree-filter 'rm -rf /' HEAD"},
	{Tools: "git", Opts: "@", Prefixes: "ext::", Kind: remoteHelper, Sample: "git ls-remote 'ext::rm -rf /'"},
	{Tools: "git", Opts: "@foreach @run", Kind: shellText, Sample: "git submodule foreach 'rm -rf /'"},

	// Archivers and sync tools.
	{Tools: "tar gtar bsdtar", Opts: "--to-command -I --use-compress-program --info-script -F --new-volume-script --rsh-command", Kind: shellText, Sample: "tar -xf a.tar --to-command='rm -rf /'"},
	{Tools: "tar gtar", Opts: "--checkpoint-action", Prefixes: "exec=", Kind: shellText, Sample: "tar -cf /dev/null x --checkpoint=1 --checkpoint-action=exec='rm -rf /'"},
	{Tools: "zip", Opts: "-TT --unzip-command", Kind: shellText, Sample: "zip a.zip x -T -TT 'rm -rf /'"},
	{Tools: "rsync", Opts: "-e --rsh --rsync-path", Kind: shellText, Sample: "rsync -e 'rm -rf /' a b:c"},
	{Tools: "scp sftp", Opts: "-S", Kind: shellText, Sample: "scp -S 'rm -rf /' a b:c"},
	{Tools: "ssh scp sftp autossh", Opts: "-o", Prefixes: "ProxyCommand= LocalCommand= KnownHostsCommand= RemoteCommand= ProxyCommand LocalCommand KnownHostsCommand RemoteCommand", Kind: shellText, Sample: "ssh -o ProxyCommand='rm -rf /' host"},
	{Tools: "ssh scp sftp", Opts: "-F", Kind: unseenFile},
	{Tools: "tcpdump", Opts: "-z", Kind: shellText, Sample: "tcpdump -w x.pcap -G 60 -z 'rm -rf /'"},
	{Tools: "flock sg", Opts: "-c --command", Kind: shellText, Sample: "flock /tmp/l -c 'rm -rf /'"},
	{Tools: "runuser", Opts: "-c --command --session-command", Kind: shellText, Sample: "runuser -l app -c 'rm -rf /'"},
	{Tools: "at batch", Opts: "-f", Kind: unseenFile},

	// Database clients' shell escapes.
	{Tools: "mysql mariadb", Opts: "-e --execute --init-command", Kind: sqlText, Sample: `mysql -e 'system rm -rf /'`},
	{Tools: "mysql mariadb", Opts: "--pager", Kind: shellText, Sample: "mysql --pager='rm -rf /'"},
	{Tools: "psql", Opts: "-c --command", Kind: sqlText, Sample: `psql -c '\! rm -rf /'`},
	{Tools: "sqlite3 duckdb", Opts: "@ -cmd", Kind: sqlText, Sample: "sqlite3 x.db '.shell rm -rf /'"},

	// Fleet tools and terminal multiplexers handed a command.
	{Tools: "ansible", Opts: "-a --args", Kind: shellText, Sample: "ansible all -m shell -a 'rm -rf /'"},
	{Tools: "pdsh clush pssh parallel-ssh prsh dsh", Opts: "@", Kind: shellText, Sample: "pdsh -w web1 'rm -rf /'"},
	{Tools: "salt salt-call salt-ssh", Opts: "@cmd.run @cmd.shell @cmd.exec_code @cmd.run_all @cmd.script", Kind: shellText, Sample: "salt '*' cmd.run 'rm -rf /'"},
	{Tools: "tmux", Opts: "@send-keys @send @run-shell @run @new-session @new @new-window @neww @split-window @splitw @respawn-pane", Kind: shellText, Sample: "tmux new -d 'rm -rf /'"},
	{Tools: "screen", Opts: "-X", Prefixes: "stuff", Kind: shellText},
}

// carrierIndex holds the carriers by program and by variable, built once.
type carrierIndex struct {
	tools map[string][]*carrier
	vars  map[string]*carrier
}

func buildCarriers() carrierIndex {
	idx := carrierIndex{tools: map[string][]*carrier{}, vars: map[string]*carrier{}}
	for i := range carriers {
		c := new(carrier) // a copy: the catalogue is shared by every Analyzer
		*c = carriers[i]
		c.subs, c.opts, c.prefixes = strings.Fields(c.Sub), strings.Fields(c.Opts), strings.Fields(c.Prefixes)
		for _, t := range strings.Fields(c.Tools) {
			idx.tools[t] = append(idx.tools[t], c)
		}
		for _, v := range strings.Fields(c.Vars) {
			idx.vars[v] = c
		}
	}
	return idx
}

// carriedBy judges the commands a program's options and operands carry.
// It reports whether any was found.
func (j *judge) carriedBy(name string, args []arg, depth int) bool {
	rows := j.a.carriers.tools[name]
	found := false
	for _, row := range rows {
		if len(row.subs) > 0 && !hasOperand(args, row.subs) {
			continue
		}
		for _, v := range row.values(args) {
			found = true
			j.carry(name, v, row.Kind, depth)
		}
	}
	return found
}

// carriedVar judges a variable that carries a command (PAGER=..., export
// GIT_SSH_COMMAND=...). known is false for a value computed at run time.
func (j *judge) carriedVar(name string, value arg, depth int) {
	if v := value.text; !value.dynamic && (strings.IndexByte(v, '/') >= 0 && runnerName(v) || commandString(v) ||
		runnerName(v) && j.a.carriers.vars[name] != nil) {
		// PAGER=/bin/sh, SHELL=/bin/bash, X='sh -c id': a shell handed to
		// a program through its environment.
		j.danger(name + "=" + clipWord(v) + " " + flRunsCode)
	}
	if strings.HasPrefix(name, "GIT_CONFIG_VALUE_") {
		j.carry(name, value, shellText, depth)
		return
	}
	if name == "GIT_CONFIG_PARAMETERS" {
		// 'key=value' 'key=value': the quoted pieces.
		for i, kv := range strings.Split(value.text, "'") {
			if i%2 == 1 {
				j.carry(name, arg{text: kv, dynamic: value.dynamic}, gitSetting, depth)
			}
		}
		return
	}
	if name == "TAR_OPTIONS" {
		// Options for every later tar: judged as tar's own.
		var words []arg
		for _, f := range strings.Fields(value.text) {
			words = append(words, arg{text: f, dynamic: value.dynamic})
		}
		j.remote(func() { j.carriedBy("tar", words, depth) })
		return
	}
	if row, ok := j.a.carriers.vars[name]; ok {
		// Whether setting it keeps a look a look is the variables' rule
		// (vars.go); here only what it would run is judged.
		j.remote(func() { j.carry(name, value, row.Kind, depth) })
	}
}

// values returns the words of args that carry a command for this row,
// after any prefix.
func (row *carrier) values(args []arg) []arg {
	var out []arg
	add := func(v arg) {
		if len(row.prefixes) == 0 {
			out = append(out, v)
			return
		}
		for _, p := range row.prefixes {
			if len(v.text) >= len(p) && strings.EqualFold(v.text[:len(p)], p) {
				rest := v.text[len(p):]
				if !strings.HasSuffix(p, "=") && !strings.HasSuffix(p, "::") {
					if rest == "" || rest[0] != ' ' && rest[0] != '\t' {
						continue
					}
				}
				out = append(out, arg{text: strings.TrimLeft(rest, " \t"), dynamic: v.dynamic})
				return
			}
		}
	}
	for _, o := range row.opts {
		for i := 0; i < len(args); i++ {
			a := args[i]
			t := a.text
			switch {
			case o == "+":
				if strings.HasPrefix(t, "+") && len(t) > 1 {
					add(arg{text: t[1:], dynamic: a.dynamic})
				}
			case o == "@":
				if !strings.HasPrefix(t, "-") || a.dynamic {
					add(a)
				}
			case strings.HasPrefix(o, "@"):
				if t == o[1:] && i+1 < len(args) {
					add(joinArgs(skipOptions(args[i+1:], "tsncxyFelLSTN")))
				}
			case a.dynamic && !strings.HasPrefix(t, "-"):
			case strings.HasPrefix(o, "--"):
				n, v, eq := strings.Cut(t, "=")
				if n != o && !(len(n) >= 6 && strings.HasPrefix(o, n)) {
					continue
				}
				if eq {
					add(arg{text: v, dynamic: a.dynamic})
				} else if i+1 < len(args) {
					add(args[i+1])
				}
			case len(o) > 2: // a single-dash long option: gdb -ex, tmux -X
				if t == o && i+1 < len(args) {
					add(args[i+1])
				}
			default: // -x VALUE or -xVALUE
				if t == o && i+1 < len(args) {
					add(args[i+1])
				} else if strings.HasPrefix(t, o) && len(t) > 2 && !strings.HasPrefix(t, "--") {
					add(arg{text: t[2:], dynamic: a.dynamic})
				}
			}
		}
	}
	return out
}

// hasOperand reports whether one of the words is among args.
func hasOperand(args []arg, words []string) bool {
	for _, a := range args {
		if in(a.text, words...) {
			return true
		}
	}
	return false
}

// skipOptions drops the leading options of args; the letters in valued
// take the next word as their value.
func skipOptions(args []arg, valued string) []arg {
	for len(args) > 0 && strings.HasPrefix(args[0].text, "-") && !args[0].dynamic && len(args[0].text) > 1 {
		t := args[0].text
		args = args[1:]
		if t == "--" {
			break
		}
		if len(t) == 2 && strings.IndexByte(valued, t[1]) >= 0 && len(args) > 0 {
			args = args[1:]
		}
	}
	return args
}

// joinArgs joins the words a program hands to a shell as one (tmux
// send-keys, salt cmd.run); dynamic when any is.
func joinArgs(args []arg) arg {
	var b strings.Builder
	dyn := false
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a.text == "Enter" || a.text == "C-m" {
			b.WriteByte('\n')
			continue
		}
		b.WriteString(a.text)
		dyn = dyn || a.dynamic
	}
	return arg{text: b.String(), dynamic: dyn}
}

// carry judges one carried command: what it runs stands (absurd, danger),
// and a carried command is never a look.
func (j *judge) carry(name string, v arg, kind carried, depth int) {
	if v.dynamic {
		j.danger(name + " runs a command built at run time (" + v.text + ")")
		return
	}
	switch kind {
	case unseenFile:
		j.danger(name + " runs commands from " + v.text + ", which cannot be seen here")
		return
	case codeText:
		j.danger(name + " runs code given on the command line")
		j.literalCommands(name, v.text, depth)
		return
	case gitSetting:
		key, val, ok := strings.Cut(v.text, "=")
		if !ok {
			return
		}
		if !gitRunsKey(key) {
			if !gitSafeKey(key) {
				j.unknown(name + " -c " + key + " changes how git works")
			}
			return
		}
		v.text = strings.TrimPrefix(val, "!")
	case remoteHelper:
		j.danger(name + " runs a command as a transport (ext::)")
		v.text = strings.ReplaceAll(v.text, "% ", " ")
	case pipeText:
		v.text = strings.TrimLeft(v.text, "|-")
		v.text = strings.ReplaceAll(v.text, "%s", "FILE")
	case editorText:
		j.unknown(name + " runs editor or debugger commands")
		j.editorCommand(name, v.text, depth)
		return
	case sqlText:
		j.sqlEscapes(name, v.text, depth)
		return
	}
	j.unknown(name + " runs the command " + v.text)
	if strings.TrimSpace(v.text) != "" {
		j.remote(func() { j.nested(v.text, depth) })
	}
}

// editorCommand judges an ex, less or gdb command: "!CMD", "r !CMD",
// "shell CMD" and "%!CMD" run CMD in a shell; system() and the embedded
// interpreters run code.
func (j *judge) editorCommand(name, text string, depth int) {
	t := strings.TrimLeft(text, ": ")
	if rest, ok := strings.CutPrefix(t, "shell "); ok {
		j.danger(name + " runs a shell command")
		j.remote(func() { j.nested(rest, depth) })
		return
	}
	if i := strings.IndexByte(t, '!'); i >= 0 {
		if rest := strings.TrimSpace(t[i+1:]); rest != "" {
			j.danger(name + " runs a shell command")
			j.remote(func() { j.nested(rest, depth) })
			return
		}
	}
	low := strings.ToLower(t)
	for _, w := range []string{"system(", "systemlist(", "term", "py ", "py3", "python", "lua", "perl", "ruby", "call ", "exe", "source", "so ", "!", "job"} {
		if strings.Contains(low, w) {
			j.danger(name + " runs code or programs from an editor command")
			j.literalCommands(name, t, depth)
			return
		}
	}
}

// sqlEscapes judges a database client's input: its destructive SQL, and
// the client's own commands that run a shell (\! CMD, system CMD, .shell
// CMD, .system CMD, \o |CMD, .once |CMD, COPY ... PROGRAM 'CMD').
func (j *judge) sqlEscapes(name, text string, depth int) {
	j.destructiveSQL(name, text)
	for _, line := range strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == ';' }) {
		l := strings.TrimSpace(line)
		low := strings.ToLower(l)
		var cmd string
		switch {
		case strings.HasPrefix(low, `\!`):
			cmd = l[2:]
		case strings.HasPrefix(low, "system "), strings.HasPrefix(low, ".shell "), strings.HasPrefix(low, ".system "):
			_, cmd, _ = strings.Cut(l, " ")
		case strings.Contains(low, "|") && (strings.HasPrefix(low, `\o`) || strings.HasPrefix(low, `\g`) || strings.HasPrefix(low, ".once") ||
			strings.HasPrefix(low, ".output") || strings.HasPrefix(low, ".import") || strings.HasPrefix(low, `\copy`) || strings.HasPrefix(low, "pager")):
			cmd = strings.Trim(l[strings.IndexByte(l, '|')+1:], `'" `)
		case strings.Contains(low, " program "):
			j.danger(name + " runs a program from SQL (COPY ... PROGRAM)")
			j.literalCommands(name, l, depth)
			continue
		default:
			continue
		}
		j.danger(name + " runs a shell command from its input")
		if strings.TrimSpace(cmd) != "" {
			j.remote(func() { j.nested(cmd, depth) })
		}
	}
}

// literalCommands judges the quoted strings of code in another language
// (awk's system("..."), emacs's (shell-command "..."), python's
// os.system('...')) as shell scripts, for their absurd and dangerous
// forms only: what the code does with them is already a danger.
func (j *judge) literalCommands(name, code string, depth int) {
	for i := 0; i < len(code); i++ {
		q := code[i]
		if q != '"' && q != '\'' && q != '`' {
			continue
		}
		end := i + 1
		for end < len(code) && code[end] != q {
			if code[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(code) {
			return
		}
		if lit := code[i+1 : end]; strings.ContainsAny(lit, " /") {
			j.remote(func() {
				before := len(j.res.Danger)
				j.nested(strings.NewReplacer(`\"`, `"`, `\'`, `'`, `\n`, "\n").Replace(lit), depth)
				// A string that is not a script does not parse: that is
				// no finding of its own here.
				if len(j.res.Danger) > before && strings.Contains(j.res.Danger[len(j.res.Danger)-1], "does not parse") {
					j.res.Danger = j.res.Danger[:before]
				}
			})
		}
		i = end
	}
}

// gitRunKeys are git settings whose value is a program or a shell command
// (or, for include.path and core.hooksPath, where more of them come from).
var gitRunKeys = []string{"core.pager", "core.editor", "core.sshcommand", "core.fsmonitor", "core.hookspath",
	"core.askpass", "core.gitproxy", "core.alternaterefscommand", "credential.helper", "diff.external",
	"sequence.editor", "gpg.program", "uploadpack.packobjectshook", "include.path", "web.browser",
	"sendemail.smtpserver", "sendemail.tocmd", "sendemail.cccmd", "protocol.ext.allow", "protocol.allow",
	"remote.*.uploadpack", "remote.*.receivepack", "remote.*.proxy", "alias.*", "pager.*", "diff.*.textconv",
	"diff.*.command", "filter.*.clean", "filter.*.smudge", "filter.*.process", "merge.*.driver",
	"mergetool.*.cmd", "difftool.*.cmd", "credential.*.helper", "gpg.*.program", "includeif.*.path",
	"browser.*.cmd", "man.*.cmd", "core.worktree", "safe.directory", "instaweb.httpd"}

// gitRunsKey reports whether a git setting runs a program.
func gitRunsKey(key string) bool {
	k := strings.ToLower(key)
	for _, pat := range gitRunKeys {
		if pre, suf, wild := strings.Cut(pat, ".*."); wild {
			if strings.HasPrefix(k, pre+".") && strings.HasSuffix(k, "."+suf) {
				return true
			}
			continue
		}
		if pre, ok := strings.CutSuffix(pat, ".*"); ok {
			if strings.HasPrefix(k, pre+".") {
				return true
			}
			continue
		}
		if k == pat {
			return true
		}
	}
	return false
}

// gitSafeKey reports whether a setting given with git -c only changes how
// a look prints: colours, formats, abbreviations, quoting.
func gitSafeKey(key string) bool {
	k := strings.ToLower(key)
	for _, p := range []string{"color.", "log.", "format.", "column.", "i18n.", "advice.", "grep.", "blame.", "status."} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return in(k, "core.quotepath", "core.abbrev", "diff.renames", "diff.noprefix", "diff.mnemonicprefix",
		"diff.relative", "diff.algorithm", "diff.context", "diff.interhunkcontext", "core.ignorecase",
		"core.precomposeunicode", "user.name", "user.email", "init.defaultbranch", "pull.rebase")
}
