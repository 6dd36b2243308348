package shell

import (
	"fmt"
	"strings"
)

// optSpec names a set of options: "-o -k --output --key". A command's table
// entry uses one for the options that take a value and one for the options
// that make it write or run something.
type optSpec struct {
	short string   // short option letters: "ok"
	long  []string // long option names without dashes: "output", "key"
}

// parseSpec reads "-o -k --output" into an optSpec.
func parseSpec(s string) (optSpec, error) {
	var sp optSpec
	for _, f := range strings.Fields(s) {
		switch {
		case strings.HasPrefix(f, "--") && len(f) > 2:
			sp.long = append(sp.long, f[2:])
		case len(f) == 2 && f[0] == '-':
			sp.short += f[1:]
		default:
			return optSpec{}, fmt.Errorf("option %q is neither -x nor --name", f)
		}
	}
	return sp, nil
}

// mustSpec is parseSpec for the table literals in this package; a typo
// there is a programming error caught by the tests.
func mustSpec(s string) optSpec {
	sp, err := parseSpec(s)
	if err != nil {
		panic(err)
	}
	return sp
}

// opt is one option found on a command line.
type opt struct {
	short    byte   // 'o' for -o, 0 for a long option
	long     string // "output" for --output
	value    arg    // the option's value, when it takes one
	hasValue bool
}

// String gives the option as written on a command line: -o, --output.
func (o opt) String() string {
	if o.short != 0 {
		return "-" + string(o.short)
	}
	return "--" + o.long
}

// has reports whether o is one of the spec's options. A long option also
// matches by any prefix, as GNU getopt accepts every unambiguous
// abbreviation (sort --out=FILE is sort --output=FILE, sed --e=CMD is sed
// --expression=CMD); an ambiguous one makes the tool fail, so matching it
// is safe.
func (sp optSpec) has(o opt) bool {
	if o.short != 0 {
		return strings.IndexByte(sp.short, o.short) >= 0
	}
	for _, l := range sp.long {
		if l == o.long || o.long != "" && strings.HasPrefix(l, o.long) {
			return true
		}
	}
	return false
}

// is reports whether o is the short option s or the long option l, also
// abbreviated (GNU getopt takes --recur for --recursive, and --e for
// sed's --expression when no other option starts with e).
func (o opt) is(s byte, l string) bool {
	if s != 0 && o.short == s {
		return true
	}
	return l != "" && o.long != "" && strings.HasPrefix(l, o.long)
}

// parseArgs splits args into options and operands the way GNU getopt does:
// options may come anywhere until "--"; a cluster -abc is three options; an
// option that takes a value takes the rest of its cluster or the next word.
// A word that is dynamic is an operand (callers decide what that means).
func (sp optSpec) parseArgs(args []arg) (opts []opt, operands []arg) {
	return sp.parseInto(nil, args)
}

// parseInto is parseArgs with the lists cut from j's slabs (j may be nil).
func (sp optSpec) parseInto(j *judge, args []arg) (opts []opt, operands []arg) {
	// Most command lines are mostly operands: size both lists once, and
	// hand back args itself when it holds no option at all.
	n := 0
	for _, a := range args {
		if !a.dynamic && len(a.text) > 1 && a.text[0] == '-' {
			n += len(a.text) - 1
		}
	}
	if n == 0 {
		return nil, args[:len(args):len(args)] // an append copies
	}
	if j != nil {
		opts, operands = j.newOpts(n), j.newArgs(len(args))
	} else {
		opts, operands = make([]opt, 0, n), make([]arg, 0, len(args))
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		t := a.text
		switch {
		case a.dynamic || len(t) < 2 || t[0] != '-':
			operands = append(operands, a)
		case t == "--":
			operands = append(operands, args[i+1:]...)
			return opts, operands
		case t[1] == '-':
			name, val, eq := strings.Cut(t[2:], "=")
			o := opt{long: name}
			if eq {
				o.value, o.hasValue = arg{text: val}, true
			} else if sp.has(o) && i+1 < len(args) {
				i++
				o.value, o.hasValue = args[i], true
			}
			opts = append(opts, o)
		default:
			for k := 1; k < len(t); k++ {
				o := opt{short: t[k]}
				if strings.IndexByte(sp.short, t[k]) >= 0 {
					if k+1 < len(t) {
						o.value, o.hasValue = arg{text: t[k+1:]}, true
					} else if i+1 < len(args) {
						i++
						o.value, o.hasValue = args[i], true
					}
					opts = append(opts, o)
					break
				}
				opts = append(opts, o)
			}
		}
	}
	return opts, operands
}

// hasOpt reports whether opts hold -s or --l.
func hasOpt(opts []opt, s byte, l string) bool {
	for _, o := range opts {
		if o.is(s, l) {
			return true
		}
	}
	return false
}
