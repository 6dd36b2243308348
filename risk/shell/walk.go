package shell

import (
	"cmp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// judge collects the findings of one Analyze call. It is not shared between
// calls, so the Analyzer itself stays free of mutable state.
type judge struct {
	// judgeState is what one call finds out; Analyze resets it whole, so
	// a field added to it can never carry over from one call to the next.
	judgeState
	// argSlab and optSlab hand out the word and option lists of one
	// Analyze call; they are kept, emptied, for the next call, so that
	// judging a command does not allocate them (STYLE habit 4).
	argSlab []arg
	optSlab []opt
	cmdSlab []cmd
	// own holds the findings of an Analyze call (res points at it).
	own Analysis
}

// judgeState is the part of a judge that one Analyze call builds up.
type judgeState struct {
	a        *Analyzer
	res      *Analysis
	commands int                     // simple commands seen
	funcs    map[string]*syntax.Stmt // functions the script defines: judged where they stand, and again at each call
	aliases  map[string]string       // aliases the script defines, by name
	// positional holds the words a script-defined function was called
	// with, while its body is judged again for that call ($1, "$@").
	positional []arg
	expanding  int               // calls being expanded, against maxDepth
	hadEffect  bool              // an effect row matched the command being handled, which says its danger
	far        int               // how deep in commands carried to a container or another machine
	cwd        string            // directory a literal cd moved to: relative when the start is not known, "" when nothing is
	vars       map[string]string // variables assigned a literal value (X=/)
	sets       map[string]int    // how many assignments each variable has, so far
	wild       map[string]string // variables assigned a value with a part computed at run time, that part as "*" (P=/proc/*)
	loops      map[string][]arg  // for loop variables and the words they take (for f in *.log)
	assigned   map[string]bool   // variables set some other way (x=..., read x), so a loop's words are not all they hold
	variants   int               // command copies made for loop words, against maxLoopVariants
	// seeksSecrets is set when find looks for secrets by name, and
	// unseenContent when a reader prints files named at run time; together
	// (find . -name .env | xargs cat) they print secrets.
	seeksSecrets, unseenContent bool
	// pipeFed holds the statements on the right of a pipe, and fedNow
	// says whether the statement being judged reads a pipe, a file or a
	// here-document: a shell with no script there runs what it is fed
	// (stdin.go judges that); anywhere else it was handed over to run.
	pipeFed map[*syntax.Stmt]bool
	fedNow  bool
	// downloads holds the files a downloader wrote earlier in the script
	// (curl -o x, wget -O x, curl ... > x): running one later is running
	// downloaded code.
	downloads map[string]string
	// refs holds name references (declare -n r=cmd): r reads and sets cmd.
	refs map[string]string
	// reasonAt indexes the reasons of lists longer than shortList, and
	// indexed says which lists it holds (addReason).
	reasonAt map[reasonKey]int
	indexed  [4]bool
	// trace, when set (by a test), sees each node walk visits.
	trace func(syntax.Node)
}

func (j *judge) absurd(why string)  { j.res.Absurd = j.addReason(kindAbsurd, j.res.Absurd, why) }
func (j *judge) danger(why string)  { j.res.Danger = j.addReason(kindDanger, j.res.Danger, why) }
func (j *judge) unknown(why string) { j.res.Unknown = j.addReason(kindUnknown, j.res.Unknown, why) }
func (j *judge) runTime(why string) { j.res.RunTime = j.addReason(kindRunTime, j.res.RunTime, why) }

// The lists of an Analysis, as reasonKey tells them apart.
const (
	kindAbsurd uint8 = iota
	kindDanger
	kindUnknown
	kindRunTime
)

// reasonKey names one reason in one list.
type reasonKey struct {
	kind uint8
	why  string
}

// shortList is how long a list is scanned to find a reason again; past
// it, the judge's index finds it at once, so that a command with
// thousands of words costs each word the same (issue 25).
const shortList = 8

// maxReasons bounds each list: a card with more reasons says no more,
// and the verdict is decided by the first.
const maxReasons = 200

// addReason appends why to list unless the list already holds it. The
// index maps a reason to where it stands; it is checked against the list,
// which remote() may have cut short since.
func (j *judge) addReason(kind uint8, list []string, why string) []string {
	if len(list) < shortList {
		return addReason(list, why)
	}
	if j.reasonAt == nil {
		j.reasonAt = make(map[reasonKey]int, 64)
	}
	if !j.indexed[kind] {
		j.indexed[kind] = true
		for i, r := range list {
			j.reasonAt[reasonKey{kind, r}] = i
		}
	}
	k := reasonKey{kind, why}
	if i, ok := j.reasonAt[k]; ok && i < len(list) && list[i] == why {
		return list
	}
	if len(list) >= maxReasons {
		return list
	}
	j.reasonAt[k] = len(list)
	return append(list, why)
}

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
	j.walk(f, depth)
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
			s := &judge{judgeState: judgeState{a: j.a, res: &scratch}}
			if s.script(text, maxDepth) {
				for _, r := range scratch.Absurd {
					j.absurd(r)
				}
				break
			}
		}
	}
}

// visit judges one node; walk (tree.go) then descends into its children, so
// command substitutions, process substitutions, here-documents, function
// bodies and arithmetic are all reached.
func (j *judge) visit(n syntax.Node, depth int) bool {
	switch n := n.(type) {
	case *syntax.Word:
		// A word of plain text holds nothing to judge below it: most words
		// are, and not walking them is a good part of the judgement's cost.
		return !literalWord(n)
	case *syntax.Stmt:
		j.redirects(n.Redirs)
		j.stdinInput(n, depth)
		j.truncation(n)
		j.fedNow = j.pipeFed[n] || hasStdinRedirect(n)
		j.stmtInput(n)
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
		j.declare(n, depth)
	case *syntax.BinaryCmd:
		if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
			j.pipeline(n, depth)
		}
	case *syntax.ForClause:
		if cl, ok := n.Loop.(*syntax.CStyleLoop); ok && (cl.Cond == nil || constArith(cl.Cond) && !zeroArith(cl.Cond)) && spawns(n.Do) {
			j.absurd("an endless loop that starts background processes: a fork bomb")
		}
		return j.forLoop(n, depth)
	case *syntax.WhileClause:
		if endlessCond(n.Cond, n.Until) && spawns(n.Do) {
			j.absurd("an endless loop that starts background processes: a fork bomb")
		}
	case *syntax.CStyleLoop:
		j.hiddenCode(n)
	case *syntax.CoprocClause:
		j.unknown("coproc starts a background process")
	case *syntax.ArithmCmd, *syntax.LetClause, *syntax.ArithmExp,
		*syntax.ParamExp, *syntax.UnaryTest, *syntax.BinaryTest:
		j.hiddenCode(n)
	}
	return true
}

// ownCwd judges statements that run in a subshell, ( ), $( ) or <( ):
// a cd inside does not move the commands after it. It returns false, for
// syntax.Walk not to descend again.
func (j *judge) ownCwd(stmts []*syntax.Stmt, depth int) bool {
	outer := j.cwd
	for _, s := range stmts {
		j.walk(s, depth)
	}
	j.cwd = outer
	return false
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

// call judges one simple command.
func (j *judge) call(c *syntax.CallExpr, depth int) {
	name := ""
	if len(c.Args) > 0 {
		name = word(c.Args[0]).text
	}
	for _, as := range c.Assigns {
		j.assign(as, name, depth)
	}
	if len(c.Args) == 0 {
		j.commands++
		return
	}
	argv := words(c.Args, j.newArgs(len(c.Args)+2))
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
	if len(j.vars) > 0 {
		argv = j.splitVars(argv)
		argv = j.knownArgs(argv)
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
	if j.positional != nil {
		argv = j.spliceParams(argv)
		if len(argv) == 0 {
			return
		}
	}
	if value, ok := j.aliases[argv[0].text]; ok && !argv[0].dynamic && j.expanding < maxDepth {
		j.callAlias(argv, value, depth)
		return
	}
	name, trusted, ok := commandName(argv[0])
	if !ok && argv[0].dynamic {
		// cmd=rm; $cmd -rf /: judge what the variable holds, never as a reader.
		if v := j.resolve(argv[0]); v != argv[0].text {
			name, _, ok = commandName(arg{text: v})
			trusted = false
			j.runTime("the command " + argv[0].text + " is built at run time (it holds " + clipWord(v) + "), so the assistant cannot vouch for it")
		}
	}
	if !ok {
		// Like eval, the command is only known when it runs: a danger, so the
		// LLM cannot lower it.
		j.danger("the command name " + argv[0].text + " is computed at run time")
		return
	}
	info := j.a.names[name]
	if !info.inCmds {
		if low := strings.ToLower(name); low != name {
			name, trusted = low, false
			info = j.a.names[name]
		}
	}
	h, found := info.h, info.inCmds
	if !found && isMkfs(name) {
		h, found = mkfs, true
	}
	if !found {
		if _, interp := interpreters[interpreterName(name)]; interp {
			h, found = interpreter, true
		}
	}
	// The name's entry in j.a.names says which tables hold it; each check
	// below does nothing for a name its table lacks, so it is skipped.
	before := len(j.res.Danger)
	if !info.pass {
		j.touchesSecret(argv)
	}
	// The floors by argument (floors.go) hold for every program, known
	// or not, whatever its row says.
	if !info.pass {
		j.floors(argv, info, false, len(j.res.Danger) > before)
	}
	if info.special {
		j.netListen(argv[0].text, name, argv[1:])
		j.memoryDump(argv[0].text, name, argv[1:])
		j.envPrint(argv[0].text, name, argv[1:])
		j.inPlacePlant(argv[0].text, name, argv[1:])
		j.socatFile(argv[0].text, name, argv[1:])
		j.copiesOut(argv[0].text, name, argv[1:])
	}
	j.secretGetter(argv[0].text, name, argv[1:])
	j.runsDownload(argv, name)
	j.bareRunner(argv[0].text, name, argv[1:], info.inCmds || found)
	if !trusted {
		j.ruleOneUntrusted(name, argv[1:])
	}
	hasEffect := false
	if info.effects || strings.IndexByte(argv[0].text, '/') >= 0 { // /etc/init.d/x is judged as init.d
		hasEffect = j.effects(argv[0].text, name, argv[1:])
	}
	if info.carries {
		hasEffect = j.carriedBy(name, argv[1:], depth) || hasEffect
	}
	if info.vehicle {
		hasEffect = j.vehicle(argv[0].text, name, argv[1:], depth) || hasEffect
	}
	hasEffect = j.privilegeBits(name, argv[1:]) || hasEffect
	hasEffect = j.plantsLater(name, argv[1:]) || hasEffect
	if info.wipes {
		hasEffect = j.wipesDisk(name, argv[1:]) || hasEffect
	}
	if info.net {
		j.metadataReach(name, argv[1:])
		j.secretAPIReach(argv[0].text, argv[1:])
		j.httpJudged(argv[0].text, name, argv[1:])
	}
	if body, ok := j.funcs[name]; ok && argv[0].text == name {
		j.callFunction(name, body, argv[1:], depth)
		return
	}
	if j.far > 0 {
		j.farSecrets(argv, name)
	}
	if name == "kubectl" || name == "oc" {
		j.kubeEnvPrint(argv[0].text, argv[1:])
	}
	if credentialHelper(name) {
		j.danger(argv[0].text + " asks a credential helper for a stored credential")
		return
	}
	if trusted && !hasEffect && asksAboutItself(name, argv[1:]) {
		return // promtool --version, velero --help (looks.go)
	}
	j.hadEffect = hasEffect
	if !found {
		if v := cmp.Or(leadingVerb(argv[1:]), destructiveOption(argv[1:])); v != "" && !hasEffect {
			// foo cluster destroy, invoke-rc.d nginx stop: a CLI with no
			// row, whose subcommand is a destructive verb (issue 16).
			j.danger(argv[0].text + " " + v + " " + effDestructiveVerb)
		} else if !hasEffect {
			j.unknown("unknown command " + argv[0].text)
		}
		j.wrapped(argv[1:], depth)
		return
	}
	c := j.newCmd()
	*c = cmd{name: name, shown: argv[0].text, args: argv[1:], trusted: trusted, depth: depth}
	h(j, c)
	if info.pass && len(j.res.Danger) == before {
		// A reader's row judged its operands; the floors look at what
		// its options name, which rows may not know (last -f FILE).
		j.floors(argv, info, true, false)
	}
}

// splitVars splits the unquoted variables of a command line whose known
// value holds several words, as bash does: X="rm -rf /"; $X.
func (j *judge) splitVars(argv []arg) []arg {
	var out []arg
	for i, a := range argv {
		v := ""
		if a.split {
			v = j.resolve(a)
		}
		if !a.split || v == a.text || !strings.ContainsAny(v, " \t\n") {
			if out != nil {
				out = append(out, a)
			}
			continue
		}
		if out == nil {
			out = append(make([]arg, 0, len(argv)+4), argv[:i]...)
		}
		for _, f := range strings.Fields(v) {
			out = append(out, arg{text: f, glob: hasGlobMeta(f)})
		}
	}
	if out == nil {
		return argv
	}
	return out
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

// function notes a function definition and looks for fork bombs: a
// function that calls itself in a pipeline or in the background.
func (j *judge) function(fd *syntax.FuncDecl) {
	if fd.Name == nil {
		return
	}
	name := fd.Name.Value
	if j.funcs == nil {
		j.funcs = map[string]*syntax.Stmt{}
	}
	j.funcs[name] = fd.Body
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

// callFunction judges a call of a function the script defined: the name
// is not a command anybody can read off the line, so the assistant's
// low risk_level cannot vouch for it, and the body is judged again with
// the call's words as $1, $2, "$@" (f() { "$@"; }; f rm -rf /).
func (j *judge) callFunction(name string, body *syntax.Stmt, args []arg, depth int) {
	j.runTime(name + " is a function defined in the script, so what runs is built at run time")
	if j.expanding >= maxDepth || body == nil {
		if j.expanding >= maxDepth {
			j.danger("functions call each other too deep to judge")
		}
		return
	}
	outer, outerVars := j.positional, j.vars
	j.positional = append(make([]arg, 0, len(args)), args...)
	j.vars = make(map[string]string, len(outerVars)+len(args)+1)
	for k, v := range outerVars {
		j.vars[k] = v
	}
	for k := 1; k <= 9; k++ {
		delete(j.vars, string(rune('0'+k)))
	}
	for k, a := range args {
		if v, ok := a.lit(); ok && k < 9 {
			j.vars[string(rune('1'+k))] = v
		}
	}
	j.expanding++
	j.ownCwd([]*syntax.Stmt{body}, depth)
	j.expanding--
	j.positional, j.vars = outer, outerVars
}

// callAlias judges a call of an alias the script defined as its value
// followed by the call's words.
func (j *judge) callAlias(argv []arg, value string, depth int) {
	j.runTime(argv[0].text + " is an alias defined in the script, so what runs is built at run time")
	var b strings.Builder
	b.WriteString(value)
	for _, a := range argv[1:] {
		b.WriteByte(' ')
		if q, err := syntax.Quote(a.text, syntax.LangBash); err == nil && !a.dynamic {
			b.WriteString(q)
		} else {
			b.WriteString(a.text)
		}
	}
	j.expanding++
	j.nested(b.String(), depth)
	j.expanding--
}

// spliceParams puts the words of the call being expanded in place of
// "$@", "$*", $1..$9 when they stand as whole words.
func (j *judge) spliceParams(argv []arg) []arg {
	var out []arg
	for i, a := range argv {
		var with []arg
		switch t := a.text; {
		case !a.dynamic:
		case t == "$@" || t == "${@}" || t == "$*" || t == "${*}":
			with = j.positional
			if with == nil {
				with = []arg{}
			}
		case len(t) == 2 && t[0] == '$' && t[1] >= '1' && t[1] <= '9', len(t) == 4 && strings.HasPrefix(t, "${") && t[2] >= '1' && t[2] <= '9' && t[3] == '}':
			k := int(t[len(t)-1-btoi(t[len(t)-1] == '}')] - '1')
			if k < len(j.positional) {
				with = j.positional[k : k+1]
			} else {
				with = []arg{}
			}
		}
		if with == nil {
			if out != nil {
				out = append(out, a)
			}
			continue
		}
		if out == nil {
			out = append(make([]arg, 0, len(argv)+len(j.positional)), argv[:i]...)
		}
		out = append(out, with...)
	}
	if out == nil {
		return argv
	}
	return out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// clipWord shortens a value shown in a reason.
func clipWord(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// credentialHelper reports whether a command is a credential helper
// (docker-credential-desktop, git-credential-store): asked, it prints a
// stored credential.
func credentialHelper(name string) bool {
	return strings.HasPrefix(name, "docker-credential-") || strings.HasPrefix(name, "git-credential-")
}

// knownArgs puts in the value of the words after the command name that
// hold only variables assigned a literal once (N=prod; kubectl get pods
// -n $N), so the rules read them as written. The command name stays as
// written: a name held in a variable is built at run time.
func (j *judge) knownArgs(argv []arg) []arg {
	var out []arg
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if !a.dynamic || a.glob || j.loops[strings.TrimPrefix(strings.Trim(a.text, "${}"), "$")] != nil {
			continue
		}
		v, ok := j.expand(a.text, true)
		if !ok {
			continue
		}
		if out == nil {
			out = append(make([]arg, 0, len(argv)), argv...)
		}
		out[i] = arg{text: v, glob: a.split && hasGlobMeta(v)}
	}
	if out == nil {
		return argv
	}
	return out
}

// newArgs returns an empty list with room for n words, cut from the
// judge's slab: an append past n copies, so lists never overlap.
func (j *judge) newArgs(n int) []arg {
	if cap(j.argSlab)-len(j.argSlab) < n {
		j.argSlab = make([]arg, 0, max(256, n))
	}
	start := len(j.argSlab)
	j.argSlab = j.argSlab[:start+n]
	return j.argSlab[start : start : start+n]
}

// newOpts is newArgs for options.
func (j *judge) newOpts(n int) []opt {
	if cap(j.optSlab)-len(j.optSlab) < n {
		j.optSlab = make([]opt, 0, max(128, n))
	}
	start := len(j.optSlab)
	j.optSlab = j.optSlab[:start+n]
	return j.optSlab[start : start : start+n]
}

// newCmd returns a command record cut from the judge's slab.
func (j *judge) newCmd() *cmd {
	if len(j.cmdSlab) == cap(j.cmdSlab) {
		j.cmdSlab = make([]cmd, 0, 32)
	}
	j.cmdSlab = j.cmdSlab[:len(j.cmdSlab)+1]
	return &j.cmdSlab[len(j.cmdSlab)-1]
}

// literalWord reports whether a word holds only literal text: no
// expansion, substitution or arithmetic anywhere in it.
func literalWord(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}
