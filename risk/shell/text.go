package shell

import (
	"path"
	"strings"
)

// Readers with a program of their own: sed scripts, awk programs and find
// expressions can write files or run commands, so each is read here.

// sedCheck: scripts come from -e or the first operand; -f hides the script
// in a file, which is not read here.
func sedCheck(j *judge, c *cmd, opts []opt, ops []arg) string {
	scripts := 0
	for _, o := range opts {
		switch {
		case o.is('f', "file"):
			return "sed -f runs a script from a file"
		case o.is('e', "expression"):
			scripts++
			if why := j.sedScript(o.value, c.depth); why != "" {
				return why
			}
		}
	}
	if scripts == 0 {
		if len(ops) == 0 {
			return "sed with no script"
		}
		return j.sedScript(ops[0], c.depth)
	}
	return ""
}

func (j *judge) sedScript(a arg, depth int) string {
	if a.dynamic {
		return "sed script " + a.text + " is built at run time"
	}
	if cmds, runs := sedExec(a.text); runs {
		j.danger("sed script " + a.text + " runs commands")
		for _, c := range cmds {
			j.remote(func() { j.nested(c, depth) })
		}
	}
	if !sedSafe(a.text) {
		return "sed script " + a.text + " may write files or run commands"
	}
	return ""
}

// sedExec returns the commands a sed script runs: the e command's text,
// and the replacement of s///e (the pattern space, after the substitution,
// is run). Only literal replacements are returned; a script that runs
// commands is a danger whatever they are.
func sedExec(s string) (cmds []string, runs bool) {
	for _, piece := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == ';' }) {
		p := strings.TrimSpace(piece)
		i := sedAddress(p, 0)
		if i < 0 {
			continue
		}
		if i < len(p) && p[i] == ',' {
			if i = sedAddress(p, i+1); i < 0 {
				continue
			}
		}
		p = strings.TrimLeft(p[i:], " !{")
		switch {
		case strings.HasPrefix(p, "e"):
			runs = true
			if c := strings.TrimSpace(p[1:]); c != "" {
				cmds = append(cmds, c)
			}
		case strings.HasPrefix(p, "s") && len(p) > 1:
			mid, ok := sedDelimited(p, 1, 1)
			end, ok2 := sedDelimited(p, 1, 2)
			if ok && ok2 && strings.ContainsRune(p[end:], 'e') {
				runs = true
				d := string(p[1])
				cmds = append(cmds, strings.ReplaceAll(p[mid:end-1], "\\"+d, d))
			}
		}
	}
	return cmds, runs
}

// sedSafe reports whether a sed script uses only commands that print or
// edit the stream: no w, W, e, r, R, and no s///w or s///e. Anything it
// does not understand is unsafe.
func sedSafe(s string) bool {
	i := 0
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == ';' || s[i] == '\n') {
			i++
		}
		if i >= len(s) {
			return true
		}
		if i = sedAddress(s, i); i < 0 {
			return false
		}
		if i < len(s) && s[i] == ',' {
			if i = sedAddress(s, i+1); i < 0 {
				return false
			}
		}
		for i < len(s) && (s[i] == ' ' || s[i] == '!') {
			i++
		}
		if i >= len(s) {
			return false
		}
		cmd := s[i]
		i++
		switch cmd {
		case '{', '}':
			continue
		case 'p', 'P', 'd', 'D', 'n', 'N', 'g', 'G', 'h', 'H', 'x', '=', 'l', 'q', 'Q', 'z', 'F':
			for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == ' ') {
				i++
			}
			if i < len(s) && !strings.ContainsRune(";\n}", rune(s[i])) {
				return false
			}
		case 's':
			var ok bool
			if i, ok = sedDelimited(s, i, 2); !ok {
				return false
			}
			for i < len(s) && !strings.ContainsRune("; \t\n}", rune(s[i])) {
				if !strings.ContainsRune("gpiImM0123456789", rune(s[i])) {
					return false // w FILE, e, or something unknown
				}
				i++
			}
		case 'y':
			var ok bool
			if i, ok = sedDelimited(s, i, 2); !ok {
				return false
			}
		case 'a', 'i', 'c':
			// GNU one-liners: a text. The text runs to the end of the line.
			if n := strings.IndexByte(s[i:], '\n'); n >= 0 {
				i += n
			} else {
				i = len(s)
			}
		case 'b', 't', 'T', ':', '#', 'v':
			for i < len(s) && s[i] != ';' && s[i] != '\n' {
				i++
			}
		default:
			return false // w, W, e, r, R and anything unknown
		}
	}
}

// sedAddress skips one address (a line number, $, /re/ or \cREc, with
// GNU's first~step and addr,+N forms). It returns -1 on a malformed one.
func sedAddress(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch c := s[i]; {
	case c >= '0' && c <= '9', c == '+', c == '~':
		i++
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
			i++
		}
	case c == '$':
		i++
	case c == '/' || c == '\\':
		if c == '\\' {
			i++
		}
		var ok bool
		if i, ok = sedDelimited(s, i, 1); !ok {
			return -1
		}
		for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
			i++
		}
	}
	return i
}

// sedDelimited skips a delimiter at s[i] and n fields each closed by it,
// honouring backslash escapes. It returns the index after the last one.
func sedDelimited(s string, i, n int) (int, bool) {
	if i >= len(s) || s[i] == '\\' || s[i] == '\n' {
		return i, false
	}
	d := s[i]
	i++
	for ; n > 0; n-- {
		for {
			if i >= len(s) {
				return i, false
			}
			if s[i] == '\\' {
				i += 2
				continue
			}
			if s[i] == d {
				i++
				break
			}
			i++
		}
	}
	return i, true
}

func awkReader() reader {
	// gawk's -p/--profile, -d/--dump-variables and -o/--pretty-print write
	// files, -D/--debug reads debugger commands; mawk's -W takes an
	// extension option (-W exec FILE).
	rd := r("-F -v -e -W --field-separator --assign --source", "-f --file -i --include -l --load -E --exec -p --profile -d --dump-variables -o --pretty-print -D --debug -W", "runs a program from a file, writes a file or edits in place").withPattern()
	rd.check = awkCheck
	return stops(rd)
}

// awkCheck: awk programs that call system(), pipe to or from commands, or
// redirect print into files are a danger (SPEC rule 4: awk with system).
func awkCheck(j *judge, c *cmd, opts []opt, ops []arg) string {
	programs := 0
	for _, o := range opts {
		if o.is('e', "source") {
			programs++
			if why := j.awkProgram(c.name, o.value, c.depth); why != "" {
				return why
			}
		}
	}
	if programs == 0 {
		if len(ops) == 0 {
			return c.name + " with no program"
		}
		return j.awkProgram(c.name, ops[0], c.depth)
	}
	return ""
}

func (j *judge) awkProgram(name string, a arg, depth int) string {
	if a.dynamic {
		return name + " program " + a.text + " is built at run time"
	}
	switch p := a.text; {
	case strings.Contains(p, "@load") || strings.Contains(p, "@include"):
		return name + " program loads extensions"
	case awkCalls(p, "system"):
		j.danger(name + " program calls system()")
		j.literalCommands(name, p, depth)
	case awkIndirect(p):
		// gawk's @f(...) calls the function whose name f holds: f="system".
		j.danger(name + " program calls a function by a name held in a variable")
		j.literalCommands(name, p, depth)
	case awkWrites(p):
		j.danger(name + " program writes to files or commands")
		j.literalCommands(name, p, depth)
	case awkReadsFile(p):
		return name + " program reads a file it names (getline <)"
	case awkHasWord(p, "ARGV") || awkHasWord(p, "ARGC"):
		return name + " program may change which files it reads (ARGV)"
	}
	return ""
}

// awkIndirect reports whether the program makes an indirect call, @name(.
func awkIndirect(p string) bool {
	code := awkCode(p)
	for i := strings.IndexByte(code, '@'); i >= 0 && i+1 < len(code); {
		k := i + 1
		for k < len(code) && isWordByte(code[k]) {
			k++
		}
		if k > i+1 && strings.HasPrefix(strings.TrimLeft(code[k:], " \t"), "(") {
			return true
		}
		n := strings.IndexByte(code[i+1:], '@')
		if n < 0 {
			return false
		}
		i += 1 + n
	}
	return false
}

// awkCalls reports whether the program calls fn( outside string literals.
func awkCalls(p, fn string) bool {
	code := awkCode(p)
	for i := 0; ; {
		k := strings.Index(code[i:], fn)
		if k < 0 {
			return false
		}
		k += i
		end := k + len(fn)
		before := k == 0 || !isWordByte(code[k-1])
		rest := strings.TrimLeft(code[end:], " \t")
		if before && strings.HasPrefix(rest, "(") {
			return true
		}
		i = end
	}
}

// awkWrites reports whether the program pipes (| outside ||, |&) anywhere,
// or redirects a print or printf with > or >> outside parentheses.
func awkWrites(p string) bool {
	code := awkCode(p)
	for i := 0; i < len(code); i++ {
		if code[i] == '|' {
			if i+1 < len(code) && code[i+1] == '|' {
				i++
				continue
			}
			return true
		}
	}
	for i := 0; ; {
		k := strings.Index(code[i:], "print")
		if k < 0 {
			return false
		}
		k += i
		if k > 0 && isWordByte(code[k-1]) {
			i = k + 5
			continue
		}
		depth := 0
		for m := k + 5; m < len(code); m++ {
			c := code[m]
			if c == '(' {
				depth++
			} else if c == ')' {
				depth--
			} else if depth <= 0 && (c == ';' || c == '}' || c == '\n') {
				break
			} else if depth <= 0 && c == '>' {
				return true
			}
		}
		i = k + 5
	}
}

// awkReadsFile reports whether the program reads with getline < FILE, a
// file the sensitive-path check cannot see.
func awkReadsFile(p string) bool {
	code := awkCode(p)
	for i := 0; ; {
		k := strings.Index(code[i:], "getline")
		if k < 0 {
			return false
		}
		k += i
		end := k + len("getline")
		rest := strings.TrimLeft(code[end:], " \t")
		// getline < f, getline var < f
		if strings.HasPrefix(rest, "<") {
			return true
		}
		if n := strings.IndexFunc(rest, func(r rune) bool { return r > 127 || !isWordByte(byte(r)) }); n > 0 &&
			strings.HasPrefix(strings.TrimLeft(rest[n:], " \t"), "<") {
			return true
		}
		i = end
	}
}

// awkHasWord reports whether name appears in the program as a word outside
// string literals.
func awkHasWord(p, name string) bool {
	code := awkCode(p)
	for i := 0; ; {
		k := strings.Index(code[i:], name)
		if k < 0 {
			return false
		}
		k += i
		end := k + len(name)
		if (k == 0 || !isWordByte(code[k-1])) && (end == len(code) || !isWordByte(code[end])) {
			return true
		}
		i = end
	}
}

// awkCode blanks out string literals and regular expression literals, so
// text inside "..." or /a|b/ cannot look like code. A slash starts a regex
// unless it follows an operand (a name, a number, ")" or "]"): then it
// divides.
func awkCode(p string) string {
	if strings.IndexByte(p, '"') < 0 && strings.IndexByte(p, '/') < 0 {
		return p
	}
	b := []byte(p)
	var closer byte // '"' or '/' while inside a literal
	prev := byte(0) // last significant byte outside literals
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case closer != 0 && c == '\\':
			b[i] = ' '
			if i+1 < len(b) {
				i++
				b[i] = ' '
			}
		case closer != 0 && c == closer:
			closer = 0
			prev = c
		case closer != 0:
			b[i] = ' '
		case c == '"':
			closer = '"'
		case c == '/' && !(isWordByte(prev) || prev == ')' || prev == ']' || prev == '.'):
			closer = '/'
		case c != ' ' && c != '\t':
			prev = c
		}
	}
	return string(b)
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// findValued are find's tests and options that take one argument.
var findValued = map[string]bool{
	"-name": true, "-iname": true, "-path": true, "-ipath": true, "-wholename": true, "-iwholename": true,
	"-regex": true, "-iregex": true, "-type": true, "-xtype": true, "-user": true, "-group": true,
	"-uid": true, "-gid": true, "-perm": true, "-size": true, "-mtime": true, "-mmin": true, "-atime": true,
	"-amin": true, "-ctime": true, "-cmin": true, "-newer": true, "-anewer": true, "-cnewer": true,
	"-links": true, "-inum": true, "-samefile": true, "-maxdepth": true, "-mindepth": true, "-fstype": true,
	"-lname": true, "-ilname": true, "-printf": true, "-used": true, "-context": true, "-regextype": true,
	"-files0-from": true, "-D": true, "-O": true,
}

// destroyers are the commands that destroy each file find hands them.
var destroyers = map[string]bool{"rm": true, "shred": true, "unlink": true, "truncate": true, "srm": true,
	"wipe": true, "rmdir": true, "wipefs": true, "dd": true}

// findCheck: -delete and -exec/-execdir/-ok/-okdir are dangers (the command
// they run is judged too); -fprint* and -fls write files.
func findCheck(j *judge, c *cmd, _ []opt, _ []arg) string {
	args := c.args
	// find / -delete, with no test to narrow it, deletes the whole tree.
	var starts []arg
	filtered := false
	for _, a := range args {
		if strings.HasPrefix(a.text, "-") || a.text == "(" || a.text == "!" {
			break
		}
		starts = append(starts, a)
	}
	j.listed("find", starts, lists)
	rest := args[len(starts):]
	for i, a := range rest {
		// -type f and -name '*' narrow nothing: find / -type f -delete
		// still deletes every file on the system.
		matchAll := in(a.text, "-name", "-iname", "-path", "-ipath", "-wholename") && i+1 < len(rest) && strings.Trim(rest[i+1].text, "*") == ""
		if findValued[a.text] && !in(a.text, "-maxdepth", "-mindepth", "-type", "-xtype", "-regextype", "-D", "-O") && !matchAll ||
			strings.HasPrefix(a.text, "-newer") || in(a.text, "-empty", "-false", "-readable", "-writable", "-executable", "-nouser", "-nogroup") {
			filtered = true
		}
	}
	wholesale := func(what string) bool {
		for _, s := range starts {
			// Over the whole tree, a name test narrows nothing that
			// matters: find / -name '*.conf' -delete still wrecks the
			// system. Elsewhere in a system directory it must be
			// unfiltered (find /var/log -name '*.gz' -delete is cleanup).
			if p := path.Clean(j.resolve(s)); p == "/" || p == "/*" || !filtered {
				if why, ok := protectedTarget(j.resolve(s), j.cwd); ok {
					j.absurd("find " + s.text + " " + what + why)
					return true
				}
			}
		}
		return false
	}
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch {
		case t == "-delete":
			if !wholesale("-delete") {
				j.danger("find -delete deletes files")
			}
		case t == "-exec" || t == "-execdir" || t == "-ok" || t == "-okdir":
			end := i + 1
			for end < len(args) && args[end].text != ";" && args[end].text != "+" {
				end++
			}
			if end > i+1 && destroyers[path.Base(args[i+1].text)] && wholesale(t+" "+args[i+1].text) {
				i = end
				continue
			}
			if end > i+1 {
				j.danger("find " + t + " runs " + args[i+1].text + " on each file")
				j.feed("find "+t, args[i+1:end], c.depth)
			} else {
				j.danger("find " + t + " runs a command on each file")
			}
			i = end
		case t == "-fprint" || t == "-fprint0" || t == "-fls" || t == "-fprintf":
			if i+1 < len(args) {
				j.output(args[i+1], "find "+t)
				return ""
			}
			return "find " + t + " writes a file"
		case in(t, "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename") && i+1 < len(args):
			if v := strings.ToLower(args[i+1].text); j.isSecret(v) || hasGlobMeta(v) && j.globSecret(v) {
				j.seeksSecrets = true
			}
			i++
		case t == "-files0-from" && i+1 < len(args):
			// The file names it reads are echoed back in errors.
			j.secret("find -files0-from", args[i+1])
			i++
		case findValued[t] || strings.HasPrefix(t, "-newer"):
			i++
		}
	}
	return ""
}
