package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// What flows into a program on its standard input: downloads and literal
// text piped into a shell, an interpreter or a database client, and
// here-documents fed to them.

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
