package shell

import (
	"fmt"
	"reflect"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// walkScripts hold every kind of node the parser makes, and the bench mix.
var walkScripts = append([]string{
	"if [[ -f /etc/x && ! -d /tmp ]]; then echo a; elif true; then :; else rm -rf ./b; fi",
	"while read -r l; do echo \"$l\"; done < in.txt; until false; do break; done",
	"for f in /var/log/*.log; do wc -l \"$f\"; done; for ((i=0; i<3; i++)); do echo $i; done",
	"case $x in a|b) echo 1 ;; *) echo 2 ;; esac",
	"f() { echo hi; }; function g { f; }; g",
	"echo $((1 + 2 * (3 - 4))) $((x++)) $(( -x ))",
	"(( n > 2 )) && let 'a = 1' 'b = a + 1'",
	"declare -a arr=(one [2]=two three); local v=${arr[1]}; export X=1 Y",
	"echo ${x:-d} ${x#p} ${x/a/b} ${x:1:2} ${!ref} ${#x} ${x@Q}",
	"shopt -s extglob; ls !(*.gz); diff <(sort a) >(cat)",
	"coproc cat; time ls -l; { echo a; echo b; } > out 2>&1",
	"cat <<EOF\n$HOME and $(date)\nEOF",
	"a=1 b=$(whoami) env; x+=2; arr[3]=v",
	"echo \"$(ls \"$(pwd)\")\" `uname -a` 'single' $'ansi\\n'",
	"[ -z \"$v\" ] || test -n x; ! true",
	"ls | grep a |& tail; sleep 1 & wait",
	"sh -c 'cd /tmp && rm -rf x'; eval \"ls $d\"",
}, benchMix...)

// TestWalkMatchesSyntaxWalk holds walk to syntax.Walk: the same nodes, in
// the same order, and the same findings.
func TestWalkMatchesSyntaxWalk(t *testing.T) {
	a := newAnalyzer(t)
	for _, src := range walkScripts {
		f, err := a.parse(src)
		if err != nil {
			t.Fatalf("%q does not parse: %v", src, err)
		}
		var ours, theirs []string
		note := func(list *[]string) func(syntax.Node) {
			return func(n syntax.Node) {
				if _, c := n.(*syntax.Comment); n != nil && !c {
					*list = append(*list, fmt.Sprintf("%T@%d", n, n.Pos().Offset()))
				}
			}
		}
		var r1, r2 Analysis
		j1 := &judge{judgeState: judgeState{a: a, res: &r1, trace: note(&ours)}}
		j1.walk(f, 0)
		j2 := &judge{judgeState: judgeState{a: a, res: &r2, trace: note(&theirs)}}
		syntax.Walk(f, func(n syntax.Node) bool {
			note(&theirs)(n)
			return j2.visit(n, 0)
		})
		if !reflect.DeepEqual(ours, theirs) {
			t.Errorf("%q: walk visits\n%v\nsyntax.Walk visits\n%v", src, ours, theirs)
		}
		if !reflect.DeepEqual(r1, r2) {
			t.Errorf("%q: walk finds %+v, syntax.Walk finds %+v", src, r1, r2)
		}
		if len(ours) < 3 {
			t.Errorf("%q: walk visits only %v", src, ours)
		}
	}
}
