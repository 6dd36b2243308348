package sqlrisk

import "strings"

// MariaDB's EXECUTE IMMEDIATE, which the grammar lacks, runs the SQL it is
// given. Given a string literal, that SQL is judged as PREPARE's is; given
// anything else (a variable, CONCAT(...)), the SQL is built at run time:
// nobody can read it before it runs, so the LLM's low risk_level does not
// count (Analysis.RunTime).

// executeImmediate judges "EXECUTE IMMEDIATE <what> [USING ...]".
func (a *Analyzer) executeImmediate(j *judgement, text string, st []token) bool {
	if len(st) < 3 || word(text, st[0]) != "EXECUTE" || word(text, st[1]) != "IMMEDIATE" {
		return false
	}
	j.others++
	if st[2].kind == tokString && (len(st) == 3 || word(text, st[3]) == "USING") {
		sql, ok := unquote(text[st[2].start:st[2].end], a.lexMode.noBackslash)
		var inner judgement
		if !ok || !a.judgeAgain(&inner, sql) {
			j.danger("EXECUTE IMMEDIATE of text the parser rejects, so it cannot be judged")
		}
		for _, d := range inner.dangers {
			j.danger("EXECUTE IMMEDIATE: " + d)
		}
		j.runtime = append(j.runtime, inner.runtime...)
		j.unknown("EXECUTE IMMEDIATE runs the statement it is given, which is not auto-run")
		return true
	}
	j.builtAtRunTime("EXECUTE IMMEDIATE of an expression runs SQL built at run time, which the assessor cannot read")
	return true
}

// unquote returns the value of a MySQL string literal: a doubled quote inside
// stands for one quote, and a backslash escapes the next character unless
// noBackslash (NO_BACKSLASH_ESCAPES).
func unquote(lit string, noBackslash bool) (string, bool) {
	if len(lit) < 2 || lit[0] != lit[len(lit)-1] || lit[0] != '\'' && lit[0] != '"' {
		return "", false
	}
	q := lit[0]
	body := lit[1 : len(lit)-1]
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == q && i+1 < len(body) && body[i+1] == q:
			b.WriteByte(q)
			i++
		case c == '\\' && !noBackslash && i+1 < len(body):
			i++
			switch e := body[i]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			case 'Z':
				b.WriteByte(0x1a)
			case 'b':
				b.WriteByte('\b')
			case '%', '_':
				b.WriteByte('\\') // kept: they escape LIKE wildcards
				b.WriteByte(e)
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}
