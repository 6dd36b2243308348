package shell

import (
	"strings"
)

// mongosh --eval: a small reading of the shell's JavaScript, enough for
// the reads on-call runs (db.orders.find({...}).limit(5), rs.status(),
// db.serverStatus().connections, aggregate without $out or $merge). The
// code must be a list of such chains, their arguments plain values
// (objects, arrays, strings, numbers, regular expressions, ISODate(),
// ObjectId()...). Anything else (a function, an operator, an assignment,
// a method off the lists) cannot be read here: not a look.

var (
	mongoDBMethods = wordSet(`stats serverStatus currentOp getCollectionNames getCollectionInfos hostInfo version isMaster
		hello getName getReplicationInfo printReplicationInfo printSecondaryReplicationInfo getProfilingStatus serverBuildInfo`)
	mongoCollMethods = wordSet(`find findOne count countDocuments estimatedDocumentCount distinct aggregate getIndexes
		getIndexKeys stats dataSize storageSize totalIndexSize totalSize isCapped latencyStats getShardDistribution`)
	mongoCursorMethods = wordSet(`limit skip sort count toArray pretty projection hint maxTimeMS batchSize itcount size
		explain collation comment min max readPref allowDiskUse next hasNext showRecordId returnKey length`)
	mongoRSMethods = wordSet(`status conf config printReplicationInfo printSecondaryReplicationInfo isMaster hello help printSlaveReplicationInfo`)
	mongoSHMethods = wordSet(`status getBalancerState isBalancerRunning help`)
	mongoCtors     = wordSet(`ISODate Date ObjectId NumberLong NumberInt NumberDecimal UUID Timestamp`)
	// mongoStages run code or write: $out and $merge write a collection,
	// $where, $function and $accumulator run JavaScript on the server.
	mongoStages = []string{"$out", "$merge", "$where", "$function", "$accumulator"}
)

// jsToken is one token of mongosh code: 'i' a name, 's' a string, 'n' a
// number, 'r' a regular expression, 'p' punctuation.
type jsToken struct {
	text string
	kind byte
}

// jsLex splits code into tokens, or says why it cannot.
func jsLex(code string) ([]jsToken, string) {
	var toks []jsToken
	for i := 0; i < len(code); {
		ch := code[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r':
			i++
		case ch == '\'' || ch == '"':
			k := i + 1
			for ; k < len(code) && code[k] != ch && code[k] != '\n'; k++ {
				if code[k] == '\\' {
					k++
				}
			}
			if k >= len(code) || code[k] != ch {
				return nil, "a quote is not closed"
			}
			toks = append(toks, jsToken{code[i+1 : k], 's'})
			i = k + 1
		case ch == '/' && (len(toks) == 0 || toks[len(toks)-1].kind == 'p' && strings.Contains("(,:[", toks[len(toks)-1].text)):
			k := i + 1
			for ; k < len(code) && code[k] != '/' && code[k] != '\n'; k++ {
				if code[k] == '\\' {
					k++
				}
			}
			if k >= len(code) || code[k] != '/' {
				return nil, "a regular expression is not closed"
			}
			k++
			for k < len(code) && strings.IndexByte("gimsuy", code[k]) >= 0 {
				k++
			}
			toks = append(toks, jsToken{code[i:k], 'r'})
			i = k
		case isDigit(ch):
			k := i
			for k < len(code) && (isDigit(code[k]) || code[k] == '.' || code[k] == 'e') {
				k++
			}
			toks = append(toks, jsToken{code[i:k], 'n'})
			i = k
		case ch == '_' || ch == '$' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z':
			k := i
			for k < len(code) && (code[k] == '_' || code[k] == '$' || isDigit(code[k]) || code[k] >= 'a' && code[k] <= 'z' || code[k] >= 'A' && code[k] <= 'Z') {
				k++
			}
			toks = append(toks, jsToken{code[i:k], 'i'})
			i = k
		case strings.IndexByte(".(){}[],:;-", ch) >= 0:
			toks = append(toks, jsToken{code[i : i+1], 'p'})
			i++
		default:
			return nil, "the code uses " + code[i:i+1] + ", which a read does not need"
		}
	}
	return toks, ""
}

// jsParser reads tokens; why holds the first reason it stopped.
type jsParser struct {
	toks []jsToken
	pos  int
	why  string
	// secret is set when the code reads a collection of credentials.
	secret string
}

func (p *jsParser) peek(k int) jsToken {
	if p.pos+k < len(p.toks) {
		return p.toks[p.pos+k]
	}
	return jsToken{}
}

func (p *jsParser) punct(s string) bool {
	if t := p.peek(0); t.kind == 'p' && t.text == s {
		p.pos++
		return true
	}
	return false
}

func (p *jsParser) fail(why string) bool {
	if p.why == "" {
		p.why = why
	}
	return false
}

// mongoCode judges the code of one --eval: why it is not a look, or "";
// a read of credentials is a danger.
func (j *judge) mongoCode(name, code string) string {
	toks, why := jsLex(code)
	if why != "" {
		return name + " --eval: " + why
	}
	p := &jsParser{toks: toks}
	for p.pos < len(p.toks) {
		if p.punct(";") {
			continue
		}
		if !p.statement() {
			break
		}
	}
	if p.secret != "" {
		j.danger(name + " --eval reads " + p.secret + ", which holds password hashes")
		return ""
	}
	if p.why != "" {
		return name + " --eval: " + p.why
	}
	if len(toks) == 0 {
		return name + " --eval runs no code"
	}
	return ""
}

// statement: [printjson(] chain [)].
func (p *jsParser) statement() bool {
	t := p.peek(0)
	if t.kind == 'i' && in(t.text, "printjson", "print") && p.peek(1).text == "(" {
		p.pos += 2
		return p.chain() && (p.punct(")") || p.fail("printjson( is not closed"))
	}
	return p.chain()
}

// chain: db.COLL.METHOD(...)..., db.METHOD(...)..., rs.METHOD(), sh.METHOD().
func (p *jsParser) chain() bool {
	root := p.peek(0)
	if root.kind != 'i' || !in(root.text, "db", "rs", "sh") {
		return p.fail(clipWord(root.text) + " is not db, rs or sh")
	}
	p.pos++
	state := root.text // "db", "coll", "rs", "sh", "result"
	coll := ""
	for p.punct(".") {
		t := p.peek(0)
		if t.kind != 'i' {
			return p.fail("a name must follow .")
		}
		p.pos++
		call := p.peek(0).kind == 'p' && p.peek(0).text == "("
		switch {
		case !call && state == "db", !call && state == "coll":
			state, coll = "coll", strings.TrimPrefix(coll+"."+t.text, ".")
			if strings.EqualFold(coll, "system.users") || strings.EqualFold(coll, "system.keys") {
				p.secret = coll
			}
			continue
		case !call && state == "result":
			continue // db.serverStatus().connections
		case !call:
			return p.fail(root.text + "." + t.text + " is not a read")
		case state == "db" && in(t.text, "getSiblingDB", "getCollection"):
			p.pos++
			arg := p.peek(0)
			if arg.kind != 's' || !p.skip(1) || !p.punct(")") {
				return p.fail(t.text + " takes one name")
			}
			if t.text == "getCollection" {
				state, coll = "coll", arg.text
				if strings.EqualFold(coll, "system.users") || strings.EqualFold(coll, "system.keys") {
					p.secret = coll
				}
			}
			continue
		case state == "db" && mongoDBMethods[t.text], state == "coll" && mongoCollMethods[t.text],
			state == "coll" && t.text == "explain", state == "result" && mongoCursorMethods[t.text],
			state == "rs" && mongoRSMethods[t.text], state == "sh" && mongoSHMethods[t.text]:
		default:
			return p.fail(t.text + "() is not a read")
		}
		p.pos++ // (
		if !p.args(")") {
			return false
		}
		if state == "coll" && t.text == "explain" {
			continue // db.orders.explain().find(...)
		}
		state = "result"
	}
	if state != "result" {
		return p.fail(root.text + " " + coll + " calls nothing that reads")
	}
	return true
}

func (p *jsParser) skip(n int) bool { p.pos += n; return true }

// args reads values up to the closing punctuation.
func (p *jsParser) args(closing string) bool {
	if p.punct(closing) {
		return true
	}
	for {
		if !p.value() {
			return false
		}
		if p.punct(closing) {
			return true
		}
		if !p.punct(",") {
			return p.fail("cannot read the arguments")
		}
		if p.punct(closing) {
			return true
		}
	}
}

// value: an object, an array, a string, a number, a regular expression,
// true, false, null, or a constructor of a value (ISODate("...")).
func (p *jsParser) value() bool {
	t := p.peek(0)
	switch {
	case t.kind == 'p' && t.text == "{":
		p.pos++
		return p.object()
	case t.kind == 'p' && t.text == "[":
		p.pos++
		return p.args("]")
	case t.kind == 'p' && t.text == "-" && p.peek(1).kind == 'n':
		p.pos += 2
		return true
	case t.kind == 's' || t.kind == 'n' || t.kind == 'r':
		p.pos++
		return true
	case t.kind == 'i' && in(t.text, "true", "false", "null", "undefined"):
		p.pos++
		return true
	case t.kind == 'i' && t.text == "new" && mongoCtors[p.peek(1).text] && p.peek(2).text == "(":
		p.pos += 3
		return p.args(")")
	case t.kind == 'i' && mongoCtors[t.text] && p.peek(1).text == "(":
		p.pos += 2
		return p.args(")")
	}
	return p.fail(clipWord(t.text) + " is not a plain value")
}

// object: {KEY: VALUE, ...}; a key that runs code or writes is refused.
func (p *jsParser) object() bool {
	if p.punct("}") {
		return true
	}
	for {
		k := p.peek(0)
		if k.kind != 'i' && k.kind != 's' && k.kind != 'n' {
			return p.fail("cannot read an object's key")
		}
		if in(k.text, mongoStages...) {
			return p.fail(k.text + " writes a collection or runs code on the server")
		}
		p.pos++
		if !p.punct(":") || !p.value() {
			return p.fail("cannot read the value of " + k.text)
		}
		if p.punct("}") {
			return true
		}
		if !p.punct(",") {
			return p.fail("cannot read an object")
		}
		if p.punct("}") {
			return true
		}
	}
}
