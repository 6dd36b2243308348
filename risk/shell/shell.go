// Package shell judges a shell command line by parsing it with mvdan.cc/sh and
// looking at every simple command in the tree. It says whether the script is
// absurd (never to run), dangerous (needs a person), or made only of known
// readers used read-only. It runs nothing.
//
// How it reads a script (the engine; the catalogues are tables):
//   - walk.go walks the whole syntax tree, so commands inside pipelines,
//     lists, subshells, blocks, loops, $(...), backquotes, <(...), here-docs,
//     function bodies, arithmetic and assignments are all judged; redirections
//     are judged with their statement (redirects.go). vars.go follows
//     variables (f=.env; cat $f, PATH=...) and splits an unquoted variable
//     holding several words as bash would, loops.go the words of a for loop,
//     and arith.go finds where bash runs a value as code (a[$(cmd)]).
//   - words.go removes quotes (\rm, 'r'm, $'\x72m') and expands braces; a
//     word holding an expansion is "dynamic" and never a known command name.
//     A dynamic word only withholds read-only status: every verb and option
//     check still runs on the rest of the line.
//   - effects.go is the danger floor (SPEC §2 rule 4) as a table of effects
//     (kill, stop, power, teardown, scale to zero, evict, truncate,
//     privilege, firewall, kernel, scheduling, network shells, history,
//     secret managers), one row per spelling in each CLI, matched on every
//     command.
//   - floors.go holds the floors by argument (issue 25), read off the
//     words of any command line, known program or not: a secret named in
//     a word or an option's value, a shell or code handed to a program,
//     a listening address or raw protocol, a persistence place or PATH
//     folder written, memory dumps, printed environments, secret
//     getters, files sent to the network and downloads run later; the
//     checks of whole programs are in floors_programs.go, those of whole
//     statements (stdin, pipes, downloads run later) in floors_flow.go.
//     httpclients.go reads curl, wget and HTTPie requests for the
//     policy's HTTP judge (Options.HTTP).
//   - carriers.go is the table of places a program runs a command it was
//     handed (editor and pager commands, git -c and config writes, tar,
//     rsync, ssh -o, PAGER=, LESSOPEN=, database clients' shell escapes,
//     fleet tools); what they carry is parsed as a nested script.
//   - stdin.go and flow.go follow what a shell, an interpreter, a database
//     client, at or crontab reads on its standard input, through cat, tee,
//     wrappers, { } groups, subshells, here-documents and decoders (base64,
//     hex, rev, tr, gzip, printf escapes): readable text is judged as the
//     script it is, unreadable text is eval, a danger.
//   - wrappers.go looks through sudo, env, nice, timeout, xargs, busybox...;
//     sh -c, eval, su -c, trap and ssh are parsed again, at most maxDepth
//     deep; wholesale.go judges any unknown command whose next word is a
//     known one as that command too (nsenter, strace, proxychains...), and
//     holds the disk wipers, the metadata check for curl, wget and nc, and
//     endless loops that fork.
//   - verbs.go (issue 16) gives every reader row one shape for its
//     subcommands: verb paths to any depth (ceph osd pool ls), samples to
//     accept and to refuse, which the tests run, and a lexicon of
//     destructive verbs: a word off a row's paths, a raw reader's
//     subcommand or an unknown CLI's leading subcommand that is one
//     (delete, rm, stop, purge...) is a danger.
//   - vehicles.go judges commands carried into containers, namespaces and
//     other machines (docker exec, kubectl exec, nsenter, ssh, SSM
//     send-command...) and the vehicle: host privileges, a shell with no
//     script, a printout of another environment. cloud.go lets the cloud
//     CLIs' reads run and makes their secret-printing verbs secret reads;
//     privilege.go holds setuid modes, preload variables and plants.
//   - A command name or verb built at run time (a variable, "$@", a
//     function or alias the script defines) is reported in RunTime: the
//     model's low risk_level cannot vouch for it. Functions and aliases
//     are judged again at each call as their bodies, with $1 and "$@"
//     bound; literal assignments, appends and concatenations are followed.
//   - absurd.go and danger.go hold SPEC §2 rule 1 and the commands with
//     their own danger logic; readers.go, looks.go, text.go and tools.go hold
//     the rule 6 whitelist, one argument rule per reader. A reader pointed
//     at a sensitive path is a danger: one that prints it (cat .env), one
//     that lists or describes it, a directory that holds secrets included
//     (ls ~/.ssh), and a recursive one started in such a directory.
//
// Which targets given through a variable are blocked (judged as what they
// could be): mkfs, wipefs, blkdiscard and the other disk wipers given $X or
// /dev/$X; dd of=/dev/$X; a redirection onto /dev/$X. rm -rf $X, dd of=$X
// and the like stay dangers (confirmed, never auto).
//
// Known limits, each failing towards a confirmation rather than a run except
// where said: a reader's operand that is computed at run time as a whole
// ($(...), xargs input, a while-read variable) cannot be checked against the
// sensitive paths, so cat $(echo .env) is still a look (a variable inside a
// path with literal parts, ~/.ssh/$K or $APP/.env, is taken as "could be
// anything" and is a danger; a variable assigned a literal earlier, and the
// words of a for loop, are looked through; find -name .env feeding such a
// reader is a danger); recursive readers started outside the directories
// known to hold secrets (grep -r x ., find) may still read secrets inside
// the trees they walk; readers that print a configuration (docker inspect,
// kubectl get -o yaml, systemctl cat, git remote -v) may show secrets
// written into it; a repository's own config (core.fsmonitor, diff.external)
// is trusted by git's looks, and so is one named by git -C with an absolute
// path (not a relative one, --git-dir, or one under /tmp); text that reaches
// a shell from a file or a program's output cannot be read and is a danger,
// but a decoder this does not know (openssl enc with a key, a custom
// script) is only that; code handed to an interpreter is a danger, and
// only its fork loops and the string literals it passes to system()-like
// calls are judged further; curl and wget are not readers, since HTTP
// belongs to http_request: their requests are judged by its rules when
// Options.HTTP is set, for URLs written with a scheme (curl host/x, a URL
// in a config file or a variable is not read); the cloud CLIs' reads are looks
// by the shape of their verb (describe-*, list, show), so a read verb
// that prints a secret and is not in secretWords is missed; the directory a literal cd, pushd or env -C moved to is followed
// in source order, not through every branch (a relative one even when the
// directory the script starts in is not known, and a cd inside ( ), $( )
// or <( ) only until it ends).
package shell

import (
	"fmt"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/countersign/countersign/risk/sensitive"
)

// Analysis is what the parser found in one script. The zero value (nothing
// absurd, nothing dangerous, not read-only) means "confirm", so an analysis
// that gives up half way fails closed.
type Analysis struct {
	// Absurd holds one reason per command that must never run (SPEC §2 rule 1).
	Absurd []string
	// Danger holds one reason per code-level danger (SPEC §2 rule 4).
	Danger []string
	// ReadOnly is true only when the script parsed and every simple command
	// in it is a known reader used read-only, with harmless redirections.
	ReadOnly bool
	// Unknown holds why the script is not read-only when it is neither absurd
	// nor dangerous: "unknown command deploy.sh", "does not parse: ...".
	Unknown []string
	// RunTime holds why part of what runs is built at run time (a command
	// name or verb from a variable, a substitution, "$@"): the assessor
	// cannot read it, so the model's low risk_level cannot vouch for it,
	// and the script is not read-only (issue 16).
	RunTime []string
}

// Options configure an Analyzer.
type Options struct {
	// Sensitive recognises paths that hold secrets; a reader pointed at one
	// is a danger. Nil means sensitive.New(nil), the SPEC's defaults.
	Sensitive *sensitive.Matcher
	// ForbiddenHost says why a host a shell HTTP client (curl, wget, nc)
	// is aimed at is a cloud metadata or link-local endpoint, or "": such
	// a command is absurd, since the shell has no connect-time fence. Nil
	// checks the plain metadata addresses only.
	ForbiddenHost func(host string) string
	// SQLRead reports whether one SQL statement is a plain read by the SQL
	// rules, so that mysql -e 'SHOW PROCESSLIST' is a look, and the SQL
	// rules' dangers (a password hash read, DROP): they are the shell's
	// too. Nil: mysql -e is never a look.
	SQLRead func(sql string) (read bool, dangers []string)
	// HTTP judges a request a shell HTTP client (curl, wget, HTTPie)
	// makes as the http_request tool's judge would, and says why it is
	// blocked or dangerous there: each reason is a danger here. Nil: only
	// the metadata and secret-API checks of wholesale.go apply.
	HTTP func(HTTPRequest) []string
}

// maxDepth bounds how deep sh -c, eval and friends are parsed again.
const maxDepth = 4

// Analyzer judges shell scripts. Build it once with New; Analyze is then
// pure and safe for concurrent use.
type Analyzer struct {
	secrets     *sensitive.Matcher
	forbidden   func(host string) string
	sqlRead     func(sql string) (bool, []string)
	http        func(HTTPRequest) []string
	commands    map[string]handler
	passThrough map[string]bool // readers and wrappers: their words are not scanned for secrets
	effects     effectIndex     // the danger rows by command name (effects.go)
	carriers    carrierIndex    // where programs carry commands (carriers.go)
	// names gathers, for every command name any table knows, what those
	// tables say, so that judging a command looks its name up once (STYLE
	// habit 4); a name no table holds is absent.
	names   map[string]nameInfo
	parsers sync.Pool
	judges  sync.Pool // *judge, whose slabs are reused from call to call
}

// New builds an Analyzer and its lookup tables.
func New(opts Options) (*Analyzer, error) {
	m := opts.Sensitive
	if m == nil {
		var err error
		if m, err = sensitive.New(nil); err != nil {
			return nil, fmt.Errorf("build default sensitive matcher: %w", err)
		}
	}
	a := &Analyzer{secrets: m, forbidden: opts.ForbiddenHost, sqlRead: opts.SQLRead, http: opts.HTTP}
	if a.forbidden == nil {
		a.forbidden = plainMetadata
	}
	a.judges.New = func() any { return &judge{} }
	a.parsers.New = func() any {
		return &pooledParser{p: syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(false))}
	}
	cmds, pass, err := commandTable()
	if err != nil {
		return nil, fmt.Errorf("build shell command table: %w", err)
	}
	a.commands, a.passThrough = cmds, pass
	a.effects = buildEffects()
	a.carriers = buildCarriers()
	a.names = buildNames(a)
	return a, nil
}

// nameInfo is what the tables hold for one command name.
type nameInfo struct {
	h       handler // the command table's handler, when inCmds
	inCmds  bool    // the command table holds the name
	pass    bool    // a reader or wrapper, whose words are not scanned for secrets
	effects bool    // effect rows name it (effects.go)
	carries bool    // carrier rows name it (carriers.go)
	vehicle bool    // it carries commands into containers (vehicles.go)
	wipes   bool    // it wipes disks (wholesale.go)
	net     bool    // a network client (wholesale.go)
	// What the floors by argument (floors.go) need to know of the name.
	packages bool // its operands are package names (apt install python3)
	patterns bool // it takes patterns or scripts of its own through -e
	copier   bool // its last operand is where it writes
	ownOpts  bool // its row judges the files its options name
	special  bool // one of specialNames (floors.go)
	// statements are the options whose value is a statement the
	// program's own judge reads (mysql -e, psql -c, mongosh --eval:
	// dbclients.go); the code-option floor leaves them to it.
	statements map[string]bool
}

// buildNames gathers the tables by command name.
func buildNames(a *Analyzer) map[string]nameInfo {
	names := map[string]nameInfo{}
	set := func(name string, f func(*nameInfo)) {
		n := names[name]
		f(&n)
		names[name] = n
	}
	for name, h := range a.commands {
		set(name, func(n *nameInfo) { n.h, n.inCmds = h, true })
	}
	for name, pass := range a.passThrough {
		if pass {
			set(name, func(n *nameInfo) { n.pass = true })
		}
	}
	for name, rows := range a.effects {
		if len(rows) > 0 {
			set(name, func(n *nameInfo) { n.effects = true })
		}
	}
	for name, rows := range a.carriers.tools {
		if len(rows) > 0 {
			set(name, func(n *nameInfo) { n.carries = true })
		}
	}
	for name, ok := range vehicleNames {
		if ok {
			set(name, func(n *nameInfo) { n.vehicle = true })
		}
	}
	for name := range diskWipers {
		set(name, func(n *nameInfo) { n.wipes = true })
	}
	for name, ok := range netClients {
		if ok {
			set(name, func(n *nameInfo) { n.net = true })
		}
	}
	for _, t := range []struct {
		m map[string]bool
		f func(*nameInfo)
	}{
		{plainPackages, func(n *nameInfo) { n.packages = true }},
		{patternTools, func(n *nameInfo) { n.patterns = true }},
		{copiers, func(n *nameInfo) { n.copier = true }},
		{ownOptionRules, func(n *nameInfo) { n.ownOpts = true }},
	} {
		for name, ok := range t.m {
			if ok {
				set(name, t.f)
			}
		}
	}
	for _, name := range specialNames {
		set(name, func(n *nameInfo) { n.special = true })
	}
	for name, opts := range statementOptions {
		set(name, func(n *nameInfo) { n.statements = opts })
	}
	return names
}

// Analyze judges one script. It never runs anything and never panics on bad
// input; whatever it cannot understand leaves the script not read-only.
func (a *Analyzer) Analyze(script string) (res Analysis) {
	j := a.judges.Get().(*judge)
	j.judgeState = judgeState{a: a}
	j.argSlab, j.optSlab, j.cmdSlab = j.argSlab[:0], j.optSlab[:0], j.cmdSlab[:0]
	// The findings are gathered in the pooled judge and copied out, so
	// that the result does not move to the heap; a panic copies what was
	// found so far before it adds its own danger.
	j.res = &j.own
	defer func() {
		res = j.own
		j.own = Analysis{}
		a.judges.Put(j)
		if r := recover(); r != nil {
			// A bug here must not let the script through, nor let the LLM
			// lower it: a danger.
			res.ReadOnly = false
			res.Danger = append(res.Danger, fmt.Sprintf("shell analysis failed: %v", r))
		}
	}()
	out := &j.own
	parsed := j.script(script, 0)
	if !parsed {
		j.salvage(script)
	}
	if j.seeksSecrets && j.unseenContent {
		out.Danger = addReason(out.Danger, "prints the files find found by a secret's name")
	}
	if parsed && len(out.Absurd) == 0 && len(out.Danger) == 0 && len(out.Unknown) == 0 && len(out.RunTime) == 0 {
		if j.commands == 0 {
			out.Unknown = append(out.Unknown, "no command to run")
		} else {
			out.ReadOnly = true
		}
	}
	return *out // the deferred copy says the same
}

// pooledParser is a parser with the reader it reads from, reused together.
type pooledParser struct {
	p *syntax.Parser
	r strings.Reader
}

// parse parses a script with a pooled parser.
func (a *Analyzer) parse(script string) (*syntax.File, error) {
	pp := a.parsers.Get().(*pooledParser)
	defer a.parsers.Put(pp)
	pp.r.Reset(script)
	return pp.p.Parse(&pp.r, "")
}
