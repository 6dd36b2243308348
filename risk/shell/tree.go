package shell

import (
	"fmt"

	"mvdan.cc/sh/v3/syntax"
)

// walk visits node and, where visit says so, its children, in the order
// syntax.Walk of mvdan.cc/sh v3.14 uses, with j.visit at the given depth.
// It is syntax.Walk without what the judgement does not use: comments
// (the parser drops them), the f(nil) after each node's children (visit
// ignores it) and the func value. syntax.Walk defers a walk of trailing
// comments, which makes every call of it pay for a deferred call; on the
// on-call mix that and the indirect calls were about a tenth of the
// judgement. A node type this walk does not know panics, as syntax.Walk's
// does, and Analyze turns the panic into a danger (fail closed);
// TestWalkMatchesSyntaxWalk holds the two walks to the same nodes.
func (j *judge) walk(node syntax.Node, depth int) {
	if j.trace != nil {
		j.trace(node)
	}
	if !j.visit(node, depth) {
		return
	}
	switch node := node.(type) {
	case *syntax.File:
		walkNodes(j, node.Stmts, depth)
	case *syntax.Comment:
	case *syntax.Stmt:
		if node.Cmd != nil {
			j.walk(node.Cmd, depth)
		}
		walkNodes(j, node.Redirs, depth)
	case *syntax.Assign:
		walkSome(j, node.Name, depth)
		walkSome(j, node.Value, depth)
		walkSome(j, node.Index, depth)
		walkSome(j, node.Array, depth)
	case *syntax.Redirect:
		walkSome(j, node.N, depth)
		j.walk(node.Word, depth)
		walkSome(j, node.Hdoc, depth)
	case *syntax.CallExpr:
		walkNodes(j, node.Assigns, depth)
		walkNodes(j, node.Args, depth)
	case *syntax.Subshell:
		walkNodes(j, node.Stmts, depth)
	case *syntax.Block:
		walkNodes(j, node.Stmts, depth)
	case *syntax.IfClause:
		walkNodes(j, node.Cond, depth)
		walkNodes(j, node.Then, depth)
		walkSome(j, node.Else, depth)
	case *syntax.WhileClause:
		walkNodes(j, node.Cond, depth)
		walkNodes(j, node.Do, depth)
	case *syntax.ForClause:
		j.walk(node.Loop, depth)
		walkNodes(j, node.Do, depth)
	case *syntax.WordIter:
		j.walk(node.Name, depth)
		walkNodes(j, node.Items, depth)
	case *syntax.CStyleLoop:
		walkSome(j, node.Init, depth)
		walkSome(j, node.Cond, depth)
		walkSome(j, node.Post, depth)
	case *syntax.BinaryCmd:
		j.walk(node.X, depth)
		j.walk(node.Y, depth)
	case *syntax.FuncDecl:
		walkSome(j, node.Name, depth)
		walkNodes(j, node.Names, depth)
		j.walk(node.Body, depth)
	case *syntax.Word:
		walkNodes(j, node.Parts, depth)
	case *syntax.Lit:
	case *syntax.SglQuoted:
	case *syntax.DblQuoted:
		walkNodes(j, node.Parts, depth)
	case *syntax.CmdSubst:
		walkNodes(j, node.Stmts, depth)
	case *syntax.ParamExp:
		walkSome(j, node.Flags, depth)
		walkSome(j, node.Param, depth)
		walkSome(j, node.NestedParam, depth)
		walkSome(j, node.Index, depth)
		if node.Slice != nil {
			walkSome(j, node.Slice.Offset, depth)
			walkSome(j, node.Slice.Length, depth)
		}
		if node.Repl != nil {
			walkSome(j, node.Repl.Orig, depth)
			walkSome(j, node.Repl.With, depth)
		}
		if node.Exp != nil {
			walkSome(j, node.Exp.Word, depth)
		}
	case *syntax.ArithmExp:
		j.walk(node.X, depth)
	case *syntax.ArithmCmd:
		j.walk(node.X, depth)
	case *syntax.BinaryArithm:
		j.walk(node.X, depth)
		j.walk(node.Y, depth)
	case *syntax.BinaryTest:
		j.walk(node.X, depth)
		j.walk(node.Y, depth)
	case *syntax.UnaryArithm:
		j.walk(node.X, depth)
	case *syntax.UnaryTest:
		j.walk(node.X, depth)
	case *syntax.ParenArithm:
		j.walk(node.X, depth)
	case *syntax.FlagsArithm:
		j.walk(node.Flags, depth)
		if node.X != nil {
			j.walk(node.X, depth)
		}
	case *syntax.ParenTest:
		j.walk(node.X, depth)
	case *syntax.CaseClause:
		j.walk(node.Word, depth)
		walkNodes(j, node.Items, depth)
	case *syntax.CaseItem:
		walkNodes(j, node.Patterns, depth)
		walkNodes(j, node.Stmts, depth)
	case *syntax.TestClause:
		j.walk(node.X, depth)
	case *syntax.DeclClause:
		walkNodes(j, node.Args, depth)
	case *syntax.ArrayExpr:
		walkNodes(j, node.Elems, depth)
	case *syntax.ArrayElem:
		walkSome(j, node.Index, depth)
		walkSome(j, node.Value, depth)
	case *syntax.ExtGlob:
		j.walk(node.Pattern, depth)
	case *syntax.ProcSubst:
		walkNodes(j, node.Stmts, depth)
	case *syntax.TimeClause:
		walkSome(j, node.Stmt, depth)
	case *syntax.CoprocClause:
		walkSome(j, node.Name, depth)
		j.walk(node.Stmt, depth)
	case *syntax.LetClause:
		walkNodes(j, node.Exprs, depth)
	case *syntax.TestDecl:
		j.walk(node.Description, depth)
		j.walk(node.Body, depth)
	default:
		panic(fmt.Sprintf("shell walk: unexpected node type %T", node))
	}
}

// walkNodes walks each node of a list.
func walkNodes[N syntax.Node](j *judge, list []N, depth int) {
	for _, n := range list {
		j.walk(n, depth)
	}
}

// walkSome walks a node that may be absent.
func walkSome[N interface {
	syntax.Node
	comparable
}](j *judge, node N, depth int) {
	var zero N
	if node != zero {
		j.walk(node, depth)
	}
}
