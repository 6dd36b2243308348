package shell

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// judge collects the findings of one Analyze call. It is not shared between
// calls, so the Analyzer itself stays free of mutable state.
type judge struct {
	a        *Analyzer
	res      *Analysis
	commands int               // simple commands seen
	funcs    map[string]bool   // functions the script defines (their bodies are judged where they stand)
	cwd      string            // directory a literal cd moved to, "" when unknown
	vars     map[string]string // variables assigned a literal value (X=/)
	loops    map[string][]arg  // for loop variables and the words they take (for f in *.log)
	assigned map[string]bool   // variables set some other way (x=..., read x), so a loop's words are not all they hold
	variants int               // command copies made for loop words, against maxLoopVariants
	// seeksSecrets is set when find looks for secrets by name, and
	// unseenContent when a reader prints files named at run time; together
	// (find . -name .env | xargs cat) they print secrets.
	seeksSecrets, unseenContent bool
}

func (j *judge) absurd(why string)  { j.res.Absurd = addReason(j.res.Absurd, why) }
func (j *judge) danger(why string)  { j.res.Danger = addReason(j.res.Danger, why) }
func (j *judge) unknown(why string) { j.res.Unknown = addReason(j.res.Unknown, why) }

// addReason appends why unless the list already holds it.
func addReason(list []string, why string) []string {
	for _, r := range list {
		if r == why {
			return list
		}
	}
	return append(list, why)
}

// script parses src and judges every node of it. It reports whether src
// parsed.
func (j *judge) script(src string, depth int) bool {
	f, err := j.a.parse(src)
	if err != nil {
		msg := err.Error()
		if len(msg) > 120 {
			msg = msg[:120] + "…"
		}
		// What cannot be parsed cannot be judged: a danger, so that the
		// LLM's risk_level cannot wave it through (fail closed).
		if depth == 0 {
			j.danger("does not parse, so it cannot be judged: " + msg)
		} else {
			j.danger("inner script does not parse, so it cannot be judged: " + msg)
		}
		return false
	}
	syntax.Walk(f, func(n syntax.Node) bool { return j.visit(n, depth) })
	return true
}

// nested judges a script found inside a command: sh -c '...', eval, su -c.
func (j *judge) nested(src string, depth int) {
	if depth >= maxDepth {
		// Not judged is not harmless: a danger, so the LLM cannot lower
		// it; absurd commands are still looked for, piece by piece.
		j.danger("commands nested too deep to judge")
		j.salvage(src)
		return
	}
	if !j.script(src, depth+1) {
		j.salvage(src)
	}
}

// salvage looks for absurd commands in a script that does not parse, by
// parsing its pieces between separators on their own. Only absurd findings
// are kept: the script is already not read-only.
func (j *judge) salvage(src string) {
	pieces := strings.FieldsFunc(src, func(r rune) bool {
		return strings.ContainsRune(";\n&|()`{}", r)
	})
	for _, p := range pieces {
		for _, text := range []string{p, strings.NewReplacer(`'`, "", `"`, "").Replace(p)} {
			var scratch Analysis
			s := &judge{a: j.a, res: &scratch}
			if s.script(text, maxDepth) {
				for _, r := range scratch.Absurd {
					j.absurd(r)
				}
				break
			}
		}
	}
}

// visit judges one node; syntax.Walk then descends into its children, so
// command substitutions, process substitutions, here-documents, function
// bodies and arithmetic are all reached.
func (j *judge) visit(n syntax.Node, depth int) bool {
	switch n := n.(type) {
	case *syntax.Stmt:
		j.redirects(n.Redirs)
		j.shellInput(n, depth)
		j.databaseInput(n)
		j.interpreterInput(n)
	case *syntax.CallExpr:
		j.call(n, depth)
	case *syntax.Subshell:
		return j.ownCwd(n.Stmts, depth)
	case *syntax.CmdSubst:
		return j.ownCwd(n.Stmts, depth)
	case *syntax.ProcSubst:
		return j.ownCwd(n.Stmts, depth)
	case *syntax.FuncDecl:
		j.function(n)
	case *syntax.DeclClause:
		j.declare(n)
	case *syntax.CStyleLoop:
		if !constArith(n.Init) || !constArith(n.Cond) || !constArith(n.Post) {
			j.unknown("arithmetic on variables can run code hidden in their values")
		}
	case *syntax.BinaryCmd:
		if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
			j.pipeline(n, depth)
		}
	case *syntax.ArithmCmd:
		if !constArith(n.X) {
			j.unknown("arithmetic on variables can run code hidden in their values")
		}
	case *syntax.LetClause:
		j.unknown("let evaluates arithmetic on variables")
	case *syntax.ArithmExp:
		if !constArith(n.X) {
			j.unknown("arithmetic on variables can run code hidden in their values")
		}
	case *syntax.ParamExp:
		if n.Exp != nil && n.Exp.Op == syntax.OtherParamOps && n.Exp.Word != nil && strings.Contains(word(n.Exp.Word).text, "P") {
			j.unknown("${…@P} expands a value as a prompt, which runs command substitutions")
		}
		if n.Index != nil && !constArith(n.Index) && !wholeArray(n.Index) || n.Slice != nil && !(constArith(n.Slice.Offset) && constArith(n.Slice.Length)) {
			j.unknown("array index on variables can run code hidden in their values")
		}
		if n.Excl && n.Names == 0 && n.Index == nil {
			// ${!x}: x may hold a[$(cmd)], whose subscript is evaluated.
			j.unknown("${!…} expands a variable named at run time, which can run code")
		}
		if n.Param != nil && n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) && riskyVar(n.Param.Value) {
			j.unknown("${" + n.Param.Value + ":=…} sets " + n.Param.Value + ", which changes what later commands do")
		}
	case *syntax.UnaryTest:
		if n.Op == syntax.TsVarSet || n.Op == syntax.TsRefVar {
			if w, ok := n.X.(*syntax.Word); ok && strings.ContainsAny(word(w).text, "[") && strings.ContainsAny(word(w).text, "$`") {
				j.unknown("-v " + word(w).text + " evaluates an array subscript, which can run code")
			}
		}
	case *syntax.BinaryTest:
		if n.Op >= syntax.TsEql && n.Op <= syntax.TsGtr && !(constArith(n.X) && constArith(n.Y)) {
			j.unknown("numeric test on variables can run code hidden in their values")
		}
	case *syntax.ForClause:
		if wi, ok := n.Loop.(*syntax.WordIter); ok && wi.Name != nil && !reassigns(n.Do, wi.Name.Value) {
			// The loop's words stand for its variable inside the body only:
			// after the loop the variable may be set again.
			name := wi.Name.Value
			if j.loops == nil {
				j.loops = map[string][]arg{}
			}
			outer, had := j.loops[name]
			visit := func(n syntax.Node) bool { return j.visit(n, depth) }
			syntax.Walk(wi, visit)
			j.loops[name] = words(wi.Items, nil)
			for _, s := range n.Do {
				syntax.Walk(s, visit)
			}
			if had {
				j.loops[name] = outer
			} else {
				delete(j.loops, name)
			}
			return false
		}
	case *syntax.WhileClause:
		if endless(n) && spawns(n.Do) {
			j.absurd("an endless loop that starts background processes: a fork bomb")
		}
	case *syntax.CoprocClause:
		j.unknown("coproc starts a background process")
	}
	return true
}

// ownCwd judges statements that run in a subshell, ( ), $( ) or <( ):
// a cd inside does not move the commands after it. It returns false, for
// syntax.Walk not to descend again.
func (j *judge) ownCwd(stmts []*syntax.Stmt, depth int) bool {
	outer := j.cwd
	for _, s := range stmts {
		syntax.Walk(s, func(n syntax.Node) bool { return j.visit(n, depth) })
	}
	j.cwd = outer
	return false
}

// wholeArray reports whether an index is [@] or [*]: every element, no
// arithmetic.
func wholeArray(x syntax.ArithmExpr) bool {
	w, ok := x.(*syntax.Word)
	if !ok || len(w.Parts) != 1 {
		return false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	return ok && (l.Value == "@" || l.Value == "*")
}

// endless reports whether a while or until loop's condition is a constant
// that never ends it: while true, while :, until false.
func endless(w *syntax.WhileClause) bool {
	if len(w.Cond) != 1 {
		return false
	}
	c, ok := w.Cond[0].Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) != 1 || w.Cond[0].Negated {
		return false
	}
	name := word(c.Args[0]).text
	if w.Until {
		return name == "false"
	}
	return name == "true" || name == ":"
}

// spawns reports whether statements start a background process anywhere.
func spawns(stmts []*syntax.Stmt) bool {
	found := false
	for _, s := range stmts {
		syntax.Walk(s, func(n syntax.Node) bool {
			if st, ok := n.(*syntax.Stmt); ok && st.Background {
				found = true
			}
			return !found
		})
	}
	return found
}

// constArith reports whether an arithmetic expression (or test operand)
// holds only numbers and operators: no variables, whose values bash would
// evaluate as code (a[$(cmd)]).
func constArith(x syntax.Node) bool {
	if x == nil {
		return true
	}
	ok := true
	syntax.Walk(x, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Lit:
			for i := 0; i < len(n.Value); i++ {
				if c := n.Value[i]; c < '0' || c > '9' {
					ok = false
				}
			}
		case *syntax.ParamExp, *syntax.CmdSubst, *syntax.ProcSubst, *syntax.SglQuoted, *syntax.DblQuoted:
			ok = false
		}
		return ok
	})
	return ok
}

// call judges one simple command.
func (j *judge) call(c *syntax.CallExpr, depth int) {
	name := ""
	if len(c.Args) > 0 {
		name = word(c.Args[0]).text
	}
	for _, as := range c.Assigns {
		j.assign(as, name)
	}
	if len(c.Args) == 0 {
		j.commands++
		return
	}
	argv := words(c.Args, make([]arg, 0, len(c.Args)+2))
	j.command(argv, depth)
}

// command judges a command line given as words, after the shell has split
// it: from the parse tree, or from a wrapper (sudo ls, xargs rm).
func (j *judge) command(argv []arg, depth int) {
	if len(argv) == 0 {
		return
	}
	j.commands++
	if usesIFS(argv) {
		// rm$IFS-rf$IFS/: the shell splits such words into rm -rf /.
		j.danger("the command line is split by $IFS at run time")
		if argv = splitIFS(argv); len(argv) == 0 {
			return
		}
	}
	if variants, ok := j.loopVariants(argv); ok {
		// for ns in prod staging; do kubectl get pods -n "$ns"; done: judge
		// the command once for each word the loop gives.
		j.commands--
		for _, v := range variants {
			j.command(v, depth)
		}
		return
	}
	name, trusted, ok := commandName(argv[0])
	if !ok && argv[0].dynamic {
		// cmd=rm; $cmd -rf /: judge what the variable holds, never as a reader.
		if v := j.resolve(argv[0]); v != argv[0].text {
			name, _, ok = commandName(arg{text: v})
			trusted = false
		}
	}
	if !ok {
		// Like eval, the command is only known when it runs: a danger, so the
		// LLM cannot lower it.
		j.danger("the command name " + argv[0].text + " is computed at run time")
		return
	}
	h, found := j.a.commands[name]
	if !found {
		if low := strings.ToLower(name); low != name {
			name, trusted = low, false
			h, found = j.a.commands[name]
		}
	}
	if !found && isMkfs(name) {
		h, found = mkfs, true
	}
	if _, interp := interpreters[interpreterName(name)]; !found && interp {
		h, found = interpreter, true
	}
	if !j.a.passThrough[name] {
		j.touchesSecret(argv)
	}
	if !found {
		if j.funcs[name] {
			return // its body was judged where it was defined
		}
		j.unknown("unknown command " + argv[0].text)
		return
	}
	h(j, &cmd{name: name, shown: argv[0].text, args: argv[1:], trusted: trusted, depth: depth})
}

// maxLoopVariants bounds the words of one loop that loopVariants
// substitutes, and 16 times that the copies it makes in one script.
const maxLoopVariants = 16

func (j *judge) markAssigned(name string) {
	if j.assigned == nil {
		j.assigned = map[string]bool{}
	}
	j.assigned[name] = true
}

// setters are the builtins that set a variable named among their words.
var setters = map[string]bool{"read": true, "mapfile": true, "readarray": true, "printf": true, "wait": true,
	"getopts": true, "unset": true, "declare": true, "local": true, "typeset": true, "export": true, "readonly": true}

// reassigns reports whether a loop body may set the loop variable itself
// (f=x, read f), so that the loop's words are not all it holds.
func reassigns(body []*syntax.Stmt, name string) bool {
	found := false
	for _, s := range body {
		syntax.Walk(s, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.Assign:
				found = found || n.Name != nil && n.Name.Value == name
			case *syntax.CallExpr:
				if len(n.Args) > 0 && setters[word(n.Args[0]).text] {
					for _, w := range n.Args[1:] {
						found = found || strings.Contains(word(w).text, name)
					}
				}
			case *syntax.DeclClause, *syntax.ForClause, *syntax.FuncDecl:
				found = true // nested declarations, loops and functions: not followed
			}
			return !found
		})
	}
	return found
}

// loopVariants returns argv once for each word of the for loop whose
// variable one of its arguments (not the name) is, when those words are
// all literal: "$ns" in for ns in prod staging. ok is false when there is
// nothing to substitute or too much.
func (j *judge) loopVariants(argv []arg) ([][]arg, bool) {
	if len(j.loops) == 0 {
		return nil, false
	}
	for i := 1; i < len(argv); i++ {
		if !argv[i].dynamic {
			continue
		}
		items, ok := j.loopItems(argv[i].text)
		if !ok || len(items) == 0 || len(items) > maxLoopVariants || j.variants+len(items) > maxLoopVariants*16 {
			continue
		}
		// A pattern (for f in ./*.log) stands in for the names it matches:
		// the rules for patterns apply to it.
		j.variants += len(items)
		out := make([][]arg, 0, len(items))
		for _, it := range items {
			v := append([]arg(nil), argv...)
			v[i] = it
			out = append(out, v)
		}
		return out, true
	}
	return nil, false
}

// cmd is one command handed to a handler.
type cmd struct {
	name    string // the name the table matched: "rm" for /bin/rm
	shown   string // the name as written, for reasons
	args    []arg  // the words after the name
	trusted bool   // the name is a system command (not ./ls, not a case-folded MKFS)
	depth   int    // how deep in sh -c / eval nesting it stands
}

// systemDirs hold the real commands; /usr/bin/ls is ls, ./ls is not.
var systemDirs = []string{"/usr/local/sbin/", "/usr/local/bin/", "/usr/sbin/", "/usr/bin/", "/sbin/", "/bin/"}

// commandName resolves the command word to the name looked up in the table.
func commandName(w arg) (name string, trusted, ok bool) {
	if w.dynamic || (w.glob && w.text != "[") || w.text == "" {
		return "", false, false
	}
	name, trusted = w.text, true
	if strings.IndexByte(name, '/') >= 0 {
		trusted = false
		for _, d := range systemDirs {
			if rest, cut := strings.CutPrefix(name, d); cut && strings.IndexByte(rest, '/') < 0 {
				name, trusted = rest, true
				break
			}
		}
		if !trusted {
			name = name[strings.LastIndexByte(name, '/')+1:]
		}
		if name == "" {
			return "", false, false
		}
	}
	return name, trusted, true
}

// harmlessSinks are output targets that keep a script read-only.
var harmlessSinks = map[string]bool{
	"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true,
	"/dev/fd/1": true, "/dev/fd/2": true, "/dev/tty": true,
}

// redirects judges a statement's redirections.
func (j *judge) redirects(rs []*syntax.Redirect) {
	for _, r := range rs {
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			continue
		case syntax.DplIn, syntax.DplOut:
			if t, ok := word(r.Word).lit(); ok && (t == "-" || isDigits(t)) {
				continue // 2>&1, >&2, <&0, >&-
			}
			if r.Op == syntax.DplIn {
				j.unknown("reads from a file descriptor named at run time")
				continue
			}
			j.output(word(r.Word), r.Op.String())
		case syntax.RdrIn:
			w := word(r.Word)
			if t, ok := w.lit(); ok {
				if j.isSecret(t) || j.isSecret(joinPath(j.cwd, t)) {
					j.danger("< " + t + " reads a secret")
				}
				if strings.HasPrefix(t, "/dev/tcp/") || strings.HasPrefix(t, "/dev/udp/") {
					j.unknown("< " + t + " opens a network connection")
				}
				continue
			}
			if strings.HasPrefix(j.resolve(w), "/dev/") {
				j.unknown("reads from " + w.text + ", a device named at run time")
				continue
			}
			// < "$f": like a reader's operand named at run time (see the
			// package doc); a loop variable's words are checked.
			j.secret("<", w)
		default:
			j.output(word(r.Word), r.Op.String())
		}
	}
}

// output judges a write to target: harmless, a raw disk (absurd), a secret
// (danger), or any other file (a plain write: not read-only).
func (j *judge) output(target arg, op string) {
	t, ok := target.lit()
	if ok && harmlessSinks[t] {
		return
	}
	if isRawDisk(target.text) {
		j.absurd("writing to " + target.text + " would destroy the disk")
		return
	}
	if j.isSecret(target.text) {
		j.danger(op + " " + target.text + " overwrites a secret")
		return
	}
	if runsLater(target.text) {
		j.danger(op + " " + target.text + " changes what runs at login, boot or on a schedule")
		return
	}
	if strings.HasPrefix(target.text, "/proc/") || strings.HasPrefix(target.text, "/sys/") {
		// echo b > /proc/sysrq-trigger reboots; /proc/sys and /sys tune the kernel.
		j.danger(op + " " + target.text + " changes the running kernel")
		return
	}
	if strings.HasPrefix(target.text, "/dev/tcp/") || strings.HasPrefix(target.text, "/dev/udp/") {
		j.danger(op + " " + target.text + " sends data over the network")
		return
	}
	if dev, ok := strings.CutPrefix(target.text, "/dev/"); ok && !strings.HasPrefix(dev, "shm/") &&
		!strings.HasPrefix(dev, "tty") && !strings.HasPrefix(dev, "pts/") && !strings.HasPrefix(dev, "fd/") {
		// /dev/mem, /dev/port, /dev/watchdog, /dev/console: devices, not files.
		j.danger(op + " " + target.text + " writes to a device")
		return
	}
	j.unknown(op + " " + target.text + " writes a file")
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// function notes a function definition and looks for fork bombs: a
// function that calls itself in a pipeline or in the background.
func (j *judge) function(fd *syntax.FuncDecl) {
	if fd.Name == nil {
		return
	}
	name := fd.Name.Value
	if j.funcs == nil {
		j.funcs = map[string]bool{}
	}
	j.funcs[name] = true
	self, spawns := 0, false
	syntax.Walk(fd.Body, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			spawns = spawns || n.Background
		case *syntax.BinaryCmd:
			spawns = spawns || n.Op == syntax.Pipe || n.Op == syntax.PipeAll
		case *syntax.CallExpr:
			if len(n.Args) > 0 && word(n.Args[0]).text == name {
				self++
			}
		}
		return true
	})
	if self > 0 && spawns {
		j.absurd("function " + name + " calls itself in a pipe or in the background: a fork bomb")
	}
}

// pipeline judges what flows between the two sides of one pipe: a
// download piped into a shell or an interpreter (curl URL | sh), or
// literal text piped into a shell (echo 'rm -rf /' | sh). Each pipe node
// looks only at its own junction, so a long pipeline costs linear time.
func (j *judge) pipeline(b *syntax.BinaryCmd, depth int) {
	left, right := b.X, b.Y
	for {
		bc, ok := left.Cmd.(*syntax.BinaryCmd)
		if !ok || (bc.Op != syntax.Pipe && bc.Op != syntax.PipeAll) {
			break
		}
		left = bc.Y
	}
	for {
		bc, ok := right.Cmd.(*syntax.BinaryCmd)
		if !ok || (bc.Op != syntax.Pipe && bc.Op != syntax.PipeAll) {
			break
		}
		right = bc.X
	}
	j.echoedScript(left, right, depth)
	j.echoedSQL(left, right)
	if name := codeFromStdin(right); name != "" {
		j.danger(name + " runs the code piped into it")
	}
	target := commandWord(right)
	if sh := shellName(right); sh != "" {
		target = sh // also source /dev/stdin
	}
	if !shells[target] && target != "source" && target != "." && interpreters[interpreterName(target)] == "" && !(target != "" && interpreterKnown(target)) {
		return
	}
	// The right side runs code: was anything upstream a download?
	var upstream func(s *syntax.Stmt) string
	upstream = func(s *syntax.Stmt) string {
		if bc, ok := s.Cmd.(*syntax.BinaryCmd); ok && (bc.Op == syntax.Pipe || bc.Op == syntax.PipeAll) {
			if d := upstream(bc.X); d != "" {
				return d
			}
			return upstream(bc.Y)
		}
		if d := commandWord(s); downloaders[d] {
			return d
		}
		return ""
	}
	if d := upstream(b.X); d != "" {
		j.danger(d + " output piped into " + target + " runs downloaded code")
	}
}

func interpreterKnown(name string) bool {
	_, ok := interpreters[interpreterName(name)]
	return ok
}

// commandWord is the command a statement runs, looking through wrappers
// (sudo bash) and skipping their flags; "" when it is not a plain call.
func commandWord(s *syntax.Stmt) string {
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok {
		return ""
	}
	for _, w := range c.Args {
		t, _ := word(w).lit()
		t = t[strings.LastIndexByte(t, '/')+1:]
		if pipeWrappers[t] || strings.HasPrefix(t, "-") || strings.Contains(t, "=") || isDigits(t) {
			continue
		}
		return t
	}
	return ""
}

var (
	downloaders  = map[string]bool{"curl": true, "wget": true, "fetch": true, "aria2c": true, "http": true, "https": true}
	pipeWrappers = map[string]bool{"sudo": true, "doas": true, "env": true, "nice": true, "nohup": true, "command": true, "exec": true, "timeout": true, "stdbuf": true, "xargs": true, "time": true}
)

// assign judges a variable assignment. prefixFor names the command the
// variable is exported to (FOO=1 cmd), "" for a plain assignment or declare.
func (j *judge) assign(as *syntax.Assign, prefixFor string) {
	if as.Name == nil {
		return
	}
	n := as.Name.Value
	j.markAssigned(n)
	if as.Index != nil && !constArith(as.Index) && !wholeArray(as.Index) {
		// a['$(cmd)']=1: the subscript is evaluated, which runs cmd.
		j.unknown("assigning " + n + "[…] evaluates its subscript, which can run code")
	}
	if prefixFor != "" {
		value, known := "", true
		if as.Value != nil {
			value, known = word(as.Value).lit()
		}
		if !safePrefixVar(n, value, known) {
			j.unknown("sets " + n + " for " + prefixFor)
		}
		return
	}
	value, known := "", true
	if as.Value != nil {
		value, known = word(as.Value).lit()
	}
	if (riskyVar(n) || n == "KUBECONFIG" || n == "DOCKER_CONFIG") && !safePrefixVar(n, value, known) {
		j.unknown("sets " + n + ", which changes what later commands do")
	}
	if as.Value != nil {
		if v, ok := word(as.Value).lit(); ok {
			if j.vars == nil {
				j.vars = map[string]string{}
			}
			j.vars[n] = v
		}
	}
}

// safePrefixVar reports whether exporting name=value to a reader keeps it a
// reader: locale, time zone, colours, terminal size, a pager that is cat.
func safePrefixVar(name, value string, known bool) bool {
	switch name {
	case "LANG", "LANGUAGE", "TZ", "COLUMNS", "LINES", "NO_COLOR", "TERM", "CLICOLOR",
		"FORCE_COLOR", "TIME_STYLE", "SYSTEMD_COLORS", "GREP_COLOR", "GREP_COLORS", "LS_COLORS":
		return true
	case "PAGER", "GIT_PAGER", "SYSTEMD_PAGER", "MANPAGER":
		return known && (value == "" || value == "cat")
	case "KUBECONFIG", "DOCKER_CONFIG":
		// A kubeconfig can run programs (exec credential plugins), and a
		// docker config plugin hooks: not one anybody could have written.
		return known && !worldWritable(value)
	}
	return strings.HasPrefix(name, "LC_")
}

// worldWritable reports whether p is in a directory every user can write.
func worldWritable(p string) bool {
	for _, d := range []string{"/tmp/", "/var/tmp/", "/dev/shm/"} {
		if strings.HasPrefix(p, d) {
			return true
		}
	}
	return false
}

// riskyVar reports whether setting a shell variable changes how later
// commands run or which programs they start.
func riskyVar(n string) bool {
	switch n {
	case "PATH", "IFS", "ENV", "CDPATH", "HOME", "SHELLOPTS", "BASHOPTS", "PS4",
		"PROMPT_COMMAND", "GLOBIGNORE", "EDITOR", "VISUAL", "NODE_OPTIONS", "RUBYOPT":
		return true
	case "RIPGREP_CONFIG_PATH", "TAR_OPTIONS", "UNZIP", "ZIPINFO", "LOCPATH", "GCONV_PATH", "PHPRC":
		// rg --pre, tar --checkpoint-action=exec, unzip options and
		// loadable modules, from the environment.
		return true
	}
	// TF_CLI_CONFIG_FILE points terraform at other providers, XDG_CONFIG_HOME
	// git at another config (core.pager), OPENSSL_CONF openssl at engines,
	// LUA_INIT and JAVA_TOOL_OPTIONS run code when the program starts.
	for _, p := range []string{"LD_", "BASH_", "GIT_", "LESS", "PYTHON", "PERL", "DYLD_", "KUBECTL_", "TF_", "JAVA_",
		"_JAVA_", "JDK_", "XDG_", "OPENSSL_", "LUA_", "PHP_", "RUBY", "NODE_", "HELM_"} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return strings.HasSuffix(n, "PAGER") || strings.HasSuffix(n, "EDITOR") || strings.HasSuffix(n, "_OPTIONS") || strings.HasSuffix(n, "_OPTS")
}

// shellName returns the shell a statement runs when it is a plain call of
// one, reading its script from standard input (sh, bash -s, not bash -c).
func shellName(s *syntax.Stmt) string {
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 {
		return ""
	}
	name, _ := word(c.Args[0]).lit()
	name = name[strings.LastIndexByte(name, '/')+1:]
	if name == "source" || name == "." {
		// source /dev/stdin <<< '...' runs the here-string in this shell.
		if len(c.Args) > 1 && stdinPaths[word(c.Args[1]).text] {
			return name
		}
		return ""
	}
	if !shells[name] {
		return ""
	}
	for _, w := range c.Args[1:] {
		t := word(w).text
		if stdinPaths[t] {
			continue // bash /dev/stdin reads its script from standard input too
		}
		if !strings.HasPrefix(t, "-") || strings.Contains(t, "c") {
			return "" // a script file or -c: judged by the shell handler
		}
	}
	return name
}

// stdinPaths name standard input as a script file.
var stdinPaths = map[string]bool{"/dev/stdin": true, "/dev/fd/0": true, "/proc/self/fd/0": true, "-": true}

// shellInput judges a here-document or here-string fed to a shell:
// bash <<EOF ... EOF runs the document.
func (j *judge) shellInput(s *syntax.Stmt, depth int) {
	if len(s.Redirs) == 0 || shellName(s) == "" {
		return
	}
	for _, r := range s.Redirs {
		var w *syntax.Word
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			w = r.Hdoc
		case syntax.WordHdoc:
			w = r.Word
		}
		if w == nil {
			continue
		}
		if a := word(w); !a.dynamic {
			j.nested(a.text, depth)
		} else {
			j.danger(shellName(s) + " runs a script built at run time")
		}
	}
}

// codeFromStdin returns the interpreter a statement runs when it reads its
// program from standard input (python3, perl -, node with no script); ""
// otherwise (python3 -m json.tool, python3 script.py).
func codeFromStdin(s *syntax.Stmt) string {
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 {
		return ""
	}
	name, _ := word(c.Args[0]).lit()
	name = name[strings.LastIndexByte(name, '/')+1:]
	if _, interp := interpreters[interpreterName(name)]; !interp {
		return ""
	}
	for _, w := range c.Args[1:] {
		t := word(w).text
		if t == "-" {
			continue
		}
		if !strings.HasPrefix(t, "-") || t == "-m" || strings.HasPrefix(t, "--") {
			return "" // a script, a module or an option this does not know
		}
	}
	return name
}

// interpreterInput judges python3 <<EOF ... EOF: code on standard input is
// code given on the command line (SPEC rule 4).
func (j *judge) interpreterInput(s *syntax.Stmt) {
	name := codeFromStdin(s)
	if name == "" {
		return
	}
	for _, r := range s.Redirs {
		if r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc || r.Op == syntax.WordHdoc {
			j.danger(name + " runs the code in a here-document")
			return
		}
	}
}

// databaseInput judges a here-document or here-string fed to a database
// client (mysql <<< 'DROP DATABASE x') like its command line.
func (j *judge) databaseInput(s *syntax.Stmt) {
	name := commandWord(s)
	if !dbClients[name] {
		return
	}
	for _, r := range s.Redirs {
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			j.destructiveSQL(name, word(r.Hdoc).text)
		case syntax.WordHdoc:
			j.destructiveSQL(name, word(r.Word).text)
		}
	}
}

// echoedSQL judges echo 'DROP TABLE x' | mysql.
func (j *judge) echoedSQL(from, to *syntax.Stmt) {
	name := commandWord(to)
	c, ok := from.Cmd.(*syntax.CallExpr)
	if !dbClients[name] || !ok || len(c.Args) < 2 {
		return
	}
	if n := word(c.Args[0]).text; n != "echo" && n != "printf" {
		return
	}
	var b strings.Builder
	for _, w := range words(c.Args[1:], nil) {
		b.WriteString(w.text)
		b.WriteByte(' ')
	}
	j.destructiveSQL(name, b.String())
}

// destructiveSQL records a danger when text sent to a database client holds
// a destructive word.
func (j *judge) destructiveSQL(name, text string) {
	up := strings.ToUpper(text)
	for _, w := range destructiveWords {
		if strings.Contains(up, w) {
			j.danger(name + " is sent " + w)
			return
		}
	}
}

// echoedScript judges echo 'rm -rf /' | sh: literal text piped into a shell.
func (j *judge) echoedScript(from, to *syntax.Stmt, depth int) {
	sh := shellName(to)
	c, ok := from.Cmd.(*syntax.CallExpr)
	if sh == "" || !ok || len(c.Args) < 2 {
		return
	}
	if name := word(c.Args[0]).text; name != "echo" && name != "printf" {
		return
	}
	j.shellString(sh, words(c.Args[1:], nil), depth)
}

// declare judges declare, local, export, readonly, typeset: -n makes a name
// reference (assigning through it can set PATH) and -i evaluates every
// later assignment as arithmetic, which can run code.
func (j *judge) declare(d *syntax.DeclClause) {
	if d.Variant != nil && d.Variant.Value == "nameref" {
		j.unknown("nameref makes a name reference")
	}
	for _, as := range d.Args {
		if as.Naked && as.Name == nil && as.Value != nil {
			if f := word(as.Value); f.dynamic || strings.HasPrefix(f.text, "-") && strings.ContainsAny(f.text, "ni") {
				j.unknown(d.Variant.Value + " " + f.text + " changes how later assignments are evaluated")
			} else if name, _, _ := strings.Cut(f.text, "="); strings.ContainsAny(name, "[$`") {
				// declare 'b[$(cmd)]=1' is an assignment the parser saw as a word.
				j.unknown(d.Variant.Value + " " + f.text + " assigns through a quoted word, whose subscript can run code")
			} else if riskyVar(name) && strings.Contains(f.text, "=") {
				j.unknown(d.Variant.Value + " " + f.text + " sets " + name + ", which changes what later commands do")
			}
			continue
		}
		j.assign(as, "")
	}
}

// touchesSecret records a danger when a command that is not a reader
// (those have their own rule) names a sensitive path: curl -d @.env,
// scp ~/.ssh/id_rsa host:, rm .env. For such commands an unknown verdict
// could be lowered by the LLM; a secret must keep the card.
func (j *judge) touchesSecret(argv []arg) {
	for _, a := range argv[1:] {
		p := j.resolve(a)
		if a.dynamic && p == a.text {
			continue
		}
		if i := strings.LastIndexByte(p, '='); i >= 0 {
			p = p[i+1:]
		}
		p = strings.TrimPrefix(p, "@")
		if p != "" && j.isSecret(p) {
			j.danger(argv[0].text + " " + a.text + " touches a secret")
			return
		}
	}
}

// usesIFS reports whether a word expands $IFS, which hides word breaks.
func usesIFS(argv []arg) bool {
	for _, a := range argv {
		if a.dynamic && (strings.Contains(a.text, "$IFS") || strings.Contains(a.text, "${IFS}")) {
			return true
		}
	}
	return false
}

// splitIFS splits words on $IFS (or ${IFS}) as the shell would with the
// default IFS. Parts that hold other expansions stay dynamic.
func splitIFS(argv []arg) []arg {
	var out []arg
	for _, a := range argv {
		text := strings.ReplaceAll(a.text, "${IFS}", "$IFS")
		for _, part := range strings.Split(text, "$IFS") {
			if part == "" {
				continue
			}
			out = append(out, arg{text: part, dynamic: strings.ContainsAny(part, "$…"), glob: a.glob})
		}
	}
	return out
}

// runsLater reports whether writing p plants code that runs later: shell
// start-up files, cron, systemd units, init scripts, the preload list.
func runsLater(p string) bool {
	switch path.Base(p) {
	case ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile",
		".zshenv", ".zlogin", "authorized_keys", "ld.so.preload", "crontab":
		return true
	}
	for _, dir := range []string{"/etc/cron", "/etc/systemd/", "/etc/profile", "/etc/rc", "/etc/init.d/",
		"/etc/bash", "/var/spool/cron/", "/lib/systemd/", "/usr/lib/systemd/", ".config/systemd/", ".config/autostart/"} {
		if strings.HasPrefix(p, dir) || strings.Contains(p, "/"+strings.TrimPrefix(dir, "/")) {
			return true
		}
	}
	return false
}
