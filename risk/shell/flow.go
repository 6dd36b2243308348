package shell

import (
	"bytes"
	"compress/gzip"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"io"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The text a statement writes on its standard output, when it can be
// known: echo and printf of literal words, here-documents through cat or
// tee, { } groups and subshells, and the decoders a script is hidden
// behind (base64, base32, hex, reversal, gzip, tr). Anything else writes
// text that cannot be known here.

// flow is text on a pipe; known is false when it cannot be known.
type flow struct {
	text  string
	known bool
}

// maxFlow bounds the text followed through a pipeline.
const maxFlow = 1 << 16

// produced returns what statement s writes given in on its input.
func (j *judge) produced(s *syntax.Stmt, in flow) flow {
	if own, ok := stdinOf(s); ok {
		in = own
	}
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		if len(c.Args) == 0 {
			return flow{known: true}
		}
		return j.callOutput(stripWrappers(words(c.Args, nil)), in)
	case *syntax.Block:
		return j.producedAll(c.Stmts, in)
	case *syntax.Subshell:
		return j.producedAll(c.Stmts, in)
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			return j.produced(c.Y, j.produced(c.X, in))
		}
		return concat(j.produced(c.X, in), j.produced(c.Y, in))
	}
	return flow{}
}

func (j *judge) producedAll(stmts []*syntax.Stmt, in flow) flow {
	out := flow{known: true}
	for _, s := range stmts {
		out = concat(out, j.produced(s, in))
	}
	return out
}

func concat(a, b flow) flow {
	if !a.known || !b.known || len(a.text)+len(b.text) > maxFlow {
		return flow{}
	}
	return flow{text: a.text + b.text, known: true}
}

// callOutput returns what one command writes: a known producer, a
// pass-through, a decoder, or unknown text.
func (j *judge) callOutput(argv []arg, in flow) flow {
	if len(argv) == 0 {
		return flow{}
	}
	name, _, ok := commandName(argv[0])
	if !ok {
		return flow{}
	}
	args := argv[1:]
	for i := range args {
		if args[i].dynamic {
			if v := j.resolve(args[i]); v != args[i].text {
				args[i] = arg{text: v}
			}
		}
	}
	switch name {
	case "echo":
		return echoOutput(args)
	case "printf":
		return printfOutput(args)
	case "cat", "tee", "pv", "buffer", "head", "tail", "dd":
		// Files named on cat's command line are not known here.
		for _, a := range args {
			if name == "cat" && !strings.HasPrefix(a.text, "-") || a.dynamic {
				return flow{}
			}
			if name == "dd" && strings.HasPrefix(a.text, "if=") {
				return flow{}
			}
		}
		return in
	case "rev":
		if len(args) > 0 || !in.known {
			return flow{}
		}
		return flow{text: reverseLines(in.text), known: true}
	case "tr":
		return trOutput(args, in)
	case "base64", "base32", "basenc", "xxd", "gunzip", "gzip", "zcat", "openssl":
		return decoded(name, args, in)
	}
	return flow{}
}

func echoOutput(args []arg) flow {
	escapes, newline := false, true
	for len(args) > 0 && len(args[0].text) > 1 && args[0].text[0] == '-' && strings.Trim(args[0].text[1:], "neE") == "" {
		escapes = escapes || strings.ContainsRune(args[0].text, 'e')
		newline = newline && !strings.ContainsRune(args[0].text, 'n')
		args = args[1:]
	}
	var b strings.Builder
	for i, a := range args {
		if a.dynamic {
			return flow{}
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		if escapes {
			ansiC(&b, a.text)
		} else {
			b.WriteString(a.text)
		}
	}
	if newline {
		b.WriteByte('\n')
	}
	return flow{text: b.String(), known: true}
}

// printfOutput handles a format with %s, %b, %c and %% conversions and
// backslash escapes, enough for the scripts hidden in printf '\x72\x6d'.
func printfOutput(args []arg) flow {
	if len(args) == 0 || args[0].text == "-v" {
		return flow{}
	}
	for _, a := range args {
		if a.dynamic {
			return flow{}
		}
	}
	var esc strings.Builder
	ansiC(&esc, args[0].text)
	format, rest := esc.String(), args[1:]
	var b strings.Builder
	for pass := 0; pass == 0 || len(rest) > 0 && pass < 64; pass++ {
		for i := 0; i < len(format); i++ {
			c := format[i]
			if c != '%' || i+1 == len(format) {
				b.WriteByte(c)
				continue
			}
			i++
			switch format[i] {
			case '%':
				b.WriteByte('%')
			case 's', 'b', 'c', 'd', 'q':
				if len(rest) > 0 {
					v := rest[0].text
					if format[i] == 'b' {
						var e strings.Builder
						ansiC(&e, v)
						v = e.String()
					}
					b.WriteString(v)
					rest = rest[1:]
				}
			default:
				return flow{}
			}
		}
		if !strings.Contains(format, "%") {
			break
		}
	}
	return flow{text: b.String(), known: true}
}

func reverseLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		r := []rune(l)
		for a, z := 0, len(r)-1; a < z; a, z = a+1, z-1 {
			r[a], r[z] = r[z], r[a]
		}
		lines[i] = string(r)
	}
	return strings.Join(lines, "\n")
}

// trOutput translates with two literal sets (ranges like a-z), as rot13
// hides a script: tr 'A-Za-z' 'N-ZA-Mn-za-m'.
func trOutput(args []arg, in flow) flow {
	if len(args) != 2 || !in.known || args[0].dynamic || args[1].dynamic || strings.HasPrefix(args[0].text, "-") {
		return flow{}
	}
	from, to := trSet(args[0].text), trSet(args[1].text)
	if len(from) == 0 || len(to) == 0 {
		return flow{}
	}
	m := map[rune]rune{}
	for i, r := range from {
		if i < len(to) {
			m[r] = to[i]
		} else {
			m[r] = to[len(to)-1]
		}
	}
	return flow{text: strings.Map(func(r rune) rune {
		if t, ok := m[r]; ok {
			return t
		}
		return r
	}, in.text), known: true}
}

func trSet(s string) []rune {
	r := []rune(s)
	var out []rune
	for i := 0; i < len(r); i++ {
		if i+2 < len(r) && r[i+1] == '-' && r[i] <= r[i+2] && r[i+2]-r[i] < 256 {
			for c := r[i]; c <= r[i+2]; c++ {
				out = append(out, c)
			}
			i += 2
			continue
		}
		out = append(out, r[i])
	}
	return out
}

// decoded decodes in when the command decodes (base64 -d, xxd -r -p,
// gunzip, openssl base64 -d); anything else is unknown output.
func decoded(name string, args []arg, input flow) flow {
	decode, hexPlain := false, false
	for _, a := range args {
		t := a.text
		switch {
		case a.dynamic:
			return flow{}
		case t == "--decode" || t == "-D" || strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.ContainsRune(t, 'd'):
			decode = true
		case name == "xxd" && strings.HasPrefix(t, "-") && strings.ContainsRune(t, 'r'):
			decode = true
			hexPlain = hexPlain || strings.ContainsRune(t, 'p')
		case name == "xxd" && (t == "-p" || t == "-ps" || t == "-plain"):
			hexPlain = true
		case name == "openssl" && in(t, "base64", "enc", "-a", "-base64", "-A"):
		case !strings.HasPrefix(t, "-") && name != "openssl":
			return flow{} // a file
		case name == "openssl" && strings.HasPrefix(t, "-") && !in(t, "-d", "-a", "-base64", "-A"):
			return flow{} // a cipher: decryption needs a key this does not have
		}
	}
	if !input.known {
		return flow{}
	}
	data := strings.TrimSpace(input.text)
	var out []byte
	var err error
	switch {
	case name == "zcat" || name == "gunzip" || name == "gzip" && decode:
		var r *gzip.Reader
		if r, err = gzip.NewReader(strings.NewReader(input.text)); err == nil {
			out, err = io.ReadAll(io.LimitReader(r, maxFlow))
		}
	case !decode:
		return flow{}
	case name == "xxd" && hexPlain:
		out, err = hex.DecodeString(strings.Join(strings.Fields(data), ""))
	case name == "base32":
		out, err = base32.StdEncoding.DecodeString(strings.Join(strings.Fields(data), ""))
	case name == "base64" || name == "openssl" || name == "basenc":
		clean := strings.Join(strings.Fields(data), "")
		if out, err = base64.StdEncoding.DecodeString(clean); err != nil {
			out, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(clean, "="))
		}
	default:
		return flow{}
	}
	if err != nil || bytes.IndexByte(out, 0) >= 0 && name != "zcat" && name != "gunzip" && name != "gzip" {
		return flow{}
	}
	return flow{text: string(out), known: true}
}

// interpreterCode judges a program given to an interpreter as text: a
// loop that forks is a fork bomb in any language, and the shell commands
// it hands to system(), popen, subprocess or backquotes are judged.
func (j *judge) interpreterCode(name, code string, depth int) {
	low := strings.ToLower(code)
	if strings.Contains(low, "fork") && (strings.Contains(low, "while") || strings.Contains(low, "loop") ||
		strings.Contains(low, "for(;;)") || strings.Contains(low, "for (;;)") || strings.Contains(low, "until") ||
		strings.Contains(low, ".times") || strings.Contains(low, "repeat")) {
		j.absurd(name + " code forks in a loop: a fork bomb")
		return
	}
	for _, w := range []string{"system", "popen", "subprocess", "exec", "spawn", "`", "%x", "shell", "run(", "call("} {
		if strings.Contains(low, w) {
			j.literalCommands(name, code, depth)
			return
		}
	}
}
