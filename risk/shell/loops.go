package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// For loops: a command that uses a loop variable is judged once for each
// literal word the loop gives it (for ns in prod staging; do ...; done).

// maxLoopVariants bounds the words of one loop that loopVariants
// substitutes, and 16 times that the copies it makes in one script.
const maxLoopVariants = 16

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

// loopItems returns the words a for loop gives the variable named by text
// ("$f", "${f}"), when text is nothing but that variable.
func (j *judge) loopItems(text string) ([]arg, bool) {
	if len(j.loops) == 0 || !strings.HasPrefix(text, "$") {
		return nil, false
	}
	name := strings.TrimSuffix(strings.TrimPrefix(text[1:], "{"), "}")
	items, ok := j.loops[name]
	if !ok || j.assigned[name] {
		return nil, false
	}
	if _, set := j.vars[name]; set {
		return nil, false
	}
	for _, it := range items {
		if it.dynamic {
			return nil, false // a nested loop variable or $(...): see the package doc
		}
	}
	return items, true
}

// forLoop judges a for loop over words. Unless its body sets the loop
// variable itself, the words stand for the variable inside the body only
// (after the loop it may be set again), where loopVariants and loopItems
// use them. It reports whether syntax.Walk should still descend.
func (j *judge) forLoop(n *syntax.ForClause, depth int) bool {
	wi, ok := n.Loop.(*syntax.WordIter)
	if !ok || wi.Name == nil || reassigns(n.Do, wi.Name.Value) {
		return true
	}
	name := wi.Name.Value
	if j.loops == nil {
		j.loops = map[string][]arg{}
	}
	outer, had := j.loops[name]
	j.walk(wi, depth)
	j.loops[name] = words(wi.Items, nil)
	for _, s := range n.Do {
		j.walk(s, depth)
	}
	if had {
		j.loops[name] = outer
	} else {
		delete(j.loops, name)
	}
	return false
}
