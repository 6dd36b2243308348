package sqlrisk

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Statement is the kind of one SQL statement, as approval rules name it
// (bot.rules[].match.sql): Kind is the statement's leading keywords
// ("ALTER TABLE"), Class the family it belongs to ("DDL").
type Statement struct {
	Kind  string `json:"kind"`
	Class string `json:"class"`
}

// The classes of statements.
const (
	ClassRead  = "READ"  // SELECT, SHOW, EXPLAIN, HELP
	ClassDML   = "DML"   // rows: INSERT, UPDATE, DELETE, LOAD DATA, CALL
	ClassDDL   = "DDL"   // schema: CREATE, ALTER, DROP, TRUNCATE, RENAME of tables, views, indexes, databases
	ClassDCL   = "DCL"   // accounts and privileges: GRANT, REVOKE, CREATE USER
	ClassTCL   = "TCL"   // transactions: BEGIN, COMMIT, ROLLBACK
	ClassAdmin = "ADMIN" // the session and the server: SET, KILL, FLUSH, SHUTDOWN
	ClassOther = "OTHER" // anything else the grammar knows
)

// Kinds is every statement kind Statements reports, one row each, with its
// class: the vocabulary rules are checked against. A statement the table
// does not name is reported as OTHER/OTHER.
var Kinds = []Statement{
	{"SELECT", ClassRead}, {"SHOW", ClassRead}, {"EXPLAIN", ClassRead}, {"HELP", ClassRead},

	{"INSERT", ClassDML}, {"REPLACE", ClassDML}, {"UPDATE", ClassDML}, {"DELETE", ClassDML},
	{"LOAD DATA", ClassDML}, {"IMPORT INTO", ClassDML}, {"CALL", ClassDML},

	{"CREATE TABLE", ClassDDL}, {"CREATE VIEW", ClassDDL}, {"CREATE INDEX", ClassDDL},
	{"CREATE DATABASE", ClassDDL}, {"CREATE SEQUENCE", ClassDDL}, {"CREATE PROCEDURE", ClassDDL},
	{"ALTER TABLE", ClassDDL}, {"ALTER DATABASE", ClassDDL}, {"ALTER SEQUENCE", ClassDDL},
	{"DROP TABLE", ClassDDL}, {"DROP VIEW", ClassDDL}, {"DROP INDEX", ClassDDL}, {"DROP DATABASE", ClassDDL},
	{"DROP SEQUENCE", ClassDDL}, {"DROP PROCEDURE", ClassDDL},
	{"TRUNCATE TABLE", ClassDDL}, {"RENAME TABLE", ClassDDL}, {"OPTIMIZE TABLE", ClassDDL},

	{"GRANT", ClassDCL}, {"REVOKE", ClassDCL}, {"CREATE USER", ClassDCL}, {"CREATE ROLE", ClassDCL},
	{"ALTER USER", ClassDCL}, {"DROP USER", ClassDCL}, {"DROP ROLE", ClassDCL}, {"RENAME USER", ClassDCL},
	{"SET PASSWORD", ClassDCL}, {"SET DEFAULT ROLE", ClassDCL},

	{"BEGIN", ClassTCL}, {"COMMIT", ClassTCL}, {"ROLLBACK", ClassTCL}, {"SAVEPOINT", ClassTCL},

	{"SET", ClassAdmin}, {"KILL", ClassAdmin}, {"FLUSH", ClassAdmin}, {"SHUTDOWN", ClassAdmin}, {"RESTART", ClassAdmin},
	{"ALTER INSTANCE", ClassAdmin},
	{"LOCK TABLES", ClassAdmin}, {"UNLOCK TABLES", ClassAdmin}, {"ANALYZE TABLE", ClassAdmin},
	{"USE", ClassAdmin}, {"PREPARE", ClassAdmin}, {"EXECUTE", ClassAdmin},

	{"OTHER", ClassOther},
}

// Statements names the kind of every statement of text, in order: what an
// approval rule matches on. A PREPARE is reported with the statements it
// prepares, an EXPLAIN ANALYZE (which runs its statement) with that
// statement, a non-transactional DML with its DML.
//
// ok is false when the text cannot be read to the end: it does not parse,
// holds executable-comment syntax (whose content the server may run), is
// too long to parse, or prepares text known only at run time. The
// statements read so far are still returned; a caller that matches rules on
// kinds must treat ok=false as "could be any kind" (fail closed).
func (a *Analyzer) Statements(text string) (stmts []Statement, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			stmts, ok = nil, false
		}
	}()
	if len(text) > maxParse || strings.Contains(text, "/*!") || containsFold(text, "/*M!") || containsFold(text, "/*T!") {
		return nil, false
	}
	p, parsed, err := a.parse(text)
	if p != nil {
		defer a.parsers.Put(p)
	}
	if err != nil || len(parsed) == 0 {
		return nil, false
	}
	ok = true
	for _, s := range parsed {
		stmts, ok = a.statementKinds(s, stmts, ok, 0)
	}
	return stmts, ok
}

// statementKinds appends the kinds of s (and of what it runs) to out.
func (a *Analyzer) statementKinds(s ast.StmtNode, out []Statement, ok bool, depth int) ([]Statement, bool) {
	out = append(out, kindOf(s))
	switch s := s.(type) {
	case *ast.PrepareStmt:
		if s.SQLVar != nil || depth > 2 {
			return out, false
		}
		inner, innerOK := a.Statements(s.SQLText)
		return append(out, inner...), ok && innerOK
	case *ast.ExplainStmt:
		if s.Analyze && s.Stmt != nil {
			return a.statementKinds(s.Stmt, out, ok, depth+1)
		}
	case *ast.NonTransactionalDMLStmt:
		if s.DMLStmt != nil {
			return a.statementKinds(s.DMLStmt, out, ok, depth+1)
		}
	}
	return out, ok
}

// kindOf names one statement with a row of Kinds.
func kindOf(s ast.StmtNode) Statement {
	k := "OTHER"
	switch s := s.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		k = "SELECT"
	case *ast.ShowStmt:
		k = "SHOW"
	case *ast.ExplainStmt, *ast.ExplainForStmt:
		k = "EXPLAIN"
	case *ast.HelpStmt:
		k = "HELP"
	case *ast.InsertStmt:
		k = "INSERT"
		if s.IsReplace {
			k = "REPLACE"
		}
	case *ast.UpdateStmt:
		k = "UPDATE"
	case *ast.DeleteStmt:
		k = "DELETE"
	case *ast.NonTransactionalDMLStmt:
		k = "OTHER"
	case *ast.CallStmt:
		k = "CALL"
	case *ast.CreateTableStmt:
		k = "CREATE TABLE"
	case *ast.CreateViewStmt:
		k = "CREATE VIEW"
	case *ast.CreateIndexStmt:
		k = "CREATE INDEX"
	case *ast.CreateDatabaseStmt:
		k = "CREATE DATABASE"
	case *ast.CreateSequenceStmt:
		k = "CREATE SEQUENCE"
	case *ast.DropProcedureStmt:
		k = "DROP PROCEDURE"
	case *ast.AlterSequenceStmt:
		k = "ALTER SEQUENCE"
	case *ast.UnlockTablesStmt:
		k = "UNLOCK TABLES"
	case *ast.AnalyzeTableStmt:
		k = "ANALYZE TABLE"
	case *ast.UseStmt:
		k = "USE"
	case *ast.PrepareStmt:
		k = "PREPARE"
	case *ast.ExecuteStmt:
		k = "EXECUTE"
	case *ast.BeginStmt:
		k = "BEGIN"
	case *ast.CommitStmt:
		k = "COMMIT"
	case *ast.RollbackStmt:
		k = "ROLLBACK"
	case *ast.SavepointStmt, *ast.ReleaseSavepointStmt:
		k = "SAVEPOINT"
	case *ast.SetStmt:
		k = "SET"
	case *ast.OptimizeTableStmt:
		k = "OPTIMIZE TABLE"
	default:
		// neverRun names the rest of the schema, account and server
		// statements, with the words the rules use.
		if what, found := neverRun(s); found {
			k = what
		}
	}
	return lookupKind(k)
}

// lookupKind returns the row of Kinds named k, or OTHER.
func lookupKind(k string) Statement {
	for _, row := range Kinds {
		if row.Kind == k {
			return row
		}
	}
	return Statement{"OTHER", ClassOther}
}

// KindClass returns the row of Kinds whose kind or class is name (upper
// case, single spaces), and whether name is a class (OTHER is both: a
// class); ok is false for a name that is neither.
func KindClass(name string) (row Statement, isClass, ok bool) {
	for _, c := range []string{ClassRead, ClassDML, ClassDDL, ClassDCL, ClassTCL, ClassAdmin, ClassOther} {
		if c == name {
			return Statement{Class: c}, true, true
		}
	}
	for _, row := range Kinds {
		if row.Kind == name {
			return row, false, true
		}
	}
	return Statement{}, false, false
}
