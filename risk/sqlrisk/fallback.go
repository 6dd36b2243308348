package sqlrisk

import "strings"

// fallback judges text the parser rejected. The text is never read-only,
// except in narrow cases the parser lacks grammar for:
//   - a SHOW of plain words (SHOW ENGINE INNODB STATUS, SHOW BINARY LOGS, ...);
//   - EXPLAIN with a FORMAT the parser does not know, or with EXTENDED or
//     PARTITIONS, parsed again without it;
//   - MariaDB's ANALYZE statement, which runs the statement it analyses and
//     is judged as that statement;
//   - SOUNDS LIKE, judged as "=";
//   - MariaDB's LIMIT ROWS EXAMINED and FOR SYSTEM_TIME, SHOW ERRORS and
//     SHOW WARNINGS with a LIMIT, and JSON_TABLE in a SELECT (mariadb.go);
//   - MariaDB's EXECUTE IMMEDIATE (runtime.go).
//
// The statements are still named by their first words, so that a DROP or a
// RESET the parser does not know stays a danger.
func (a *Analyzer) fallback(j *judgement, text string, lx lexResult, perr error) {
	full := lex(text, lexMode{ansiQuotes: a.lexMode.ansiQuotes, noBackslash: a.lexMode.noBackslash, collectWords: true})
	stmts := splitStatements(text, full.tokens)
	if len(stmts) > 1 {
		j.danger("more than one statement; send them one at a time")
	}
	for _, st := range stmts {
		wordsDanger(j, text, st)
	}
	if len(stmts) == 1 && len(j.dangers) == 0 && len(j.unknowns) == 0 && !lx.afterLast && !lx.unterminated {
		if plainShow(text, stmts[0]) {
			j.reads++
			return
		}
		if a.explainOtherFormat(j, text, stmts[0]) || a.analyzeStatement(j, text, stmts[0]) ||
			a.soundsLike(j, text, stmts[0]) || a.mariadbClauses(j, text, stmts[0]) ||
			a.executeImmediate(j, text, stmts[0]) || a.showLimit(j, text, stmts[0]) || a.jsonTable(j, text, stmts[0]) {
			return
		}
	}
	j.others++
	j.danger(parseFailure(perr))
	if strings.HasPrefix(strings.TrimSpace(text), "```") {
		j.danger("the text is wrapped in a Markdown code fence; send the SQL alone")
	}
	if endsWithClientG(text, full.tokens) {
		j.danger(`\G is a command of the mysql client, not SQL, and the server rejects it; send the statement without it`)
	}
}

// endsWithClientG reports text ending in \G or \g (before any ';'): people
// and models copy it from the mysql client, whose command it is.
func endsWithClientG(text string, toks []token) bool {
	n := len(toks)
	for n > 0 && toks[n-1].kind == tokPunct && text[toks[n-1].start] == ';' {
		n--
	}
	return n >= 2 && toks[n-2].kind == tokPunct && text[toks[n-2].start] == '\\' && word(text, toks[n-1]) == "G"
}

// splitStatements splits tokens at ';' and drops empty statements.
func splitStatements(text string, toks []token) [][]token {
	var out [][]token
	start := 0
	for i, t := range toks {
		if t.kind == tokPunct && text[t.start] == ';' {
			if i > start {
				out = append(out, toks[start:i])
			}
			start = i + 1
		}
	}
	if start < len(toks) {
		out = append(out, toks[start:])
	}
	return out
}

// word returns the upper-case text of a word token, or "".
func word(text string, t token) string {
	if t.kind != tokWord {
		return ""
	}
	return strings.ToUpper(text[t.start:t.end])
}

// neverFirst maps the first word of a statement to the label of a danger.
var neverFirst = map[string]bool{
	"DROP": true, "TRUNCATE": true, "ALTER": true, "RENAME": true, "GRANT": true,
	"REVOKE": true, "SHUTDOWN": true, "RESTART": true, "KILL": true, "FLUSH": true,
	"RESET": true, "PURGE": true, "INSTALL": true, "UNINSTALL": true, "BINLOG": true,
	"CLONE": true, "IMPORT": true, "LOAD": true, "LOCK": true,
	// Table rebuilds are DDL (issue 11): REPAIR rewrites a table, and the
	// parser knows neither.
	"REPAIR": true, "OPTIMIZE": true,
}

// wordsDanger names the dangers of one statement the parser rejected by its
// words.
func wordsDanger(j *judgement, text string, st []token) {
	words := make([]string, 0, len(st))
	for _, t := range st {
		words = append(words, word(text, t))
	}
	label := func(n int) string {
		var l []string
		for _, w := range words[:min(n, len(words))] {
			if w == "" {
				break
			}
			l = append(l, w)
		}
		return strings.Join(l, " ")
	}
	never := func(what string) { j.danger(what + " is never run without approval") }
	switch first := words[0]; first {
	case "SET":
		for _, w := range words[1:] {
			switch w {
			case "GLOBAL", "PERSIST", "PERSIST_ONLY":
				never("SET " + w)
			case "PASSWORD":
				never("SET PASSWORD")
			case "ROLE":
				never("SET " + label(3))
			}
		}
	case "CREATE":
		if len(words) > 1 {
			switch words[1] {
			case "TABLE", "INDEX", "UNIQUE", "FULLTEXT", "SPATIAL", "VIEW", "DATABASE", "SCHEMA", "TEMPORARY":
				return
			}
		}
		for i, w := range words[1:min(len(words), 10)] {
			switch w {
			case "USER", "ROLE", "TRIGGER", "PROCEDURE", "FUNCTION", "EVENT", "SERVER":
				never("CREATE " + w)
			}
			if st[i+1].kind == tokPunct && text[st[i+1].start] == '(' {
				break
			}
		}
	case "CHANGE":
		switch {
		case len(words) > 1 && words[1] == "MASTER":
			never("CHANGE MASTER")
		case len(words) > 1 && words[1] == "REPLICATION":
			never(label(3))
		}
	case "START", "STOP":
		if len(words) > 1 {
			switch words[1] {
			case "SLAVE", "REPLICA", "GROUP_REPLICATION", "ALL":
				never(label(2))
			}
		}
	case "SHOW":
		switch {
		case len(words) > 2 && words[1] == "CREATE" && words[2] == "USER":
			j.danger(secretShowCreateUser)
		case len(words) > 2 && words[1] == "CREATE" && words[2] == "SERVER":
			j.danger("SHOW CREATE SERVER shows the password of a FEDERATED or Spider server")
		case len(words) > 1 && words[1] == "GRANTS":
			j.danger(secretShowGrants)
		}
	case "DELETE", "UPDATE":
		if !hasWord(words, "WHERE") {
			j.danger(first + " without WHERE touches every row")
		}
	default:
		if neverFirst[first] {
			n := 2
			if len(words) > 2 && words[2] == "LOGS" {
				n = 3
			}
			never(label(n))
		}
	}
	for _, w := range words {
		switch w {
		case "LOAD_FILE":
			j.danger("LOAD_FILE() reads a file on the database server")
		case "OUTFILE", "DUMPFILE":
			j.danger("INTO " + w + " writes a file on the database server")
		}
	}
}

func hasWord(words []string, w string) bool {
	for _, x := range words {
		if x == w {
			return true
		}
	}
	return false
}

// showFallback holds the word after SHOW of the SHOW statements the parser
// lacks grammar for (MySQL and MariaDB); every SHOW only reads.
var showFallback = map[string]bool{
	"ENGINE": true, "ENGINES": true, "BINARY": true, "MASTER": true, "BINLOG": true,
	"RELAYLOG": true, "CREATE": true, "REPLICAS": true, "SLAVE": true, "REPLICA": true,
	"ALL": true, "EXPLAIN": true, "ANALYZE": true, "FUNCTION": true, "PROCEDURE": true,
	"PACKAGE": true, "PROFILE": true, "PROFILES": true, "STORAGE": true, "LOCALES": true,
	"USER_STATISTICS": true, "CLIENT_STATISTICS": true, "INDEX_STATISTICS": true,
	"TABLE_STATISTICS": true, "QUERY_RESPONSE_TIME": true, "WSREP_MEMBERSHIP": true,
	"WSREP_STATUS": true, "AUTHORS": true, "CONTRIBUTORS": true,
}

// plainShow reports a SHOW the parser lacks grammar for, made only of words,
// literals, '.', ',' and '=': no parenthesis (so no function call or
// subquery) and no variable.
func plainShow(text string, st []token) bool {
	if len(st) < 2 || word(text, st[0]) != "SHOW" || !showFallback[word(text, st[1])] {
		return false
	}
	for _, t := range st[1:] {
		if t.kind != tokPunct {
			continue
		}
		switch text[t.start] {
		case '.', ',', '=', ';':
		default:
			return false
		}
	}
	return true
}

// explainOtherFormat parses "EXPLAIN [ANALYZE] FORMAT=<name> stmt" again
// without the FORMAT clause (the parser knows JSON but not TREE, for one),
// and "EXPLAIN EXTENDED|PARTITIONS stmt" (MariaDB, MySQL 5.7) without the
// word, and judges the statement the way EXPLAIN would be judged.
func (a *Analyzer) explainOtherFormat(j *judgement, text string, st []token) bool {
	switch word(text, st[0]) {
	case "EXPLAIN", "DESCRIBE", "DESC":
	default:
		return false
	}
	i := 1
	if i < len(st) && word(text, st[i]) == "ANALYZE" {
		i++
	}
	var rest string
	switch {
	case i == 1 && i+1 < len(st) && (word(text, st[i]) == "EXTENDED" || word(text, st[i]) == "PARTITIONS"):
		rest = text[:st[i].start] + text[st[i].end:]
	case isFormat(text, st, i):
		rest = text[:st[i].start] + text[st[i+2].end:]
	default:
		return false
	}
	return a.judgeAgain(j, rest)
}

// isFormat reports whether st[i:] starts with FORMAT = <word or string>.
func isFormat(text string, st []token, i int) bool {
	return i+2 < len(st) && word(text, st[i]) == "FORMAT" &&
		st[i+1].kind == tokPunct && text[st[i+1].start] == '=' &&
		(st[i+2].kind == tokWord || st[i+2].kind == tokString)
}

// analyzeStatement judges MariaDB's "ANALYZE [FORMAT=JSON] stmt", which
// runs stmt to measure it (ANALYZE DELETE deletes), as stmt itself. It
// handles only a statement the parser reads once the prefix is gone, and
// leaves ANALYZE TABLE and the rest to the caller.
func (a *Analyzer) analyzeStatement(j *judgement, text string, st []token) bool {
	if word(text, st[0]) != "ANALYZE" || len(st) < 2 {
		return false
	}
	start := st[1].start
	if isFormat(text, st, 1) {
		if len(st) < 5 {
			return false
		}
		start = st[4].start
	}
	return a.judgeAgain(j, text[start:])
}

// soundsLike judges "a SOUNDS LIKE b" (SOUNDEX(a) = SOUNDEX(b)), which the
// parser lacks, as "a = b": every operand is still judged.
func (a *Analyzer) soundsLike(j *judgement, text string, st []token) bool {
	var b strings.Builder
	last, found := 0, false
	for i := 0; i+1 < len(st); i++ {
		if word(text, st[i]) == "SOUNDS" && word(text, st[i+1]) == "LIKE" {
			b.WriteString(text[last:st[i].start])
			b.WriteString("=")
			last, found = st[i+1].end, true
		}
	}
	if !found {
		return false
	}
	b.WriteString(text[last:])
	return a.judgeAgain(j, b.String())
}

// judgeAgain parses text, one statement with a prefix the parser lacks
// grammar for taken out, and judges it; false when it does not parse to
// exactly one statement.
func (a *Analyzer) judgeAgain(j *judgement, rest string) bool {
	p, stmts, err := a.parse(rest)
	if p != nil {
		defer a.parsers.Put(p)
	}
	if err != nil || len(stmts) != 1 {
		return false
	}
	j.statement(stmts[0])
	return true
}

// parseFailure is the reason for text the parser rejected.
func parseFailure(err error) string {
	if err == errParserPanic || err == errTooLong {
		return err.Error()
	}
	msg := strings.TrimSpace(err.Error())
	if len(msg) > 120 {
		msg = strings.ToValidUTF8(msg[:120], "") + "…"
	}
	return "the SQL parser does not accept this text (" + msg + ")"
}
