package sqlrisk

// MariaDB read syntax the TiDB grammar lacks, recognised only where it can
// be done safely: a clause that narrows or versions what a SELECT reads,
// and can neither write nor run anything, is cut out and the rest parsed
// and judged again. Whatever the rest is (a DELETE, a locking read), it is
// judged as that.
//   - LIMIT ROWS EXAMINED n (and LIMIT x ROWS EXAMINED n): stops the scan
//     early;
//   - FOR SYSTEM_TIME AS OF [TIMESTAMP|TRANSACTION] v | BETWEEN v AND v |
//     FROM v TO v | ALL, where each v is one literal or NOW()-like call:
//     reads old row versions of a system-versioned table.

// mariadbClauses judges a SELECT with those clauses cut out.
func (a *Analyzer) mariadbClauses(j *judgement, text string, st []token) bool {
	if len(st) < 4 || word(text, st[0]) != "SELECT" && word(text, st[0]) != "WITH" {
		return false
	}
	rest, cut := text, false
	// Cut from the end, so earlier token offsets stay right.
	for i := len(st) - 1; i >= 1; i-- {
		switch {
		case i+2 < len(st) && word(text, st[i]) == "ROWS" && word(text, st[i+1]) == "EXAMINED" && isNumber(text, st[i+2]):
			start := st[i].start
			if word(text, st[i-1]) == "LIMIT" {
				start = st[i-1].start
			}
			rest, cut = rest[:start]+" "+rest[st[i+2].end:], true
		case i+1 < len(st) && word(text, st[i]) == "FOR" && word(text, st[i+1]) == "SYSTEM_TIME":
			end, ok := systemTimeEnd(text, st, i+2)
			if !ok {
				return false
			}
			rest, cut = rest[:st[i].start]+" "+rest[st[end-1].end:], true
		}
	}
	if !cut {
		return false
	}
	return a.judgeAgain(j, rest)
}

// systemTimeEnd returns the index after a FOR SYSTEM_TIME specification
// starting at st[i], or ok=false when it is not a plain one.
func systemTimeEnd(text string, st []token, i int) (int, bool) {
	value := func(k int) (int, bool) {
		if k < len(st) && (word(text, st[k]) == "TIMESTAMP" || word(text, st[k]) == "TRANSACTION") {
			k++
		}
		if k >= len(st) {
			return 0, false
		}
		switch {
		case st[k].kind == tokString || isNumber(text, st[k]):
			return k + 1, true
		case st[k].kind == tokWord && (word(text, st[k]) == "NOW" || word(text, st[k]) == "CURRENT_TIMESTAMP"):
			if k+2 < len(st) && text[st[k+1].start] == '(' && text[st[k+2].start] == ')' {
				return k + 3, true
			}
			return k + 1, true
		}
		return 0, false
	}
	if i >= len(st) {
		return 0, false
	}
	switch word(text, st[i]) {
	case "ALL":
		return i + 1, true
	case "AS":
		if i+1 < len(st) && word(text, st[i+1]) == "OF" {
			return value(i + 2)
		}
	case "BETWEEN", "FROM":
		k, ok := value(i + 1)
		if !ok || k >= len(st) || word(text, st[k]) != "AND" && word(text, st[k]) != "TO" {
			return 0, false
		}
		return value(k + 1)
	}
	return 0, false
}

// isNumber reports whether a word token is a plain unsigned integer.
func isNumber(text string, t token) bool {
	if t.kind != tokWord || t.end <= t.start {
		return false
	}
	for i := t.start; i < t.end; i++ {
		if text[i] < '0' || text[i] > '9' {
			return false
		}
	}
	return true
}

// showLimit judges "SHOW ERRORS|WARNINGS LIMIT [offset,] n" (and LIMIT n
// OFFSET m), whose LIMIT the grammar lacks, as the SHOW without it: a
// LIMIT of numbers only narrows what is shown.
func (a *Analyzer) showLimit(j *judgement, text string, st []token) bool {
	if len(st) < 4 || word(text, st[0]) != "SHOW" || word(text, st[2]) != "LIMIT" {
		return false
	}
	if w := word(text, st[1]); w != "ERRORS" && w != "WARNINGS" {
		return false
	}
	for _, t := range st[3:] {
		if !isNumber(text, t) && word(text, t) != "OFFSET" && !(t.kind == tokPunct && text[t.start] == ',') {
			return false
		}
	}
	return a.judgeAgain(j, text[:st[2].start])
}

// jsonTable judges a SELECT that reads JSON_TABLE(expr, path COLUMNS(...)),
// which the grammar lacks, with each JSON_TABLE replaced by the derived
// table (SELECT expr, path): the expression and the path are judged as
// any select list is, and the COLUMNS clause, which may hold only names,
// types, string paths and literal defaults, is checked to hold nothing
// else.
func (a *Analyzer) jsonTable(j *judgement, text string, st []token) bool {
	if len(st) < 4 || word(text, st[0]) != "SELECT" && word(text, st[0]) != "WITH" {
		return false
	}
	rest, found := text, false
	next := len(st) // the first token of the JSON_TABLE replaced last
	// From the end, so earlier offsets stay right.
	for i := len(st) - 2; i >= 1; i-- {
		if word(text, st[i]) != "JSON_TABLE" || !isPunct(text, st[i+1], '(') {
			continue
		}
		closeAt, columns := -1, -1
		depth := 0
		for k := i + 1; k < len(st); k++ {
			switch {
			case isPunct(text, st[k], '('):
				depth++
			case isPunct(text, st[k], ')'):
				depth--
			case depth == 1 && columns < 0 && word(text, st[k]) == "COLUMNS":
				columns = k
			}
			if depth == 0 {
				closeAt = k
				break
			}
		}
		if closeAt < 0 || closeAt >= next || columns < 0 || !plainColumns(text, st[columns+1:closeAt]) {
			return false // not closed, nested in another, or with more than a column list
		}
		next = i
		args := text[st[i+1].end:st[columns].start]
		rest = rest[:st[i].start] + "(SELECT " + args + ")" + rest[st[closeAt].end:]
		found = true
	}
	if !found {
		return false
	}
	return a.judgeAgain(j, rest)
}

// plainColumns reports whether the tokens of a JSON_TABLE COLUMNS clause
// are only words, strings and the punctuation of a column list.
func plainColumns(text string, st []token) bool {
	for _, t := range st {
		switch t.kind {
		case tokWord:
			if w := word(text, t); w == "SELECT" || w == "VALUES" || w == "TABLE" {
				return false
			}
		case tokString, tokQuoted:
		case tokPunct:
			switch text[t.start] {
			case '(', ')', ',', '.', '-':
			default:
				return false
			}
		}
	}
	return true
}

// isPunct reports whether t is the punctuation c.
func isPunct(text string, t token, c byte) bool {
	return t.kind == tokPunct && text[t.start] == c
}
