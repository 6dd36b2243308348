package shell

import (
	"strings"
)

// Database clients are judged by what they send (issue 25): mysql and
// mariadb -e through the SQL rules (Options.SQLRead), with the client's
// own commands \G, \g and ; understood; psql -c through a small
// PostgreSQL read check of its own (no Go PostgreSQL grammar is among the
// dependencies); redis-cli by its command table; mongosh --eval by a
// small reading of the shell's JavaScript. Whatever they cannot read is
// not a look. A password on the command line (mysql -pSECRET, redis-cli
// -a SECRET, mongosh -p SECRET, a URL with one) does not stop a look: it
// is the redaction's to mask.

// statementOptions are, per database client, the options whose value is
// the statement it sends: its own judge (dbRead) reads that statement, so
// the floors do not take the option for code handed to a program. A
// client's other code options (redis-cli --eval runs Lua) stay floors.
var statementOptions = map[string]map[string]bool{
	"mysql":   {"-e": true, "--execute": true},
	"mariadb": {"-e": true, "--execute": true},
	"psql":    {"-c": true, "--command": true},
	"mongosh": {"--eval": true},
	"mongo":   {"--eval": true},
}

// dbRead reports whether a database client's command line only reads; it
// may record a danger (a secret it prints, a function that reaches files).
func (j *judge) dbRead(c *cmd) bool {
	switch c.name {
	case "mysql", "mariadb", "mysqladmin":
		return j.mysqlRead(c)
	case "psql":
		return j.psqlRead(c)
	case "redis-cli":
		return j.redisRead(c)
	case "mongosh", "mongo":
		return j.mongoRead(c)
	}
	return false
}

// mysqlValued are the mysql and mysqladmin options that take a value;
// mysqlSafe those that only say where to connect and how to print.
var (
	mysqlValued = mustSpec("-h -u -P -D -S -e --host --user --port --database --socket --protocol --execute --default-character-set --connect-timeout --login-path --ssl-mode --ssl-ca")
	mysqlSafe   = []string{"-h", "-u", "-P", "-D", "-S", "-e", "--host", "--user", "--port", "--database", "--socket", "--protocol",
		"--execute", "--default-character-set", "--connect-timeout", "--login-path", "-N", "-B", "-t", "-s", "-E", "-r", "-A",
		"--skip-column-names", "--batch", "--table", "--silent", "--vertical", "--raw", "--no-auto-rehash", "-i", "--relative",
		"--ssl-mode", "--ssl-ca", "-C", "--compress", "--column-names", "--show-warnings", "--unbuffered", "-n", "-q", "--quick",
		"--no-beep", "-b", "--column-type-info", "--binary-as-hex"}
	mysqladminReads = []string{"status", "processlist", "proc", "variables", "var", "extended-status", "ext", "ping", "version"}
)

// mysqlRead reports whether mysql -e runs only statements the SQL rules
// whitelist (SPEC §2 rule 6), or mysqladmin only reports, with options
// that only say where to connect and how to print. A password given with
// the option (-pSECRET, --password=SECRET) is passed over; -p alone asks
// a terminal for one, and a defaults file or any other option is not a
// look. mysql < file.sql has no -e: not a look.
func (j *judge) mysqlRead(c *cmd) bool {
	args := make([]arg, 0, len(c.args))
	for _, a := range c.args {
		switch t := a.text; {
		case t == "-p" || t == "--password":
			return false
		case strings.HasPrefix(t, "-p") || strings.HasPrefix(t, "--password="):
			if a.dynamic {
				return false
			}
		default:
			args = append(args, a)
		}
	}
	opts, ops := mysqlValued.parseInto(j, args)
	var sql []string
	for _, o := range opts {
		if !in(o.String(), mysqlSafe...) || o.hasValue && o.value.dynamic {
			return false
		}
		if o.is('e', "execute") {
			sql = append(sql, o.value.text)
		}
	}
	for _, op := range ops {
		if op.dynamic {
			return false
		}
	}
	if c.name == "mysqladmin" {
		for _, op := range ops {
			if !in(op.text, mysqladminReads...) {
				return false
			}
		}
		return len(ops) > 0 && len(sql) == 0
	}
	if len(sql) != 1 || j.a.sqlRead == nil || len(ops) > 1 {
		return false
	}
	stmts, why := mysqlStatements(sql[0])
	if why != "" {
		if runsShell(sql[0]) {
			j.danger(c.name + " -e runs a shell command (\\! or system): " + why)
		} else {
			j.unknown(c.name + " -e: " + why)
		}
		return false
	}
	read := len(stmts) > 0
	for _, st := range stmts {
		ok, dangers := j.a.sqlRead(st)
		for _, d := range dangers {
			j.danger(c.name + " -e: " + d)
		}
		read = read && ok
	}
	return read
}

// mysqlClientCommands are the mysql client's own commands by name, which
// it runs at the start of a line even under -e: system runs a shell
// command, source a file, tee and pager write or run.
var mysqlClientCommands = []string{"?", "clear", "connect", "delimiter", "edit", "ego", "exit", "go", "help", "nopager",
	"notee", "pager", "print", "prompt", "quit", "rehash", "source", "status", "system", "tee", "use", "charset",
	"warnings", "nowarning", "resetconnection", "query_attributes", "ssl_session_data_print"}

// mysqlStatements splits the text of mysql -e into statements at ";",
// "\G" and "\g" outside quotes and comments, as the client does. Any
// other backslash command (\! runs a shell command, \. a file, \T
// writes one) or a client command by name makes it unreadable: why says
// so.
func mysqlStatements(text string) (stmts []string, why string) {
	start := 0
	cut := func(end int) {
		if st := strings.TrimSpace(text[start:end]); st != "" {
			stmts = append(stmts, st)
		}
	}
	for i := 0; i < len(text); i++ {
		switch ch := text[i]; {
		case ch == '\'' || ch == '"' || ch == '`':
			k := i + 1
			for ; k < len(text) && text[k] != ch; k++ {
				if text[k] == '\\' && ch != '`' {
					k++
				}
			}
			if k >= len(text) {
				return nil, "a quote is not closed"
			}
			i = k
		case ch == '#' || ch == '-' && strings.HasPrefix(text[i:], "-- ") || ch == '-' && text[i:] == "--":
			k := strings.IndexByte(text[i:], '\n')
			if k < 0 {
				i = len(text)
			} else {
				i += k
			}
		case ch == '/' && strings.HasPrefix(text[i:], "/*") && !strings.HasPrefix(text[i:], "/*!") && !strings.HasPrefix(text[i:], "/*+"):
			// The client reads /*! and /*+ (executable comments and
			// hints) as text: a \! inside one still runs.
			k := strings.Index(text[i+2:], "*/")
			if k < 0 {
				return nil, "a comment is not closed"
			}
			i += k + 3
		case ch == ';':
			cut(i)
			start = i + 1
		case ch == '\\':
			if i+1 >= len(text) || text[i+1] != 'G' && text[i+1] != 'g' {
				return nil, "the client command " + text[i:min(i+2, len(text))] + " is not SQL (\\! runs a shell command, \\. a file, \\T writes one)"
			}
			cut(i)
			i++
			start = i + 1
		}
	}
	cut(len(text))
	for _, st := range stmts {
		first := strings.ToLower(strings.FieldsFunc(st, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == ';' })[0])
		if in(first, mysqlClientCommands...) {
			return nil, first + " is a command of the mysql client, not SQL"
		}
	}
	return stmts, ""
}

// runsShell reports whether a client's text holds its shell escape: \!
// for mysql and psql, system at the start of a line for mysql.
func runsShell(text string) bool {
	if strings.Contains(text, "\\!") {
		return true
	}
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.EqualFold(f[0], "system") {
			return true
		}
	}
	return false
}

// psqlSpec holds the psql options that take a value.
var psqlSpec = mustSpec("-c -d -h -p -U -F -R -v -o -f -L -P -T --command --dbname --host --port --username --field-separator --record-separator --set --variable --output --file --log-file --pset --table-attr")

// psqlRead: psql -c TEXT..., with options that only say where to connect
// and how to print, each TEXT a read (psqlText). psql -f, -o, -L, -P
// (pager=...), psql < file and psql alone are not looks.
func (j *judge) psqlRead(c *cmd) bool {
	opts, ops := psqlSpec.parseInto(j, c.args)
	var texts []arg
	for _, o := range opts {
		switch {
		case o.hasValue && o.value.dynamic:
			return false
		case o.is('c', "command"):
			texts = append(texts, o.value)
		case o.is('d', "dbname"), o.is('h', "host"), o.is('p', "port"), o.is('U', "username"), o.is('F', "field-separator"),
			o.is('R', "record-separator"), o.is('v', "variable"), o.is(0, "set"), o.is('T', "table-attr"):
		case o.short != 0 && strings.IndexByte("AtqxXHzwaneEb0", o.short) >= 0:
		case o.is(0, "no-align"), o.is(0, "tuples-only"), o.is(0, "quiet"), o.is(0, "expanded"), o.is(0, "no-psqlrc"),
			o.is(0, "csv"), o.is(0, "html"), o.is(0, "no-password"), o.is(0, "echo-all"), o.is(0, "echo-errors"),
			o.is(0, "echo-queries"), o.is(0, "echo-hidden"), o.is(0, "field-separator-zero"), o.is(0, "record-separator-zero"):
		default:
			return false // -f, -o, -L, -P, -W, -s, -1 and the rest
		}
	}
	if len(texts) == 0 || len(ops) > 2 {
		return false
	}
	for _, op := range ops {
		// A connection string's options (options='-c search_path=...')
		// change which function a name calls.
		if op.dynamic || strings.Contains(strings.ToLower(op.text), "options") {
			return false
		}
	}
	for _, t := range texts {
		if why := j.psqlText(c.name, t.text); why != "" {
			j.unknown(why)
			return false
		}
	}
	return true
}

// psqlMeta are the backslash commands of psql that only describe: \d and
// its family, \l, \conninfo. Their words may only be plain names or
// patterns: psql runs a word in backquotes as a shell command.
func psqlMeta(text string) bool {
	f := strings.Fields(text)
	cmd := strings.TrimSuffix(strings.TrimPrefix(f[0], "\\"), "+")
	if !(cmd == "l" || cmd == "conninfo" || strings.HasPrefix(cmd, "d") && strings.Trim(cmd, "abcdefilmnoprstuvxyACDEFOPST") == "") {
		return false
	}
	for _, w := range f[1:] {
		if strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.*") != "" {
			return false
		}
	}
	return true
}

// pgReadStarts are the first words of a PostgreSQL statement that reads.
var pgReadStarts = []string{"select", "with", "show", "explain", "table", "values"}

// pgNotRead are words that, anywhere in a statement, make it more than a
// read: writes, DDL, locks, SELECT INTO, session changes, procedures.
var pgNotRead = []string{"insert", "update", "delete", "merge", "copy", "create", "drop", "alter", "truncate", "grant",
	"revoke", "into", "lock", "call", "do", "execute", "prepare", "listen", "notify", "vacuum", "analyze", "analyse",
	"refresh", "cluster", "reindex", "comment", "import", "load", "discard", "reset", "set", "checkpoint", "security"}

// pgDangerous are functions that reach the server's files, the network or
// other sessions: a danger even in a SELECT.
var pgDangerous = []string{"pg_read_file", "pg_read_binary_file", "pg_ls_dir", "pg_stat_file", "lo_export", "lo_import",
	"lo_get", "dblink", "dblink_exec", "dblink_connect", "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf",
	"pg_rotate_logfile", "pg_promote", "pg_switch_wal", "pg_ls_logdir", "pg_ls_waldir", "pg_file_write", "pg_logdir_ls"}

// pgSecretTables hold password hashes and the passwords of foreign
// servers.
var pgSecretTables = []string{"pg_authid", "pg_shadow", "pg_user_mapping", "pg_user_mappings"}

// pgFuncs are the functions a read may call: aggregates, windows, text,
// time and the server's own statistics and sizes. Any other name may be a
// function someone wrote, which can do anything: not a look.
var pgFuncs = wordSet(`count sum avg min max array_agg string_agg bool_and bool_or every json_agg jsonb_agg
		json_object_agg jsonb_object_agg percentile_cont percentile_disc mode stddev stddev_pop stddev_samp variance
		row_number rank dense_rank percent_rank cume_dist lag lead first_value last_value nth_value ntile
		now clock_timestamp statement_timestamp transaction_timestamp date_trunc date_part extract age to_char to_timestamp
		to_date to_number make_interval justify_interval justify_hours justify_days timezone isfinite
		lower upper initcap length char_length octet_length bit_length substr substring trim btrim ltrim rtrim replace
		split_part concat concat_ws format left right lpad rpad repeat reverse position strpos regexp_replace
		regexp_matches regexp_match regexp_split_to_array starts_with md5 encode decode chr ascii quote_ident
		quote_literal to_hex translate coalesce nullif greatest least abs round ceil ceiling floor trunc mod power sqrt
		ln log exp sign div width_bucket to_json to_jsonb row_to_json json_build_object jsonb_build_object
		json_build_array jsonb_build_array jsonb_pretty json_extract_path json_extract_path_text jsonb_extract_path
		jsonb_extract_path_text json_array_length jsonb_array_length json_each jsonb_each json_object_keys
		jsonb_object_keys jsonb_typeof array_length array_to_string string_to_array array_position cardinality unnest
		generate_series pg_size_pretty pg_size_bytes pg_database_size pg_relation_size pg_total_relation_size
		pg_table_size pg_indexes_size pg_column_size pg_is_in_recovery pg_last_xact_replay_timestamp
		pg_last_wal_receive_lsn pg_last_wal_replay_lsn pg_current_wal_lsn pg_current_wal_insert_lsn
		pg_current_wal_flush_lsn pg_wal_lsn_diff pg_walfile_name pg_postmaster_start_time pg_conf_load_time
		pg_backend_pid pg_blocking_pids pg_get_viewdef pg_get_indexdef pg_get_constraintdef pg_get_triggerdef
		pg_get_functiondef pg_get_userbyid pg_get_expr pg_typeof pg_is_wal_replay_paused pg_stat_statements
		current_database current_schema current_schemas version inet_server_addr inet_server_port inet_client_addr
		has_table_privilege has_database_privilege has_schema_privilege pg_has_role obj_description
		col_description format_type to_regclass to_regtype pg_xact_commit_timestamp pg_tablespace_size
		pg_relation_filepath pg_stat_get_activity pg_control_checkpoint pg_control_system pg_get_keywords
		age txid_current_if_assigned pg_last_committed_xact pg_replication_origin_progress pg_get_wal_replay_pause_state`)

// pgParenWords are keywords that a "(" may follow without a call.
var pgParenWords = []string{"in", "exists", "any", "all", "some", "values", "as", "over", "filter", "within", "cast",
	"array", "row", "using", "on", "from", "join", "and", "or", "not", "when", "then", "else", "select", "where",
	"case", "lateral", "by", "distinct", "is", "like", "ilike", "between", "having", "union", "except", "intersect",
	"with", "table", "explain", "verbose", "costs", "format", "buffers", "settings", "summary", "timing", "wal", "grouping",
	"sets", "rollup", "cube", "limit", "offset", "returning", "partition", "order", "group", "escape", "similar", "to",
	"interval", "timestamp", "numeric", "decimal", "varchar", "char", "bit", "time"}

// pgToken is one word of a PostgreSQL text: a name (lower case), a
// quoted name, a string, a number or a punctuation byte.
type pgToken struct {
	text string
	kind byte // 'w' word, 'q' quoted name, 's' string, 'n' number, 'p' punctuation
}

// pgLex splits SQL into tokens the way the server reads them, or says
// why it cannot: a quote or comment not closed, or a backslash in a
// plain string (how the server reads it depends on a setting).
func pgLex(text string) (toks []pgToken, why string) {
	for i := 0; i < len(text); {
		ch := text[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f':
			i++
		case ch == '-' && strings.HasPrefix(text[i:], "--"):
			k := strings.IndexByte(text[i:], '\n')
			if k < 0 {
				return toks, ""
			}
			i += k
		case ch == '/' && strings.HasPrefix(text[i:], "/*"):
			depth, k := 0, i
			for k < len(text) {
				if strings.HasPrefix(text[k:], "/*") {
					depth, k = depth+1, k+2
				} else if strings.HasPrefix(text[k:], "*/") {
					depth, k = depth-1, k+2
					if depth == 0 {
						break
					}
				} else {
					k++
				}
			}
			if depth != 0 {
				return nil, "a comment is not closed"
			}
			i = k
		case (ch == 'e' || ch == 'E') && i+1 < len(text) && text[i+1] == '\'':
			k := i + 2
			for ; k < len(text) && text[k] != '\''; k++ {
				if text[k] == '\\' {
					k++
				}
			}
			if k >= len(text) {
				return nil, "a quote is not closed"
			}
			toks = append(toks, pgToken{text[i+2 : k], 's'})
			i = k + 1
		case ch == '\'':
			k := i + 1
			for ; k < len(text); k++ {
				if text[k] == '\\' {
					return nil, "a backslash in a string is read by the server one way or another depending on standard_conforming_strings"
				}
				if text[k] == '\'' {
					if k+1 < len(text) && text[k+1] == '\'' {
						k++
						continue
					}
					break
				}
			}
			if k >= len(text) {
				return nil, "a quote is not closed"
			}
			toks = append(toks, pgToken{text[i+1 : k], 's'})
			i = k + 1
		case ch == '"':
			k := strings.IndexByte(text[i+1:], '"')
			if k < 0 {
				return nil, "a quoted name is not closed"
			}
			toks = append(toks, pgToken{text[i+1 : i+1+k], 'q'})
			i += k + 2
		case ch == '$' && i+1 < len(text) && !isDigit(text[i+1]):
			// $tag$ ... $tag$
			k := strings.IndexByte(text[i+1:], '$')
			if k < 0 {
				return nil, "a dollar quote is not closed"
			}
			tag := text[i : i+k+2]
			if strings.Trim(tag[1:len(tag)-1], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != "" {
				return nil, "cannot read " + tag
			}
			end := strings.Index(text[i+len(tag):], tag)
			if end < 0 {
				return nil, "a dollar quote is not closed"
			}
			toks = append(toks, pgToken{text[i+len(tag) : i+len(tag)+end], 's'})
			i += len(tag) + end + len(tag)
		case isDigit(ch):
			k := i
			for k < len(text) && (isDigit(text[k]) || text[k] == '.' || text[k] == '_' || text[k] == 'e' || text[k] == 'E') {
				k++
			}
			toks = append(toks, pgToken{text[i:k], 'n'})
			i = k
		case ch == '_' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= 0x80:
			k := i
			for k < len(text) && (text[k] == '_' || text[k] == '$' || isDigit(text[k]) || text[k] >= 'a' && text[k] <= 'z' ||
				text[k] >= 'A' && text[k] <= 'Z' || text[k] >= 0x80) {
				k++
			}
			toks = append(toks, pgToken{strings.ToLower(text[i:k]), 'w'})
			i = k
		default:
			toks = append(toks, pgToken{text[i : i+1], 'p'})
			i++
		}
	}
	return toks, ""
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// psqlText judges one -c text: a describing backslash command, or SQL
// whose every statement reads. It returns why it is not a look, and
// records a danger for a function that reaches files or other sessions
// and for a table of password hashes.
func (j *judge) psqlText(name, text string) string {
	if t := strings.TrimSpace(text); strings.HasPrefix(t, "\\") {
		if psqlMeta(t) {
			return ""
		}
		if runsShell(t) {
			j.danger(name + " -c " + clipWord(t) + " runs a shell command")
		}
		return name + " -c " + clipWord(t) + " is a psql command that is not a look (\\! runs a shell command, \\o and \\copy write files)"
	}
	toks, why := pgLex(text)
	if why != "" {
		return name + " -c: " + why
	}
	var stmts [][]pgToken
	start := 0
	for i, t := range toks {
		if t.kind == 'p' && t.text == ";" {
			if i > start {
				stmts = append(stmts, toks[start:i])
			}
			start = i + 1
		}
	}
	if start < len(toks) {
		stmts = append(stmts, toks[start:])
	}
	if len(stmts) == 0 {
		return name + " -c sends no statement"
	}
	for _, st := range stmts {
		if why := j.pgStatement(name, st); why != "" {
			return why
		}
	}
	return ""
}

// pgStatement judges one statement's tokens.
func (j *judge) pgStatement(name string, st []pgToken) string {
	if st[0].kind != 'w' || !in(st[0].text, pgReadStarts...) {
		return name + " -c " + st[0].text + " is not a read"
	}
	for i, t := range st {
		if t.kind != 'w' {
			if t.kind == 'p' && t.text == "\\" {
				return name + " -c: a backslash outside a string is not SQL"
			}
			continue
		}
		switch {
		case in(t.text, pgSecretTables...):
			j.danger(name + " -c reads " + t.text + ", which holds password hashes")
			return ""
		case in(t.text, pgNotRead...):
			return name + " -c: " + strings.ToUpper(t.text) + " makes the statement more than a read"
		case t.text == "for" && i+1 < len(st) && in(st[i+1].text, "update", "share", "no", "key"):
			return name + " -c: FOR " + strings.ToUpper(st[i+1].text) + " locks rows"
		}
		if i+1 >= len(st) || st[i+1].kind != 'p' || st[i+1].text != "(" {
			continue
		}
		// A call: NAME( or SCHEMA.NAME(.
		qualified := i >= 2 && st[i-1].text == "." && st[i-1].kind == 'p'
		if qualified && st[i-2].text != "pg_catalog" {
			return name + " -c calls " + st[i-2].text + "." + t.text + ", a function someone may have written"
		}
		if i > 0 && st[i-1].kind == 'p' && st[i-1].text == ":" {
			continue // ::numeric(10,2) is a type
		}
		switch {
		case in(t.text, pgDangerous...):
			j.danger(name + " -c calls " + t.text + ", which reaches the server's files, the network or other sessions")
			return ""
		case pgFuncs[t.text] || !qualified && in(t.text, pgParenWords...):
		default:
			return name + " -c calls " + t.text + ", which is not a known read (it may be a function someone wrote, or change state)"
		}
	}
	return ""
}

// redisValued are the redis-cli options that take a value.
var redisValued = []string{"-h", "-p", "-n", "-s", "-a", "-u", "-i", "-r", "--user", "--pass", "--cacert", "--cacertdir",
	"--cert", "--key", "--sni", "--pattern", "--count", "--memkeys-samples"}

// redisReads are the redis commands that only read, by their first word;
// redisSubReads those whose second word says (SLOWLOG GET). Left out on
// purpose: TOUCH (it changes a key's idle time), KEYS (it blocks the server while it walks every key: SCAN is
// the look), MONITOR (never ends, and prints every AUTH password),
// SUBSCRIBE, the blocking pops, GETDEL and GETEX (they write), SORT and
// GEORADIUS (STORE writes), DUMP, EVAL and FCALL (scripts), and ACL LIST
// and GETUSER (password hashes).

var redisSubReads = map[string][]string{
	"slowlog": {"get", "len", "help"}, "latency": {"latest", "doctor", "history", "histogram", "help"},
	"memory": {"stats", "doctor", "usage", "malloc-stats", "help"}, "client": {"list", "info", "getname", "id", "help"},
	"cluster": {"info", "nodes", "slots", "shards", "myid", "countkeysinslot", "keyslot", "links", "help"},
	"object":  {"encoding", "freq", "idletime", "refcount", "help"}, "command": {"count", "info", "docs", "list", "getkeys", "help"},
	"pubsub": {"channels", "numsub", "numpat", "shardchannels", "shardnumsub", "help"}, "xinfo": {"stream", "groups", "consumers", "help"},
	"acl": {"whoami", "cat", "users", "help"}, "module": {"list", "help"}, "function": {"list", "stats", "help"},
	"config": {"get", "help"},
}

var redisReads = wordSet(`get mget strlen getrange substr exists type ttl pttl expiretime pexpiretime hget hmget
		hgetall hkeys hvals hlen hexists hstrlen hrandfield hscan lrange llen lindex lpos scard smembers sismember
		smismember srandmember sscan sinter sunion sdiff sintercard zrange zrangebyscore zrevrange zrevrangebyscore
		zrangebylex zrevrangebylex zcard zcount zscore zmscore zrank zrevrank zscan zlexcount zrandmember xlen xrange
		xrevrange xpending dbsize info ping time role lastsave echo scan randomkey bitcount bitpos getbit pfcount geopos
		geodist geohash geosearch sort_ro lolwut`)

// redisModes are redis-cli's own modes that only read.
var redisModes = []string{"--stat", "--bigkeys", "--memkeys", "--hotkeys", "--latency", "--latency-history", "--latency-dist", "--scan", "--intrinsic-latency"}

// redisRead reports whether a redis-cli command line runs one read
// command, or one of the modes that only read, with options that only
// say where to connect and how to print. CONFIG GET of a password
// (requirepass, masterauth, or a pattern that can match one) is a danger.
func (j *judge) redisRead(c *cmd) bool {
	var words []arg
	mode := false
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		t := a.text
		switch {
		case a.dynamic && len(words) == 0:
			return false
		case len(words) > 0:
			words = append(words, a) // the command's own words
		case in(t, redisValued...):
			i++
		case in(t, redisModes...):
			mode = true
		case in(t, "--tls", "--no-auth-warning", "-c", "--raw", "--no-raw", "-3", "-2", "--resp2", "--resp3", "-e", "--verbose", "--quoted-input", "--show-pushes"):
		case strings.HasPrefix(t, "-"):
			return false // -x, --eval, --rdb, --pipe and the rest
		default:
			words = append(words, a)
		}
	}
	if len(words) == 0 {
		return mode // no command and no mode: an interactive session
	}
	if mode {
		return false
	}
	first := strings.ToLower(words[0].text)
	if redisReads[first] {
		return true
	}
	subs, ok := redisSubReads[first]
	if !ok || len(words) < 2 || words[1].dynamic || !in(strings.ToLower(words[1].text), subs...) {
		return false
	}
	if first == "config" {
		for _, p := range words[2:] {
			low := strings.ToLower(p.text)
			if p.dynamic || strings.ContainsAny(low, "*?[") || strings.Contains(low, "pass") || strings.Contains(low, "auth") {
				j.danger("redis-cli config get " + p.text + " prints (or may print) a password")
				return false
			}
		}
	}
	return true
}

// mongoValued are the mongosh options that take a value.
var mongoValued = mustSpec("--eval --host --port -u --username -p --password --authenticationDatabase --authenticationMechanism --tlsCAFile --tlsCertificateKeyFile --json --apiVersion --readPreference")

// mongoRead: mongosh [URI|DB] --eval CODE..., CODE only finds, counts,
// aggregates without $out or $merge, and asks the server for its status
// (mongoCode). A script file, no --eval, or any other option is not a
// look.
func (j *judge) mongoRead(c *cmd) bool {
	opts, ops := mongoValued.parseInto(j, c.args)
	var code []arg
	for _, o := range opts {
		switch {
		case o.hasValue && o.value.dynamic:
			return false
		case o.is(0, "eval"):
			code = append(code, o.value)
		case o.is(0, "quiet"), o.is(0, "norc"), o.is(0, "tls"), o.is(0, "nodb"), o.is(0, "host"), o.is(0, "port"),
			o.is('u', "username"), o.is('p', "password"), o.is(0, "authenticationDatabase"), o.is(0, "authenticationMechanism"),
			o.is(0, "tlsCAFile"), o.is(0, "json"), o.is(0, "apiVersion"), o.is(0, "readPreference"):
		default:
			return false
		}
	}
	if len(code) == 0 || len(ops) > 1 || len(ops) == 1 && (ops[0].dynamic || strings.HasSuffix(ops[0].text, ".js")) {
		return false
	}
	for _, cd := range code {
		if why := j.mongoCode(c.name, cd.text); why != "" {
			j.unknown(why)
			return false
		}
	}
	return true
}

// wordSet makes a set of the words of a list written in the source.
func wordSet(list string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.Fields(list) {
		set[w] = true
	}
	return set
}
