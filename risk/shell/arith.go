package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Arithmetic, array subscripts and some expansions evaluate the value of a
// variable as code: with a='a[$(rm -rf ~)]', $((a)) runs rm.

const arithOnVars = "arithmetic on variables can run code hidden in their values"

// hiddenCode judges the places where bash evaluates a variable's value as
// code: arithmetic, array subscripts, numeric tests, ${!x} and ${x@P}
// (a[$(cmd)] runs cmd), and ${X:=...} of a variable that changes what
// later commands do.
func (j *judge) hiddenCode(n syntax.Node) {
	switch n := n.(type) {
	case *syntax.CStyleLoop:
		if !constArith(n.Init) || !constArith(n.Cond) || !constArith(n.Post) {
			j.unknown(arithOnVars)
		}
	case *syntax.ArithmCmd:
		if !constArith(n.X) {
			j.unknown(arithOnVars)
		}
	case *syntax.LetClause:
		j.unknown("let evaluates arithmetic on variables")
	case *syntax.ArithmExp:
		if !constArith(n.X) {
			j.unknown(arithOnVars)
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
	}
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
