// Package sqlrisk judges one SQL text with a MySQL grammar (the TiDB parser).
// It says whether the text is dangerous (needs a person) or a single plain
// read. It runs nothing and fails closed on anything it cannot parse.
//
// Password hashes are judged like the shell's secret files: a query that
// reads them (mysql.user with * or its hash columns, mysql.global_priv,
// SHOW CREATE USER, SHOW GRANTS, which prints the hash on MariaDB) is a
// danger, so the LLM's risk_level cannot lower it. Naming harmless columns
// (SELECT user, host FROM mysql.user) stays a plain read.
//
// The floor also sees (floor.go): a WHERE that is a simple tautology, a
// constant or otherwise the same for every row (id = id, LIKE '%',
// NOW() > 0, EXISTS (SELECT 1), @@version > 0, an uncorrelated subquery)
// as no WHERE; DML on the grant tables as user management; the managed
// services' kill and replication procedures (mysql.rds_kill,
// mysql.az_replication_stop) as dangers, any other CALL as unknown;
// OPTIMIZE and REPAIR as DDL; PREPARE as the statement it prepares;
// EXECUTE, and PREPARE or EXECUTE IMMEDIATE of a variable or an
// expression, as SQL built at run time (Analysis.RunTime), which the LLM
// cannot vouch for. MariaDB syntax the grammar lacks (LIMIT ROWS EXAMINED,
// FOR SYSTEM_TIME, SHOW ERRORS LIMIT, JSON_TABLE) is rewritten and the
// rest judged (mariadb.go).
//
// The analyzer assumes the connection's character set is UTF-8 (or another
// in which a multi-byte character never ends in a '\' or '`' byte). Under
// GBK, Big5, SJIS or CP932 the last byte of 中 and a backslash after it
// form one character, so the backslash no longer escapes the quote that
// follows and the server reads another statement: the SQL tool must keep
// the connection in utf8mb4.
package sqlrisk

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"

	// The test driver gives the parser its literal values; without it
	// parser.New panics.
	_ "github.com/pingcap/tidb/pkg/parser/test_driver"
)

// Analysis is what the parser found in one SQL text. The zero value means
// "confirm".
type Analysis struct {
	// Danger holds one reason per code-level danger (SPEC §2 rule 4).
	Danger []string
	// ReadOnly is true only for one parsed read statement with nothing that
	// writes, locks, sleeps or reads files.
	ReadOnly bool
	// Unknown holds why the text is not read-only when it is not dangerous.
	Unknown []string
	// RunTime holds why the text runs SQL the assessor cannot read: built
	// at run time (EXECUTE of a prepared statement, PREPARE or EXECUTE
	// IMMEDIATE of a variable or an expression) or in the body of a stored
	// procedure or function. The LLM's low risk_level must then count as
	// absent. The text is never read-only when RunTime is set.
	RunTime []string
}

// DefaultSQLMode is the sql_mode the SQL tool pins in its DSN and the parser
// assumes. It holds no mode that changes how text is read (ANSI_QUOTES,
// NO_BACKSLASH_ESCAPES, PIPES_AS_CONCAT, IGNORE_SPACE), so "x" is a string
// and a backslash escapes, for the server and the parser alike.
const DefaultSQLMode = "STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION,ONLY_FULL_GROUP_BY,ERROR_FOR_DIVISION_BY_ZERO,NO_ZERO_DATE,NO_ZERO_IN_DATE"

// Analyzer judges SQL texts under one sql_mode. It is safe for concurrent
// use.
type Analyzer struct {
	mode    mysql.SQLMode
	lexMode lexMode
	parsers sync.Pool
}

// New returns an Analyzer for sqlMode, a comma-separated sql_mode as the
// server takes it; "" means DefaultSQLMode. An unknown mode is an error that
// names it.
func New(sqlMode string) (*Analyzer, error) {
	if strings.TrimSpace(sqlMode) == "" {
		sqlMode = DefaultSQLMode
	}
	parts := strings.Split(sqlMode, ",")
	for i, p := range parts {
		parts[i] = strings.ToUpper(strings.TrimSpace(p))
		if parts[i] == "" {
			return nil, fmt.Errorf("parse sql_mode %q: empty mode name", sqlMode)
		}
		if _, ok := mysql.Str2SQLMode[parts[i]]; !ok {
			return nil, fmt.Errorf("parse sql_mode %q: unknown mode %q", sqlMode, parts[i])
		}
	}
	mode, err := mysql.GetSQLMode(strings.Join(parts, ","))
	if err != nil {
		return nil, fmt.Errorf("parse sql_mode %q: %w", sqlMode, err)
	}
	a := &Analyzer{
		mode: mode,
		lexMode: lexMode{
			ansiQuotes:  mode.HasANSIQuotesMode(),
			noBackslash: mode.HasNoBackslashEscapesMode(),
		},
	}
	a.parsers.New = func() any {
		p := parser.New()
		p.SetSQLMode(a.mode)
		return p
	}
	return a, nil
}

// Analyze judges one SQL text. It is pure, safe for concurrent use, and never
// panics. Text that cannot be judged (it does not parse, makes the parser
// panic, holds an executable comment or a comment that may hide a
// statement) is a danger, not merely "not read-only": the LLM's risk_level
// must not be able to wave through what nobody could read.
func (a *Analyzer) Analyze(text string) (res Analysis) {
	defer func() {
		if r := recover(); r != nil {
			res = Analysis{Danger: []string{"the SQL analyzer failed on this text, so it cannot be judged"}}
		}
	}()
	var j judgement
	lx := lex(text, a.lexMode)
	if lx.execComment != "" {
		j.danger("executable comment " + lx.execComment + "…*/ runs on the server and is never auto-run")
	} else if strings.Contains(text, "/*!") || containsFold(text, "/*M!") || containsFold(text, "/*T!") {
		j.danger("the text holds executable-comment syntax (/*!) and is never auto-run")
	}
	if lx.badBytes {
		j.danger("the text holds control characters or invalid UTF-8")
	}
	if lx.commentSemicolon {
		j.danger("a comment holds a ';' that may hide a statement")
	}
	if lx.nestedComment {
		j.danger("a comment opens another comment")
	}
	if lx.limitHint != "" {
		j.unknown(limitHintReason(lx.limitHint))
	}

	if lx.unterminated {
		j.danger("a quote or a comment is not closed")
	}

	if len(text) > maxParse {
		// Too long to parse quickly: judged by its words alone, never read-only.
		j.danger(fmt.Sprintf("the text is too long to parse (%d bytes)", len(text)))
		a.fallback(&j, text, lx, errTooLong)
		return j.analysis()
	}
	p, stmts, perr := a.parse(text)
	if p != nil {
		// The statements live in the parser's buffers: give it back only
		// once they are judged.
		defer a.parsers.Put(p)
	}
	switch {
	case perr != nil:
		a.fallback(&j, text, lx, perr)
	case len(stmts) == 0:
		j.unknown("there is no statement")
	default:
		if len(stmts) > 1 {
			j.danger(fmt.Sprintf("more than one statement (%d); send them one at a time", len(stmts)))
		} else if lx.afterLast {
			j.unknown("text follows the final ';'")
		}
		for _, s := range stmts {
			j.statement(s)
			if p, ok := s.(*ast.PrepareStmt); ok && p.SQLText != "" {
				// PREPARE is judged as the statement it prepares: EXECUTE
				// runs it later, where nobody sees the text.
				var inner judgement
				if !a.judgeAgain(&inner, p.SQLText) {
					j.danger("PREPARE of text the parser rejects, so it cannot be judged")
				}
				for _, d := range inner.dangers {
					j.danger("PREPARE: " + d)
				}
			}
		}
	}
	return j.analysis()
}

// parse parses text with a pooled parser, which the caller puts back once
// done with the statements (they share the parser's buffers). A parser that
// panicked is dropped: p is nil.
func (a *Analyzer) parse(text string) (p *parser.Parser, stmts []ast.StmtNode, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, stmts, err = nil, nil, errParserPanic
		}
	}()
	p = a.parsers.Get().(*parser.Parser)
	stmts, _, err = p.ParseSQL(text)
	return p, stmts, err
}

// maxParse is the longest text given to the parser; longer text takes it
// tens of milliseconds and is judged by the lexer alone.
const maxParse = 256 << 10

var (
	// errParserPanic stands for a panic of the parser.
	errParserPanic = errors.New("the SQL parser failed on this text")
	// errTooLong stands for text over maxParse.
	errTooLong = errors.New("the text is too long to parse")
)

// containsFold reports whether s holds sub, ignoring ASCII case. sub is
// upper case.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		k := 0
		for ; k < len(sub); k++ {
			c := s[i+k]
			if c >= 'a' && c <= 'z' {
				c -= 'a' - 'A'
			}
			if c != sub[k] {
				break
			}
		}
		if k == len(sub) {
			return true
		}
	}
	return false
}

// judgement collects reasons while a text is judged.
type judgement struct {
	dangers  []string
	unknowns []string
	runtime  []string
	reads    int // statements found to be plain reads
	others   int // statements that are not
}

func (j *judgement) danger(reason string) {
	for _, r := range j.dangers {
		if r == reason {
			return
		}
	}
	j.dangers = append(j.dangers, reason)
}

// builtAtRunTime notes SQL whose text only exists at run time: not a
// read, and not something the LLM can vouch for.
func (j *judgement) builtAtRunTime(reason string) {
	j.unknown(reason)
	for _, r := range j.runtime {
		if r == reason {
			return
		}
	}
	j.runtime = append(j.runtime, reason)
}

func (j *judgement) unknown(reason string) {
	for _, r := range j.unknowns {
		if r == reason {
			return
		}
	}
	j.unknowns = append(j.unknowns, reason)
}

// analysis turns the judgement into an Analysis: read-only only when one
// statement was judged a plain read and nothing was found against it.
func (j *judgement) analysis() Analysis {
	ro := j.reads == 1 && j.others == 0 && len(j.dangers) == 0 && len(j.unknowns) == 0
	if !ro && len(j.dangers) == 0 && len(j.unknowns) == 0 {
		j.unknown("the statement is not a plain read")
	}
	return Analysis{Danger: j.dangers, ReadOnly: ro, Unknown: j.unknowns, RunTime: j.runtime}
}
