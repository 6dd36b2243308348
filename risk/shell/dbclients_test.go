package shell

import (
	"strings"
	"testing"
)

// TestDBClients: database clients judged by what they send, with the SQL
// rules wired as the policy wires them (issue 25). Each case names the
// reason it must give.
func TestDBClients(t *testing.T) {
	a := tailAnalyzer(t)
	for _, tt := range []tcase{
		// mysql and mariadb.
		{"replica status with \\G", `mysql -e 'SHOW REPLICA STATUS\G'`, readOnly, ""},
		{"two statements, each a read", `mysql -e 'SHOW DATABASES; SELECT 1\g'`, readOnly, ""},
		{"password with the option is passed over", `mysql -pS3cret -e 'SELECT 1'`, readOnly, ""},
		{"password as a long option", `mariadb --password=S3cret -e 'SELECT 1'`, readOnly, ""},
		{"-p alone asks a terminal", `mysql -p -e 'SELECT 1'`, unknown, "database"},
		{"a backslash command after a line comment is part of it", `mysql -e 'SELECT 1 -- x \! id'`, readOnly, ""},
		{"\\G inside a string does not split", `mysql -e "SELECT '\\G'; DROP TABLE x"`, danger, "DROP"},
		{"a write after \\G", `mysql -e 'SELECT 1\G DROP TABLE x'`, danger, "DROP"},
		{"\\! runs a shell command", `mysql -e '\! id'`, danger, "not SQL"},
		{"\\T writes a file", `mysql -e 'SELECT 1 \T /tmp/out'`, unknown, "not SQL"},
		{"system by name", `mysql -e 'system id'`, danger, "command of the mysql client"},
		{"source by name", `mysql -e 'source /tmp/x.sql'`, unknown, "command of the mysql client"},
		{"delimiter by name", `mysql -e 'delimiter //'`, unknown, "command of the mysql client"},
		{"a client command inside a hint still runs", `mysql -e 'SELECT /*+ \! id */ 1'`, danger, "not SQL"},
		{"an open quote", `mysql -e "SELECT 'x"`, unknown, "not closed"},
		{"password hashes", `mysql -e 'SELECT authentication_string FROM mysql.user'`, danger, "password"},
		{"a file on standard input", `mysql shop < file.sql`, danger, "database"},
		{"init-command", `mysql -e 'SELECT 1' --init-command='DROP TABLE x'`, danger, "DROP"},
		{"pager", `mysql -e 'SELECT 1' --pager=less`, danger, "--pager"},
		{"two databases", `mysql -e 'SELECT 1' a b`, unknown, "database"},

		// psql.
		{"select", `psql -c 'SELECT count(*) FROM orders'`, readOnly, ""},
		{"a password in the environment", `PGPASSWORD='s3cret#1' PGHOST=db psql -c 'SELECT 1'`, readOnly, ""},
		{"options in the environment", `PGOPTIONS='-c search_path=evil' psql -c 'SELECT count(*) FROM t'`, unknown, "PGOPTIONS"},
		{"several -c", `psql -c 'SHOW work_mem' -c '\dt+'`, readOnly, ""},
		{"a type with a length is not a call", `psql -c 'select x::numeric(10,2) from t'`, readOnly, ""},
		{"dollar quotes", `psql -c 'select $$a;b$$'`, readOnly, ""},
		{"an escape string", `psql -c "select E'a\\'b'"`, readOnly, ""},
		{"explain", `psql -c 'EXPLAIN (VERBOSE, FORMAT JSON) SELECT 1'`, readOnly, ""},
		{"pg_catalog function", `psql -c 'select pg_catalog.version()'`, readOnly, ""},
		{"explain analyze runs it", `psql -c 'EXPLAIN (ANALYZE) SELECT 1'`, unknown, "ANALYZE"},
		{"a function someone wrote", `psql -c 'select cleanup()'`, unknown, "not a known read"},
		{"a function in a schema", `psql -c 'select app.count(*) from t'`, unknown, "someone may have written"},
		{"pg_sleep", `psql -c 'select pg_sleep(100)'`, unknown, "pg_sleep"},
		{"nextval writes", `psql -c "select nextval('s')"`, unknown, "nextval"},
		{"pg_read_file", `psql -c "select pg_read_file('/etc/passwd')"`, danger, "server's files"},
		{"pg_terminate_backend", `psql -c 'select pg_terminate_backend(1)'`, danger, "other sessions"},
		{"pg_shadow", `psql -c 'select * from pg_shadow'`, danger, "password hashes"},
		{"COPY TO PROGRAM", `psql -c "COPY (SELECT 1) TO PROGRAM 'id'"`, danger, "not a read"},
		{"a write in a CTE", `psql -c 'WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d'`, danger, "DELETE"},
		{"select into", `psql -c 'SELECT * INTO t2 FROM t'`, unknown, "INTO"},
		{"for update", `psql -c 'SELECT * FROM t FOR UPDATE'`, danger, "locks rows"},
		{"set", `psql -c 'SET search_path = evil'`, unknown, "not a read"},
		{"a backslash in a plain string", `psql -c "SELECT 'a\\'; DROP TABLE t; --'"`, danger, "standard_conforming_strings"},
		{"a backslash command in SQL", `psql -c 'SELECT 1 \gexec'`, unknown, "backslash"},
		{"\\! meta-command", `psql -c '\! id'`, danger, "not a look"},
		{"backquotes in a meta-command run a shell", "psql -c '\\d `id`'", unknown, "not a look"},
		{"\\o writes", `psql -c '\o /tmp/x'`, unknown, "not a look"},
		{"-f runs a file", `psql -f x.sql`, unknown, "database"},
		{"-o writes", `psql -c 'select 1' -o /tmp/x`, unknown, "database"},
		{"connection options", `psql "host=db options='-c search_path=evil'" -c 'select count(*) from t'`, unknown, "database"},
		{"an unclosed comment", `psql -c 'select 1 /* x'`, unknown, "not closed"},

		// redis-cli.
		{"get", `redis-cli get k`, readOnly, ""},
		{"options, then a read", `redis-cli -h cache -p 6380 -a S3cret --no-auth-warning -n 2 hgetall u:1`, readOnly, ""},
		{"slowlog get", `redis-cli slowlog get 10`, readOnly, ""},
		{"scan mode", `redis-cli --scan --pattern 'u:*'`, readOnly, ""},
		{"config get of a setting", `redis-cli config get maxmemory`, readOnly, ""},
		{"config get requirepass", `redis-cli config get requirepass`, danger, "password"},
		{"config get a pattern", `redis-cli config get '*'`, danger, "password"},
		{"keys blocks the server", `redis-cli keys '*'`, unknown, "database"},
		{"monitor", `redis-cli monitor`, unknown, "database"},
		{"acl getuser", `redis-cli acl getuser default`, unknown, "database"},
		{"eval", `redis-cli eval 'return 1' 0`, unknown, "database"},
		{"flushall", `redis-cli flushall`, danger, "FLUSHALL"},
		{"a mode and a command", `redis-cli --bigkeys del k`, unknown, "database"},
		{"-x reads standard input into the command", `redis-cli -x set k < f`, danger, "database"},

		// mongosh.
		{"find", `mongosh --quiet --eval 'db.orders.find({status: "failed", n: {$gt: -1}}).sort({t: -1}).limit(5)'`, readOnly, ""},
		{"aggregate", `mongosh --eval 'db.o.aggregate([{$match: {a: /x/i}}, {$group: {_id: "$s", n: {$sum: 1}}}])'`, readOnly, ""},
		{"status and a property", `mongosh --eval 'printjson(db.serverStatus().connections); rs.status()'`, readOnly, ""},
		{"a collection by name", `mongosh --eval 'db.getCollection("a.b").countDocuments({t: ISODate("2024-01-01")})'`, readOnly, ""},
		{"$out", `mongosh --eval 'db.o.aggregate([{$out: "x"}])'`, unknown, "$out"},
		{"$merge quoted", `mongosh --eval 'db.o.aggregate([{"$merge": {into: "x"}}])'`, unknown, "$merge"},
		{"$where runs code", `mongosh --eval 'db.o.find({$where: "1"})'`, unknown, "$where"},
		{"system.users", `mongosh --eval 'db.getSiblingDB("admin").system.users.find()'`, danger, "password hashes"},
		{"forEach", `mongosh --eval 'db.o.find().forEach(printjson)'`, unknown, "forEach"},
		{"an arrow function", `mongosh --eval 'db.o.find().map(d => d._id)'`, unknown, "does not need"},
		{"drop", `mongosh --eval 'db.o.drop()'`, danger, "not a read"},
		{"a bare collection", `mongosh --eval 'db.o'`, unknown, "calls nothing"},
		{"a script file", `mongosh --eval 'db.o.find()' x.js`, unknown, "database"},
		{"no --eval", `mongosh`, unknown, "database"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := a.Analyze(tt.script)
			if got := kind(res); got != tt.want {
				t.Fatalf("Analyze(%q) = %v, want %v: %+v", tt.script, got, tt.want, res)
			}
			all := strings.Join(append(append(append([]string{}, res.Absurd...), res.Danger...), res.Unknown...), "\n")
			if !strings.Contains(all, tt.reason) {
				t.Fatalf("Analyze(%q) reasons %q lack %q", tt.script, all, tt.reason)
			}
		})
	}
}

// FuzzDBClients: whatever text a client is sent, judging it never panics,
// and text judged a read never stays a read with a write appended as a
// statement of its own: the splitters never lose a statement in a quote,
// a comment or a client command they misread.
func FuzzDBClients(f *testing.F) {
	for _, s := range []string{"SELECT 1", `SHOW SLAVE STATUS\G`, "select $$a$$", "select E'\\''", "db.o.find({a: /x/})",
		"select 1 -- x", "select /* a /* b */ */ 1", "get k", `select '\G'`, "rs.status()"} {
		f.Add(s)
	}
	a := tailAnalyzer(f)
	f.Fuzz(func(t *testing.T, text string) {
		for _, form := range []struct{ read, write string }{
			{"mysql -e " + shellQuote(text), "mysql -e " + shellQuote(text+"\n;DROP TABLE x")},
			{"psql -c " + shellQuote(text), "psql -c " + shellQuote(text+"\n;DROP TABLE x")},
			{"mongosh --eval " + shellQuote(text), "mongosh --eval " + shellQuote(text+"\n;db.x.drop()")},
		} {
			res := a.Analyze(form.read)
			checkConsistent(t, form.read, res)
			if !res.ReadOnly {
				continue
			}
			if res := a.Analyze(form.write); res.ReadOnly {
				t.Fatalf("Analyze(%q) is read-only, and so is %q", form.read, form.write)
			}
		}
		script := "redis-cli " + text
		checkConsistent(t, script, a.Analyze(script))
	})
}
