package shell

import (
	"strings"

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
			if prevOpt != "" && !info.statements[prevOpt] && (codeOption(prevOpt, true) || !reader && (prevOpt == "-e" || prevOpt == "-c") && looksLikeCode(a.text)) {
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
	// Running code: an option that takes code. A database client's
	// statement option is its own judge's (dbclients.go).
	if info.statements[w.opt] {
		return false
	}
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
