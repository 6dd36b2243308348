// Command pathgraph measures a path through the code the way
// docs/architecture.md traces one: which files it crosses, and whether
// any of them calls back into a file that led to it.
//
// It reads the coverage blocks one path ran (lines "pkg/file.go:a.b,c.d",
// as .ci/trace writes them from two coverage profiles), takes every
// function with a block that ran, and draws an edge from file F to file G
// when a function of F that ran calls a function of G that ran: directly,
// or through an interface method that G's function implements. It prints
// every edge inside a cycle (strongly connected files), the number of
// files, and the files in an order a reader can read them top down
// (callers before callees; a "+" joins the files of one cycle).
//
// A step's coverage holds whatever ran during it, a background loop's
// tick too (the sweep, a reminder scan, the App Home's republishing).
// PATHGRAPH_ENTRY names the entry file; every function that ran but that
// no call from the entry's functions reaches is listed, so that a reader
// can tell a handoff of this event (a queue's worker, the journal writer,
// a table of func values) from a loop that is not on the path.
//
// PATHGRAPH_WALK, a walk written by hand (entries in reading order, see
// checkWalk), is checked against what ran; pathgraph then exits 1 when
// it does not hold. PATHGRAPH_EDGES prints every edge and PATHGRAPH_FUNCS
// every function that ran, for writing a walk.
//
//	go run ./internal/pathgraph <module root> <blocks file> <skip,substrings>
package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
)

const mod = "github.com/countersign/countersign/"

type fn struct {
	file, name string
	decl       *ast.FuncDecl
	pkg        *packages.Package
	obj        *types.Func
}

func main() {
	if len(os.Args) != 4 {
		log.Fatal("usage: pathgraph <module root> <blocks file> <comma-separated path substrings to leave out>")
	}
	root, _ := filepath.Abs(os.Args[1])
	skip := strings.Split(os.Args[3], ",")
	// executed lines per file
	lines := map[string][][2]int{}
	f, err := os.Open(os.Args[2])
	if err != nil {
		log.Fatalf("read the blocks the path ran: %v", err)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimPrefix(sc.Text(), mod)
		file, rng, _ := strings.Cut(l, ":")
		a, b, _ := strings.Cut(rng, ",")
		la, _ := strconv.Atoi(strings.Split(a, ".")[0])
		lb, _ := strconv.Atoi(strings.Split(b, ".")[0])
		lines[file] = append(lines[file], [2]int{la, lb})
	}
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo, Dir: root}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		log.Fatalf("load the module's packages: %v", err)
	}
	rel := func(fs *token.FileSet, p token.Pos) string {
		r, _ := filepath.Rel(root, fs.Position(p).Filename)
		return r
	}
	skipped := func(file string) bool {
		for _, s := range skip {
			if s != "" && strings.Contains(file, s) {
				return true
			}
		}
		return strings.HasSuffix(file, "_test.go")
	}
	exec := map[*types.Func]*fn{}
	byName := map[string][]*fn{}
	for _, p := range pkgs {
		for _, sf := range p.Syntax {
			file := rel(p.Fset, sf.Pos())
			if skipped(file) {
				continue
			}
			for _, d := range sf.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				s, e := p.Fset.Position(fd.Pos()).Line, p.Fset.Position(fd.End()).Line
				hit := false
				for _, r := range lines[file] {
					if r[0] >= s && r[0] <= e {
						hit = true
					}
				}
				if !hit {
					continue
				}
				obj, _ := p.TypesInfo.Defs[fd.Name].(*types.Func)
				x := &fn{file: file, name: fd.Name.Name, decl: fd, pkg: p, obj: obj}
				exec[obj] = x
				byName[fd.Name.Name] = append(byName[fd.Name.Name], x)
			}
		}
	}
	calls := map[*fn][]*fn{} // function → the functions that ran that it calls
	for _, x := range exec {
		ast.Inspect(x.decl.Body, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			o, ok := x.pkg.TypesInfo.Uses[id].(*types.Func)
			if !ok {
				return true
			}
			var targets []*fn
			if t := exec[o.Origin()]; t != nil {
				targets = append(targets, t)
			} else if sig, ok := o.Type().(*types.Signature); ok && sig.Recv() != nil && types.IsInterface(sig.Recv().Type()) {
				iface, _ := sig.Recv().Type().Underlying().(*types.Interface)
				for _, t := range byName[o.Name()] {
					ts, ok := t.obj.Type().(*types.Signature)
					if !ok || ts.Recv() == nil || iface == nil {
						continue
					}
					rt := ts.Recv().Type()
					if types.Implements(rt, iface) || types.Implements(types.NewPointer(rt), iface) {
						targets = append(targets, t)
					}
				}
			}
			calls[x] = append(calls[x], targets...)
			return true
		})
	}
	// Calls through a func value (a Handler, a callback) are not seen
	// above; PATHGRAPH_EXTRA names them: "from.go>to.go:Func,…", from
	// every function of from.go that ran to the function Func of to.go
	// (or, without ":Func", to every function of to.go that ran).
	extra := map[[2]*fn]bool{}
	for _, pair := range strings.Split(os.Getenv("PATHGRAPH_EXTRA"), ",") {
		from, to, ok := strings.Cut(pair, ">")
		if !ok {
			continue
		}
		toFile, toName, named := strings.Cut(to, ":")
		for _, x := range exec {
			if x.file != from {
				continue
			}
			for _, t := range exec {
				if t.file == toFile && (!named || t.name == toName) {
					calls[x] = append(calls[x], t)
					extra[[2]*fn{x, t}] = true
				}
			}
		}
	}
	// The path: what the entry's functions reach.
	entry := os.Getenv("PATHGRAPH_ENTRY")
	reached := map[*fn]bool{}
	var queue []*fn
	for _, x := range exec {
		if entry == "" || x.file == entry {
			reached[x] = true
			queue = append(queue, x)
		}
	}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		for _, t := range calls[x] {
			if !reached[t] {
				reached[t] = true
				queue = append(queue, t)
			}
		}
	}
	if os.Getenv("PATHGRAPH_FUNCS") != "" { // the functions that ran, by file
		var all []string
		for x := range reached {
			all = append(all, "func: "+x.file+" "+x.name)
		}
		sort.Strings(all)
		fmt.Println(strings.Join(all, "\n"))
	}
	var apart []string
	for _, x := range exec {
		if !reached[x] {
			apart = append(apart, "ran, not reached by a call from the entry: "+x.file+" "+x.name)
		}
	}
	sort.Strings(apart)
	if len(apart) > 0 {
		fmt.Println(strings.Join(apart, "\n"))
	}
	edges := map[[2]string]bool{}
	why := map[[2]string]string{}
	for x, ts := range calls {
		for _, t := range ts {
			if t.file != x.file {
				e := [2]string{x.file, t.file}
				edges[e] = true
				if why[e] == "" {
					why[e] = x.name + "→" + t.name
					if extra[[2]*fn{x, t}] {
						why[e] += " (a func value)"
					}
				}
			}
		}
	}
	if os.Getenv("PATHGRAPH_EDGES") != "" { // every edge, for a trace written by hand
		var all []string
		for e := range edges {
			all = append(all, "edge: "+e[0]+" → "+e[1]+" ("+why[e]+")")
		}
		sort.Strings(all)
		fmt.Println(strings.Join(all, "\n"))
	}
	files := map[string]bool{}
	for _, x := range exec {
		files[x.file] = true
	}
	walkOK := true
	if w := os.Getenv("PATHGRAPH_WALK"); w != "" {
		walkOK = checkWalk(strings.Fields(w), files, edges, why)
	}
	var fl []string
	for f := range files {
		fl = append(fl, f)
	}
	sort.Strings(fl)
	order, comp := knots(fl, edges)
	var cyc []string
	for e := range edges {
		if comp[e[0]] == comp[e[1]] {
			cyc = append(cyc, e[0]+" → "+e[1]+" ("+why[e]+")")
		}
	}
	sort.Strings(cyc)
	for _, c := range cyc {
		fmt.Println("cycle edge:", c)
	}
	fmt.Printf("files %d, edges %d, edges inside cycles %d\n", len(fl), len(edges), len(cyc))
	for _, c := range order {
		fmt.Println(" ", strings.Join(c, " + "))
	}
	if !walkOK {
		os.Exit(1)
	}
}

// checkWalk checks a walk written by hand (docs/architecture.md): entries
// in reading order, each a comma-separated list of patterns ("bot/card.go",
// a folder "risk/shell/" for the files directly in it, or a path.Match
// pattern "approval/*.go"); a file belongs to the first entry it matches.
// It prints each pattern that matches no file that ran, each call from a
// file of an entry that reaches a file of an entry above it (directly or
// through files outside the walk: a return to a file already read), the
// count, and the files that ran outside the walk. It reports whether the
// walk holds.
func checkWalk(walk []string, files map[string]bool, edges map[[2]string]bool, why map[[2]string]string) bool {
	match := func(p, file string) bool {
		if dir, ok := strings.CutSuffix(p, "/"); ok {
			return filepath.Dir(file) == dir
		}
		m, _ := filepath.Match(p, file)
		return m
	}
	entryOf := func(file string) int {
		for i, e := range walk {
			for _, p := range strings.Split(e, ",") {
				if match(p, file) {
					return i
				}
			}
		}
		return -1
	}
	ok := true
	for _, e := range walk {
		for _, p := range strings.Split(e, ",") {
			ran := false
			for f := range files {
				ran = ran || match(p, f)
			}
			if !ran {
				fmt.Println("walk: nothing of", p, "ran")
				ok = false
			}
		}
	}
	var outside []string
	size := make([]int, len(walk))
	for f := range files {
		if i := entryOf(f); i >= 0 {
			size[i]++
		} else {
			outside = append(outside, f)
		}
	}
	inWalk := 0
	for i, n := range size {
		inWalk += n
		if n > 1 {
			fmt.Printf("walk: entry %d is a group of %d files\n", i+1, n)
		}
	}
	next := map[string][]string{}
	for e := range edges {
		next[e[0]] = append(next[e[0]], e[1])
	}
	// From each file of the walk, follow calls through files outside it
	// to the first files of the walk they reach.
	var back []string
	for from := range files {
		a := entryOf(from)
		if a < 0 {
			continue
		}
		seen := map[string]bool{from: true}
		type step struct{ file, via string }
		queue := []step{{from, ""}}
		for len(queue) > 0 {
			s := queue[0]
			queue = queue[1:]
			for _, to := range next[s.file] {
				if seen[to] {
					continue
				}
				seen[to] = true
				via := s.via
				if s.file != from {
					via += " → " + s.file
				}
				if b := entryOf(to); b >= 0 {
					if b < a {
						back = append(back, "walk: back to a file already read: "+from+via+" → "+to+" ("+why[[2]string{s.file, to}]+")")
					}
					continue
				}
				queue = append(queue, step{to, via})
			}
		}
	}
	sort.Strings(back)
	for _, b := range back {
		fmt.Println(b)
		ok = false
	}
	sort.Strings(outside)
	fmt.Printf("walk: %d entries (%d files), %d returns; %d files ran outside it: %s\n", len(walk), inWalk, len(back), len(outside), strings.Join(outside, " "))
	return ok
}

// knots splits the files into their strongly connected groups (Tarjan):
// files that reach each other through edges are one group, a cycle. order
// lists the groups top down (a group before every group it calls); comp
// numbers each file's group.
func knots(files []string, edges map[[2]string]bool) (order [][]string, comp map[string]int) {
	adj := map[string][]string{}
	for e := range edges {
		adj[e[0]] = append(adj[e[0]], e[1])
	}
	for k := range adj {
		sort.Strings(adj[k])
	}
	index, low, onst := map[string]int{}, map[string]int{}, map[string]bool{}
	var st []string
	var comps [][]string
	n := 0
	var strong func(v string)
	strong = func(v string) {
		index[v], low[v] = n, n
		n++
		st = append(st, v)
		onst[v] = true
		for _, w := range adj[v] {
			if _, ok := index[w]; !ok {
				strong(w)
				low[v] = min(low[v], low[w])
			} else if onst[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var c []string
			for {
				w := st[len(st)-1]
				st = st[:len(st)-1]
				onst[w] = false
				c = append(c, w)
				if w == v {
					break
				}
			}
			comps = append(comps, c)
		}
	}
	nodes := append([]string(nil), files...)
	for e := range edges {
		nodes = append(nodes, e[0], e[1])
	}
	sort.Strings(nodes)
	for _, f := range nodes {
		if _, ok := index[f]; !ok {
			strong(f)
		}
	}
	comp = map[string]int{}
	for i, c := range comps {
		for _, f := range c {
			comp[f] = i
		}
	}
	// Tarjan finds a group after every group it calls.
	for i := len(comps) - 1; i >= 0; i-- {
		order = append(order, comps[i])
	}
	return order, comp
}
