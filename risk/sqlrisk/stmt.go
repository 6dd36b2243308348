package sqlrisk

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// statement judges one parsed statement: the kind of statement first, then
// every node below it.
func (j *judgement) statement(s ast.StmtNode) {
	if j.kind(s) {
		j.reads++
	} else {
		j.others++
	}
	w := walker{j: j}
	s.Accept(&w)
	w.secrets()
}

// kind judges the statement by its kind and reports whether it is one of the
// reads that may be auto-run (SELECT, SHOW, DESCRIBE, EXPLAIN of a read).
func (j *judgement) kind(s ast.StmtNode) bool {
	switch s := s.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt, *ast.HelpStmt, *ast.ExplainForStmt:
		return true
	case *ast.ShowStmt:
		switch s.Tp {
		case ast.ShowCreateUser:
			j.danger(secretShowCreateUser)
		case ast.ShowGrants:
			j.danger(secretShowGrants)
		}
		return true
	case *ast.ExplainStmt:
		return j.explain(s)
	case *ast.DeleteStmt:
		if !j.grantWrite("DELETE", deleteTables(s)) {
			j.rowWrite("DELETE", "removes rows from", deleteTables(s), s.Where)
		}
	case *ast.UpdateStmt:
		if !j.grantWrite("UPDATE", joinTables(s.TableRefs)) {
			j.rowWrite("UPDATE", "writes to", joinTables(s.TableRefs), s.Where)
		}
	case *ast.InsertStmt:
		verb := "INSERT"
		if s.IsReplace {
			verb = "REPLACE"
		}
		if !j.grantWrite(verb, joinTables(s.Table)) {
			j.unknown(verb + " writes to " + joinTables(s.Table))
		}
	case *ast.CallStmt:
		j.call(s)
	case *ast.NonTransactionalDMLStmt:
		j.kind(s.DMLStmt)
	case *ast.SetStmt:
		j.set(s)
	case *ast.ExecuteStmt:
		j.builtAtRunTime(executeReason)
	case *ast.PrepareStmt:
		if s.SQLVar != nil {
			j.danger("PREPARE of a statement built at run time is never run without approval")
			j.runtime = append(j.runtime, "PREPARE from a variable prepares SQL built at run time, which the assessor cannot read")
		} else {
			j.unknown(notARead(s))
		}
	default:
		if what, ok := neverRun(s); ok {
			j.danger(what + " is never run without approval")
		} else {
			j.unknown(notARead(s))
		}
	}
	return false
}

// rowWrite judges DELETE and UPDATE: without a WHERE that depends on the
// row they touch every row, a danger (SPEC §2 rule 4).
func (j *judgement) rowWrite(verb, does, tables string, where ast.ExprNode) {
	switch {
	case where == nil:
		j.danger(verb + " without WHERE touches every row of " + tables)
	case matchesAll(where), tautology(where):
		j.danger(verb + " whose WHERE does not depend on the row touches every row of " + tables)
	default:
		j.unknown(verb + " " + does + " " + tables)
	}
}

// set judges SET: a global or persisted variable changes the server for
// everyone (SPEC §2 rule 4); a session variable only this session.
func (j *judgement) set(s *ast.SetStmt) {
	scope := ""
	for _, v := range s.Variables {
		name := strings.ToLower(v.Name)
		switch {
		case v.IsGlobal || v.IsInstance:
			scope = "SET GLOBAL"
		case v.IsSystem && strings.HasPrefix(name, "persist."):
			scope = "SET PERSIST"
		case v.IsSystem && strings.HasPrefix(name, "persist_only."):
			scope = "SET PERSIST_ONLY"
		}
	}
	if scope != "" {
		j.danger(scope + " is never run without approval")
	} else {
		j.unknown("SET changes settings of the session")
	}
}

// neverRun names the statements SPEC §2 rule 4 never lets run without a
// person: schema and server changes, user management, and the rest.
func neverRun(s ast.StmtNode) (string, bool) {
	switch s := s.(type) {
	case *ast.DropTableStmt:
		if s.IsView {
			return "DROP VIEW", true
		}
		return "DROP TABLE", true
	case *ast.DropDatabaseStmt:
		return "DROP DATABASE", true
	case *ast.DropIndexStmt:
		return "DROP INDEX", true
	case *ast.DropSequenceStmt:
		return "DROP SEQUENCE", true
	case *ast.DropProcedureStmt:
		return "DROP PROCEDURE", true
	case *ast.DropUserStmt:
		if s.IsDropRole {
			return "DROP ROLE", true
		}
		return "DROP USER", true
	case *ast.DropPlacementPolicyStmt, *ast.DropResourceGroupStmt, *ast.DropStatsStmt,
		*ast.DropBindingStmt, *ast.DropStatisticsStmt, *ast.DropQueryWatchStmt:
		return "DROP", true
	case *ast.TruncateTableStmt:
		return "TRUNCATE TABLE", true
	case *ast.AlterTableStmt:
		return "ALTER TABLE", true
	case *ast.AlterDatabaseStmt:
		return "ALTER DATABASE", true
	case *ast.AlterUserStmt:
		return "ALTER USER", true
	case *ast.AlterInstanceStmt:
		return "ALTER INSTANCE", true
	case *ast.AlterSequenceStmt, *ast.AlterPlacementPolicyStmt, *ast.AlterResourceGroupStmt, *ast.AlterRangeStmt:
		return "ALTER", true
	case *ast.RenameTableStmt:
		return "RENAME TABLE", true
	case *ast.RenameUserStmt:
		return "RENAME USER", true
	case *ast.GrantStmt, *ast.GrantRoleStmt, *ast.GrantProxyStmt:
		return "GRANT", true
	case *ast.RevokeStmt, *ast.RevokeRoleStmt:
		return "REVOKE", true
	case *ast.CreateUserStmt:
		if s.IsCreateRole {
			return "CREATE ROLE", true
		}
		return "CREATE USER", true
	case *ast.SetPwdStmt:
		return "SET PASSWORD", true
	case *ast.SetDefaultRoleStmt:
		return "SET DEFAULT ROLE", true
	case *ast.SetConfigStmt:
		return "SET CONFIG", true
	case *ast.ShutdownStmt:
		return "SHUTDOWN", true
	case *ast.RestartStmt:
		return "RESTART", true
	case *ast.KillStmt:
		return "KILL", true
	case *ast.FlushStmt:
		return "FLUSH", true
	case *ast.LoadDataStmt:
		return "LOAD DATA", true
	case *ast.ImportIntoStmt:
		return "IMPORT INTO", true
	case *ast.LockTablesStmt:
		return "LOCK TABLES", true
	case *ast.BinlogStmt:
		return "BINLOG", true
	case *ast.ProcedureInfo:
		return "CREATE PROCEDURE", true
	case *ast.OptimizeTableStmt:
		return "OPTIMIZE TABLE (a table rebuild)", true
	}
	return "", false
}

// notARead says why any other statement is confirmed.
func notARead(s ast.StmtNode) string {
	switch s.(type) {
	case *ast.UseStmt:
		return "USE switches the session's database; name the database in the tool call instead"
	case *ast.CallStmt:
		return "CALL runs a stored procedure that may write"
	case *ast.CreateTableStmt:
		return "CREATE TABLE changes the schema"
	case *ast.CreateIndexStmt:
		return "CREATE INDEX changes the schema"
	case *ast.CreateViewStmt:
		return "CREATE VIEW changes the schema"
	case *ast.CreateDatabaseStmt:
		return "CREATE DATABASE changes the server"
	case *ast.BeginStmt, *ast.CommitStmt, *ast.RollbackStmt, *ast.SavepointStmt, *ast.ReleaseSavepointStmt:
		return "transaction control is not a plain read"
	}
	return leadWords(s.Text()) + " is not a plain read"
}

// explain judges EXPLAIN and DESCRIBE. EXPLAIN ANALYZE runs its statement,
// so it is judged as that statement; plain EXPLAIN is a read only when what
// it explains is.
func (j *judgement) explain(s *ast.ExplainStmt) bool {
	if s.Stmt == nil || s.Explore {
		j.unknown("EXPLAIN EXPLORE is not a plain read")
		return false
	}
	if s.Analyze {
		return j.kind(s.Stmt)
	}
	var inner judgement
	if inner.kind(s.Stmt) && len(inner.dangers) == 0 && len(inner.unknowns) == 0 {
		return true
	}
	j.unknown("EXPLAIN of " + stmtLabel(s.Stmt) + " is not auto-run; only EXPLAIN of a read is")
	return false
}

// walker visits every node of a statement: subqueries, CTEs, derived
// tables, function arguments, ORDER BY, HAVING and joins included.
type walker struct {
	j *judgement
	// secretTable names a table that holds password hashes or passwords,
	// when the statement reads one.
	secretTable string
	// allColumns: the statement selects every column somewhere (*, t.*,
	// TABLE t).
	allColumns bool
	// secretColumn: the statement names a column that holds a password or
	// its hash.
	secretColumn bool
	// hashColumn: the statement names a column only the account tables
	// have (authentication_string), whatever table it names.
	hashColumn bool
	// bareUser: the statement reads a table "user" with no schema, which
	// is mysql.user in a session whose default database is mysql.
	bareUser bool
}

// Enter implements ast.Visitor.
func (w *walker) Enter(n ast.Node) (ast.Node, bool) {
	switch n := n.(type) {
	case *ast.SelectStmt:
		w.selectStmt(n)
	case *ast.FuncCallExpr:
		w.call(n)
	case *ast.TableName:
		if secretTables[tableKey(n)] {
			w.secretTable = tableName(n)
		}
		if tableKey(n) == "user" {
			w.bareUser = true
		}
	case *ast.SelectField:
		if n.WildCard != nil {
			w.allColumns = true
		}
	case *ast.ColumnNameExpr:
		if secretColumns[n.Name.Name.L] {
			w.secretColumn = true
		}
		if hashColumns[n.Name.Name.L] {
			w.hashColumn = true
		}
	case *ast.VariableExpr:
		if n.Value != nil && (n.IsSystem || n.IsGlobal || n.IsInstance) {
			w.j.unknown("the query assigns a system variable")
		}
	}
	return n, false
}

// Leave implements ast.Visitor.
func (w *walker) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// secrets notes a danger when the statement read password hashes: a
// table that holds them, with every column or a secret column named. Only
// the names are read; SELECT user, host FROM mysql.user stays a plain read.
func (w *walker) secrets() {
	switch {
	case w.secretTable != "" && (w.allColumns || w.secretColumn):
		w.j.danger("the query reads password hashes or passwords from " + w.secretTable +
			"; name the columns you need (user, host, plugin, ...) to read the rest")
	case w.hashColumn:
		// SELECT authentication_string FROM user: no schema, yet only the
		// account tables have the column.
		w.j.danger("the query reads authentication_string, the column of password hashes, whatever table it names")
	case w.bareUser && w.secretColumn:
		w.j.danger("the query reads a password column from user, which is mysql.user when the default database is mysql")
	}
}

func (w *walker) selectStmt(s *ast.SelectStmt) {
	if s.Kind == ast.SelectStmtKindTable {
		w.allColumns = true
	}
	if s.SelectIntoOpt != nil {
		switch s.SelectIntoOpt.Tp {
		case ast.SelectIntoOutfile:
			w.j.danger("SELECT … INTO OUTFILE writes a file on the database server")
		case ast.SelectIntoDumpfile:
			w.j.danger("SELECT … INTO DUMPFILE writes a file on the database server")
		default:
			w.j.unknown("SELECT … INTO sets variables")
		}
	}
	if s.LockInfo != nil && s.LockInfo.LockType != ast.SelectLockNone {
		w.j.unknown("SELECT … " + strings.ToUpper(s.LockInfo.LockType.String()) + " takes locks")
	}
	for _, h := range s.TableHints {
		switch h.HintName.L {
		case "max_execution_time", "set_var", "resource_group":
			w.j.unknown(limitHintReason(strings.ToUpper(h.HintName.L)))
		}
	}
}

func (w *walker) call(f *ast.FuncCallExpr) {
	name := f.FnName.L
	if f.Schema.L != "" {
		if _, ok := sysFunctions[name]; ok && f.Schema.L == "sys" {
			return
		}
		w.j.unknown(f.Schema.O + "." + f.FnName.O + "() is a stored function, which may write")
		w.j.storedBody()
		return
	}
	if e, ok := sideEffect[name]; ok {
		if e.danger {
			w.j.danger(e.reason)
		} else {
			w.j.unknown(e.reason)
		}
		return
	}
	if !isBuiltin(name) {
		w.j.unknown(f.FnName.O + "() is not a known built-in function; a stored function may write")
		w.j.storedBody()
	}
}

// matchesAll reports whether a WHERE condition holds for every row whatever
// the row holds: it names no column (1=1, TRUE, 1), or one of its OR
// branches does.
func matchesAll(e ast.ExprNode) bool {
	for {
		p, ok := e.(*ast.ParenthesesExpr)
		if !ok {
			break
		}
		e = p.Expr
	}
	if b, ok := e.(*ast.BinaryOperationExpr); ok && b.Op == opcode.LogicOr {
		return matchesAll(b.L) || matchesAll(b.R)
	}
	var r rowRef
	e.Accept(&r)
	return !r.found
}

// rowRef finds anything in an expression that depends on the row. A
// variable read (@x, @@version) is the same for every row; an assignment
// (@n := @n + 1) is not. A subquery depends on the row only when it is
// correlated: EXISTS (SELECT 1) and (SELECT COUNT(*) FROM t) > 0 are the
// same for every row (see correlated).
type rowRef struct{ found bool }

// Enter implements ast.Visitor.
func (r *rowRef) Enter(n ast.Node) (ast.Node, bool) {
	switch n := n.(type) {
	case *ast.ColumnNameExpr, *ast.DefaultExpr:
		r.found = true
		return n, true
	case *ast.VariableExpr:
		r.found = r.found || n.Value != nil
		return n, true
	case *ast.SubqueryExpr:
		r.found = r.found || correlated(n.Query)
		return n, true
	case *ast.FuncCallExpr:
		// NOW() > 0 is folded as a constant: a built-in function depends
		// on the row only through its arguments. A stored function or a
		// non-deterministic one may (RAND() < 0.5 touches some rows).
		if n.Schema.L != "" || !builtinDeterministic(n.FnName.L) {
			r.found = true
			return n, true
		}
	}
	return n, r.found
}

// Leave implements ast.Visitor.
func (r *rowRef) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// correlated reports whether a subquery may refer to the outer row: it
// names a column qualified by a table or alias it does not define itself,
// or an unqualified column while it reads no table (SELECT a, with a
// from outside). An unqualified column in a subquery that reads tables is
// taken as its own, as the server takes it when such a table has the
// column: EXISTS (SELECT 1 FROM u WHERE x = 1) reads u.x.
func correlated(q ast.Node) bool {
	if q == nil {
		return true
	}
	var s subqueryNames
	q.Accept(&s)
	for _, c := range s.columns {
		switch {
		case c.Table.L != "" && !s.tables[c.Table.L]:
			return true
		case c.Table.L == "" && len(s.tables) == 0:
			return true
		}
	}
	return false
}

// subqueryNames collects the tables and aliases a subquery defines and the
// columns it names.
type subqueryNames struct {
	tables  map[string]bool
	columns []*ast.ColumnName
}

// Enter implements ast.Visitor.
func (s *subqueryNames) Enter(n ast.Node) (ast.Node, bool) {
	if s.tables == nil {
		s.tables = map[string]bool{}
	}
	switch n := n.(type) {
	case *ast.TableSource:
		if n.AsName.L != "" {
			s.tables[n.AsName.L] = true
		}
	case *ast.TableName:
		s.tables[n.Name.L] = true
	case *ast.CommonTableExpression:
		s.tables[n.Name.L] = true
	case *ast.ColumnNameExpr:
		s.columns = append(s.columns, n.Name)
	}
	return n, false
}

// Leave implements ast.Visitor.
func (s *subqueryNames) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// deleteTables names the tables a DELETE removes rows from.
func deleteTables(s *ast.DeleteStmt) string {
	if s.IsMultiTable && s.Tables != nil && len(s.Tables.Tables) > 0 {
		names := make([]string, 0, len(s.Tables.Tables))
		for _, t := range s.Tables.Tables {
			names = append(names, tableName(t))
		}
		return strings.Join(names, ", ")
	}
	return joinTables(s.TableRefs)
}

// joinTables names the tables of a FROM-like clause.
func joinTables(c *ast.TableRefsClause) string {
	if c == nil || c.TableRefs == nil {
		return "the table"
	}
	var names []string
	var walk func(ast.ResultSetNode)
	walk = func(n ast.ResultSetNode) {
		switch n := n.(type) {
		case *ast.Join:
			walk(n.Left)
			if n.Right != nil {
				walk(n.Right)
			}
		case *ast.TableSource:
			if t, ok := n.Source.(*ast.TableName); ok {
				names = append(names, tableName(t))
			} else {
				walk(n.Source)
			}
		case *ast.TableName:
			names = append(names, tableName(n))
		}
	}
	walk(c.TableRefs)
	if len(names) == 0 {
		return "the table"
	}
	return strings.Join(names, ", ")
}

func tableName(t *ast.TableName) string {
	if t.Schema.O != "" {
		return t.Schema.O + "." + t.Name.O
	}
	return t.Name.O
}

// stmtLabel names a statement for a reason: "DELETE", "CREATE TABLE".
func stmtLabel(s ast.StmtNode) string {
	switch s := s.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		return "SELECT"
	case *ast.DeleteStmt:
		return "DELETE"
	case *ast.UpdateStmt:
		return "UPDATE"
	case *ast.InsertStmt:
		if s.IsReplace {
			return "REPLACE"
		}
		return "INSERT"
	}
	return leadWords(s.Text())
}

// leadWords names a statement by its first keywords ("CREATE EVENT"), for
// reasons about statements without a rule of their own.
func leadWords(text string) string {
	lx := lex(text, lexMode{collectWords: true})
	var words []string
	for _, t := range lx.tokens {
		if t.kind != tokWord || len(words) == 2 || !isLetter(text[t.start]) {
			break
		}
		words = append(words, strings.ToUpper(text[t.start:t.end]))
	}
	if len(words) == 0 {
		return "this statement"
	}
	return strings.Join(words, " ")
}

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// executeReason is why EXECUTE is confirmed whatever the LLM says.
const executeReason = "EXECUTE runs a prepared statement, SQL built at run time that the assessor cannot read"

// Reasons for SHOW statements that print password hashes.
const (
	secretShowCreateUser = "SHOW CREATE USER shows the account's password hash"
	secretShowGrants     = "SHOW GRANTS shows the account's password hash on MariaDB; " +
		"information_schema.USER_PRIVILEGES and SCHEMA_PRIVILEGES list privileges without it"
)

// secretTables are the system tables that hold password hashes or stored
// passwords, by lower-case "schema.table". The names that no application
// table is likely to share are listed without a schema too, for a session
// whose default database is mysql.
var secretTables = map[string]bool{
	"mysql.user":              true, // MySQL; a view over global_priv on MariaDB
	"mysql.global_priv":       true, // MariaDB: Priv holds the hash
	"mysql.password_history":  true, // MySQL
	"mysql.slave_master_info": true, // MySQL: User_password of the replication account
	"mysql.servers":           true, // FEDERATED/Spider server passwords
	"global_priv":             true,
	"password_history":        true,
	"slave_master_info":       true,
}

// secretColumns are the lower-case names of the columns of secretTables
// that hold a hash or a password.
var secretColumns = map[string]bool{
	"authentication_string": true, "password": true, "priv": true, "user_password": true,
}

// hashColumns are column names only the account tables have: named
// anywhere, they read password hashes.
var hashColumns = map[string]bool{"authentication_string": true, "user_password": true}

// tableKey is the lower-case "schema.table" of t, or "table" without a
// schema.
func tableKey(t *ast.TableName) string {
	if t.Schema.L != "" {
		return t.Schema.L + "." + t.Name.L
	}
	return t.Name.L
}

// limitHintReason is the reason for an optimizer hint that changes server
// limits.
func limitHintReason(hint string) string {
	return "the optimizer hint " + hint + " changes server limits for the query"
}
