package sqltool

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/countersign/countersign/risk/sqlrisk"
	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/mysql"

	// The parser needs a driver for literal values.
	_ "github.com/pingcap/tidb/pkg/parser/test_driver"
)

// kind is what one SQL text is, as far as the tool needs to know.
type kind int

const (
	kindUnknown kind = iota // did not parse, or not exactly one statement
	kindRead                // SELECT/TABLE/VALUES/UNION/WITH, SHOW, DESCRIBE, EXPLAIN of a read
	kindInsert              // INSERT, REPLACE
	kindUpdate
	kindDelete
	kindOther // any other single statement: DDL, SET, CALL, LOCK, ...
)

// statement is one classified SQL text.
type statement struct {
	kind kind
	// notRead says why the text is not a plain read ("" for kindRead).
	notRead string
	node    ast.StmtNode // nil for kindUnknown
}

// keepsSession reports whether running the statement leaves the session as
// it found it, so the connection may go back to the pool. Anything else
// (SET, USE, LOCK TABLES, temporary tables, unparsed text) is discarded
// with its connection.
func (s statement) keepsSession() bool {
	switch s.kind {
	case kindRead, kindInsert, kindUpdate, kindDelete:
		return true
	}
	return false
}

// classifier parses SQL under the pinned sql_mode. Safe for concurrent use.
type classifier struct {
	parsers sync.Pool
}

func newClassifier() (*classifier, error) {
	mode, err := mysql.GetSQLMode(sqlrisk.DefaultSQLMode)
	if err != nil {
		return nil, fmt.Errorf("parse sql_mode: %w", err)
	}
	c := &classifier{}
	c.parsers.New = func() any {
		p := parser.New()
		p.SetSQLMode(mode)
		return p
	}
	return c, nil
}

// classify parses text. It never panics: a parser panic is kindUnknown.
func (c *classifier) classify(text string) (st statement) {
	st = statement{kind: kindUnknown, notRead: "the statement could not be parsed"}
	if hasExecComment(text) {
		st.notRead = "the text holds an executable comment (/*! or /*M!), which the server runs"
		return st
	}
	p := c.parsers.Get().(*parser.Parser)
	defer func() {
		if recover() != nil {
			st = statement{kind: kindUnknown, notRead: "the statement could not be parsed"}
			return // the parser may be in a bad state: do not put it back
		}
		c.parsers.Put(p)
	}()
	nodes, _, err := p.Parse(text, "", "")
	switch {
	case err != nil:
		return st
	case len(nodes) != 1:
		st.notRead = fmt.Sprintf("the text holds %d statements, not one", len(nodes))
		return st
	}
	n := nodes[0]
	st = statement{node: n, kind: kindOther}
	switch n := n.(type) {
	case *ast.InsertStmt:
		st.kind = kindInsert
	case *ast.UpdateStmt:
		st.kind = kindUpdate
	case *ast.DeleteStmt:
		st.kind = kindDelete
	default:
		if why := notARead(n); why != "" {
			st.notRead = why
		} else {
			st.kind = kindRead
		}
	}
	if st.kind != kindRead && st.notRead == "" {
		st.notRead = "it is not a read (SELECT, SHOW, DESCRIBE or EXPLAIN)"
	}
	return st
}

// notARead says why n is not a plain read, or "" when it is one: a SELECT
// (TABLE, VALUES, UNION, WITH) without INTO, locking or LOAD_FILE anywhere
// in it, a SHOW, or an EXPLAIN/DESCRIBE (never ANALYZE, which executes) of
// such a read or of a table.
func notARead(n ast.StmtNode) string {
	switch n := n.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		var v readVisitor
		n.Accept(&v)
		return v.why
	case *ast.ShowStmt:
		return ""
	case *ast.ExplainStmt:
		if n.Analyze {
			return "EXPLAIN ANALYZE runs the statement"
		}
		if n.Stmt == nil {
			return "it explains another session's statement"
		}
		if why := notARead(n.Stmt); why != "" {
			return "it explains a statement that is not a read: " + why
		}
		return ""
	}
	return "it is not a read (SELECT, SHOW, DESCRIBE or EXPLAIN)"
}

// readVisitor finds what makes a SELECT more than a read.
type readVisitor struct{ why string }

func (v *readVisitor) Enter(n ast.Node) (ast.Node, bool) {
	switch n := n.(type) {
	case *ast.SelectStmt:
		if n.SelectIntoOpt != nil {
			v.why = "SELECT ... INTO writes a file or variables"
		} else if n.LockInfo != nil && n.LockInfo.LockType != ast.SelectLockNone {
			v.why = "it is a locking read (FOR UPDATE / FOR SHARE / LOCK IN SHARE MODE)"
		}
		for _, h := range n.TableHints {
			if h.HintName.L == "max_execution_time" {
				v.why = "its MAX_EXECUTION_TIME hint would lift the time limit"
			}
		}
	case *ast.SetOprStmt:
		// INTO on a UNION is kept on its last SELECT; the visitor sees it.
	case *ast.FuncCallExpr:
		switch n.FnName.L {
		case "load_file":
			v.why = "LOAD_FILE reads files on the database server"
		case "get_lock", "release_lock", "release_all_locks":
			// A user-level lock outlives the transaction: it would stay
			// with the pooled connection after the call.
			v.why = "it takes or releases a user-level lock (" + strings.ToUpper(n.FnName.L) + "), which outlives the call"
		}
	case *ast.VariableExpr:
		if n.Value != nil {
			v.why = "it assigns a variable"
		}
	}
	return n, v.why != ""
}

func (v *readVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, v.why == "" }

// hasExecComment reports whether text holds MySQL or MariaDB executable
// comment syntax, which the server runs and a parser may read differently.
func hasExecComment(text string) bool {
	for i := 0; i+2 < len(text); i++ {
		if text[i] != '/' || text[i+1] != '*' {
			continue
		}
		if c := text[i+2]; c == '!' || ((c == 'M' || c == 'm') && i+3 < len(text) && text[i+3] == '!') {
			return true
		}
	}
	return false
}

// explainSelect turns a DELETE or UPDATE into the SELECT over the same
// tables, WHERE, ORDER BY and LIMIT, for an EXPLAIN that estimates the rows
// it would touch. A read-only transaction refuses EXPLAIN DELETE itself on
// MariaDB; the SELECT form explains under every fence, the SELECT-only
// account included.
func explainSelect(st statement) (string, error) {
	sel := &ast.SelectStmt{
		Kind:           ast.SelectStmtKindSelect,
		SelectStmtOpts: &ast.SelectStmtOpts{SQLCache: true},
		Fields:         &ast.FieldList{Fields: []*ast.SelectField{{WildCard: &ast.WildCardField{}}}},
	}
	switch n := st.node.(type) {
	case *ast.DeleteStmt:
		sel.From, sel.Where, sel.OrderBy, sel.Limit, sel.With = n.TableRefs, n.Where, n.Order, n.Limit, n.With
	case *ast.UpdateStmt:
		sel.From, sel.Where, sel.OrderBy, sel.Limit, sel.With = n.TableRefs, n.Where, n.Order, n.Limit, n.With
	default:
		return "", errors.New("only DELETE and UPDATE are explained")
	}
	if sel.From == nil {
		return "", errors.New("the statement names no table")
	}
	var sb strings.Builder
	sb.WriteString("EXPLAIN ")
	if err := sel.Restore(format.NewRestoreCtx(format.DefaultRestoreFlags, &sb)); err != nil {
		return "", fmt.Errorf("rewrite as SELECT: %w", err)
	}
	return sb.String(), nil
}
