package sqltool

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/countersign/countersign/internal/testenv"
)

// TestProbe: a DSN that works reaches its server; a wrong password, a
// database that does not exist and a DSN that does not parse are each said
// in words, never with the password.
func TestProbe(t *testing.T) {
	good := testenv.MySQLDSN(t)
	mc, err := mysql.ParseDSN(good)
	if err != nil {
		t.Fatal(err)
	}
	wrongPass := mc.Clone()
	wrongPass.Passwd = "Wrong-secret-7"
	noDB := mc.Clone()
	noDB.DBName = "no_such_db_for_probe"
	tests := []struct {
		name, dsn, want string
	}{
		{"reachable", good, ""},
		{"wrong password", wrongPass.FormatDSN(), "refused the password of user"},
		{"no database", noDB.FormatDSN(), `database "no_such_db_for_probe" does not exist`},
		{"not a DSN", "Wrong-secret-7 at db.example", "the DSN does not parse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := Probe(ctx, tt.dsn)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Probe: %v", err)
			case tt.want == "":
				return
			case err == nil || !strings.Contains(err.Error(), tt.want):
				t.Fatalf("Probe = %v, want it to say %q", err, tt.want)
			case strings.Contains(err.Error(), "Wrong-secret-7"):
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}
