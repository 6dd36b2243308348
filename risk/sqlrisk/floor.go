package sqlrisk

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// SQL the floor must see (issue 11): writes to the grant tables are user
// management, the procedures managed databases offer to kill sessions or
// stop replication are KILL and STOP REPLICA by another name, table
// rebuilds are DDL, and a WHERE that is a simple tautology is no WHERE.

// grantTables hold accounts and privileges: INSERT, UPDATE, DELETE or
// REPLACE there is CREATE USER, GRANT or DROP USER by hand.
var grantTables = map[string]bool{
	"mysql.user": true, "mysql.global_priv": true, "mysql.db": true, "mysql.tables_priv": true,
	"mysql.columns_priv": true, "mysql.procs_priv": true, "mysql.proxies_priv": true, "mysql.roles_mapping": true,
	"mysql.role_edges": true, "mysql.default_roles": true, "mysql.password_history": true, "mysql.global_grants": true,
	"mysql.db_object_privs": true,
}

// managedProcedures are the stored procedures of managed MySQL and
// MariaDB services that kill sessions, stop or redirect replication, or
// change the server: dangers, not an unknown CALL.
var managedProcedures = []string{
	"mysql.rds_kill", "mysql.rds_kill_query", "mysql.rds_stop_replication", "mysql.rds_start_replication",
	"mysql.rds_skip_repl_error", "mysql.rds_reset_external_master", "mysql.rds_set_external_master*",
	"mysql.rds_set_master_auto_position", "mysql.rds_set_configuration", "mysql.rds_rotate_*", "mysql.rds_next_master_log",
	"mysql.rds_start_replication_until*", "mysql.rds_stop_replication*", "mysql.rds_import_binlog_ssl_material",
	"mysql.rds_remove_binlog_ssl_material", "mysql.rds_set_source*", "mysql.rds_reset_external_source", "mysql.rds_skip_transaction_with_gtid",
	"mysql.az_kill", "mysql.az_kill_query", "mysql.az_replication_stop", "mysql.az_replication_start",
	"mysql.az_replication_skip_counter", "mysql.az_replication_change_master*", "mysql.az_replication_remove_master",
	"mysql.az_replication_skip_gtid_transaction", "mysql.az_load_timezone",
	"sys.ps_truncate_all_tables", "sys.ps_setup_*", "sys.ps_reset_*",
	"mysql.alicloud_kill", "cloudsql.kill", "mysql.cloudsql_*",
}

// managedProcedure reports whether name (lower case, schema.name) is one.
func managedProcedure(name string) bool {
	for _, p := range managedProcedures {
		if pre, ok := strings.CutSuffix(p, "*"); ok {
			if strings.HasPrefix(name, pre) {
				return true
			}
		} else if name == p || !strings.Contains(name, ".") && strings.HasSuffix(p, "."+name) {
			return true
		}
	}
	return false
}

// call judges CALL: unknown (a stored procedure may do anything) unless
// pre-authorised by the operator, and a danger for the managed services'
// kill and replication procedures.
func (j *judgement) call(s *ast.CallStmt) {
	name := ""
	if s.Procedure != nil {
		name = strings.ToLower(s.Procedure.FnName.L)
		if s.Procedure.Schema.L != "" {
			name = s.Procedure.Schema.L + "." + name
		}
	}
	if managedProcedure(name) {
		j.danger("CALL " + name + " kills sessions, stops replication or changes the server")
		return
	}
	j.unknown("CALL runs a stored procedure that may write")
	j.storedBody()
}

// storedBody notes a stored procedure or function: its body is not in the
// text, may hold SQL built at run time (PREPARE … EXECUTE) or LOAD_FILE,
// and the LLM cannot vouch for what nobody here can read.
func (j *judgement) storedBody() {
	const reason = "a stored routine's body, which may hold SQL built at run time, is not in the text and the assessor cannot read it"
	for _, r := range j.runtime {
		if r == reason {
			return
		}
	}
	j.runtime = append(j.runtime, reason)
}

// grantWrite records a danger when a row write names a grant table.
func (j *judgement) grantWrite(verb string, tables string) bool {
	for _, t := range strings.Split(tables, ", ") {
		if grantTables[strings.ToLower(strings.Trim(t, "`"))] {
			j.danger(verb + " on " + t + " is user management")
			return true
		}
	}
	return false
}

// tautology reports whether a WHERE condition is true for every row that
// has the columns it names: col = col, col <=> col, col LIKE '%', col IS
// NULL OR col IS NOT NULL, and an AND of such; the constant parts of an OR
// are caught by matchesAll.
func tautology(e ast.ExprNode) bool {
	for {
		p, ok := e.(*ast.ParenthesesExpr)
		if !ok {
			break
		}
		e = p.Expr
	}
	switch x := e.(type) {
	case *ast.BinaryOperationExpr:
		switch x.Op {
		case opcode.LogicOr:
			if tautology(x.L) || tautology(x.R) || matchesAll(x.L) || matchesAll(x.R) {
				return true
			}
			l, lok := x.L.(*ast.IsNullExpr)
			r, rok := x.R.(*ast.IsNullExpr)
			return lok && rok && l.Not != r.Not && sameColumn(l.Expr, r.Expr)
		case opcode.LogicAnd:
			return (tautology(x.L) || matchesAll(x.L)) && (tautology(x.R) || matchesAll(x.R))
		case opcode.EQ, opcode.NullEQ, opcode.GE, opcode.LE:
			return sameColumn(x.L, x.R)
		}
	case *ast.PatternLikeOrIlikeExpr:
		if v, ok := x.Pattern.(ast.ValueExpr); ok && !x.Not {
			if s, ok := v.GetValue().(string); ok && strings.Trim(s, "%") == "" {
				return true
			}
		}
	}
	return false
}

// sameColumn reports whether two expressions name the same column.
func sameColumn(a, b ast.ExprNode) bool {
	ca, ok1 := a.(*ast.ColumnNameExpr)
	cb, ok2 := b.(*ast.ColumnNameExpr)
	return ok1 && ok2 && ca.Name.Name.L == cb.Name.Name.L && ca.Name.Table.L == cb.Name.Table.L
}

// builtinDeterministic reports whether a function is a built-in whose
// value depends only on its arguments (or the clock), so a WHERE made of
// it and constants is the same for every row.
func builtinDeterministic(name string) bool {
	switch name {
	case "rand", "uuid", "uuid_short", "sys_guid", "random_bytes", "sleep", "benchmark", "get_lock", "last_insert_id", "row_count", "found_rows":
		return false
	}
	_, ok := builtin[name]
	return ok
}
