package sqlrisk

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStatements(t *testing.T) {
	a := newAnalyzer(t)
	k := func(kinds ...string) []Statement {
		var out []Statement
		for _, s := range kinds {
			out = append(out, lookupKind(s))
		}
		return out
	}
	tests := []struct {
		name   string
		sql    string
		want   []Statement
		wantOK bool
	}{
		{"select", "SELECT * FROM t", k("SELECT"), true},
		{"union is a select", "SELECT 1 UNION SELECT 2", k("SELECT"), true},
		{"alter table", "ALTER TABLE orders ADD COLUMN note TEXT", k("ALTER TABLE"), true},
		{"create index", "CREATE INDEX i ON t (a)", k("CREATE INDEX"), true},
		{"drop table", "drop table orders", k("DROP TABLE"), true},
		{"drop view", "DROP VIEW v", k("DROP VIEW"), true},
		{"truncate", "TRUNCATE TABLE t", k("TRUNCATE TABLE"), true},
		{"rename", "RENAME TABLE a TO b", k("RENAME TABLE"), true},
		{"delete", "DELETE FROM t WHERE id = 1", k("DELETE"), true},
		{"replace", "REPLACE INTO t VALUES (1)", k("REPLACE"), true},
		{"grant", "GRANT SELECT ON db.* TO 'u'@'%'", k("GRANT"), true},
		{"create user", "CREATE USER 'u'@'%' IDENTIFIED BY 'x'", k("CREATE USER"), true},
		{"set global", "SET GLOBAL max_connections = 10", k("SET"), true},
		{"two statements", "UPDATE t SET a = 1 WHERE id = 2; DROP TABLE t", k("UPDATE", "DROP TABLE"), true},
		{"explain analyze runs its statement", "EXPLAIN ANALYZE DELETE FROM t WHERE id = 1", k("EXPLAIN", "DELETE"), true},
		{"explain alone", "EXPLAIN SELECT 1", k("EXPLAIN"), true},
		{"prepare of literal text", "PREPARE s FROM 'DROP TABLE t'", k("PREPARE", "DROP TABLE"), true},
		{"prepare of a variable", "PREPARE s FROM @q", k("PREPARE"), false},
		{"does not parse", "ALTER TABL t", nil, false},
		{"executable comment", "SELECT 1 /*!50000 , (SELECT 1) */", nil, false},
		{"empty", "  ", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := a.Statements(tc.sql)
			if ok != tc.wantOK {
				t.Errorf("Statements(%q) ok = %v, want %v", tc.sql, ok, tc.wantOK)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Statements(%q) (-want +got):\n%s", tc.sql, diff)
			}
		})
	}
}

// TestKindsTable: every row names a class, no kind twice, and KindClass
// finds kinds and classes alike.
func TestKindsTable(t *testing.T) {
	seen := map[string]bool{}
	for _, row := range Kinds {
		if seen[row.Kind] {
			t.Errorf("kind %q listed twice", row.Kind)
		}
		seen[row.Kind] = true
		if _, isClass, ok := KindClass(row.Class); !ok || !isClass {
			t.Errorf("kind %q has class %q, which KindClass does not know", row.Kind, row.Class)
		}
		if got, isClass, ok := KindClass(row.Kind); !ok || isClass != (row.Kind == ClassOther) || got.Class != row.Class {
			t.Errorf("KindClass(%q) = %v %v %v", row.Kind, got, isClass, ok)
		}
	}
	if _, _, ok := KindClass("ALTER TABL"); ok {
		t.Error("KindClass knows a misspelt kind")
	}
}
