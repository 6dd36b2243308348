package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Variables: assignments that change what later commands do (PATH,
// LD_PRELOAD, IFS), the literal values looked through later (f=.env;
// cat $f), and words split by $IFS.

// assign judges a variable assignment. prefixFor names the command the
// variable is exported to (FOO=1 cmd), "" for a plain assignment or declare.
func (j *judge) assign(as *syntax.Assign, prefixFor string, depth int) {
	if as.Name == nil {
		return
	}
	n := as.Name.Value
	if len(j.refs) > 0 {
		n = j.deref(n)
	}
	j.markAssigned(n)
	j.exportsPreload(n)
	if as.Value != nil {
		j.carriedVar(n, word(as.Value), depth) // PAGER='...', GIT_SSH_COMMAND=...
	}
	if as.Index != nil && !constArith(as.Index) && !wholeArray(as.Index) {
		// a['$(cmd)']=1: the subscript is evaluated, which runs cmd.
		j.unknown("assigning " + n + "[…] evaluates its subscript, which can run code")
	}
	if prefixFor != "" {
		value, known := "", true
		if as.Value != nil {
			value, known = word(as.Value).lit()
		}
		if !safePrefixVar(n, value, known) {
			j.unknown("sets " + n + " for " + prefixFor)
		}
		return
	}
	value, known := "", true
	if as.Value != nil {
		value, known = word(as.Value).lit()
	}
	if (riskyVar(n) || n == "KUBECONFIG" || n == "DOCKER_CONFIG") && !safePrefixVar(n, value, known) {
		j.unknown("sets " + n + ", which changes what later commands do")
	}
	j.follow(n, as)
}

// follow keeps the value of a simple assignment for the commands after
// it (R=/; rm -rf $R), appends (c=r; c+=m) and values built of known
// variables (a=r; b=m; c=$a$b) included; any other assignment forgets
// the name, so an old value is never taken for a new one.
func (j *judge) follow(n string, as *syntax.Assign) {
	if j.sets == nil {
		j.sets = map[string]int{}
	}
	j.sets[n]++
	if as.Array != nil || as.Index != nil {
		delete(j.vars, n)
		return
	}
	v, ok := "", true
	if as.Value != nil {
		w := word(as.Value)
		v, ok = w.lit()
		if !ok && w.dynamic && !w.glob {
			v, ok = j.expandVars(w.text)
		}
	}
	if as.Append {
		old, known := j.vars[n]
		v, ok = old+v, ok && known
	}
	if !ok {
		delete(j.vars, n)
		// P=/proc/$PPID: keep the shape, so cat $P/environ is still seen
		// to read a process's environment.
		if as.Value != nil && !as.Append && word(as.Value).dynamic {
			if j.wild == nil {
				j.wild = map[string]string{}
			}
			j.wild[n] = j.wildOf(word(as.Value).text)
		} else {
			delete(j.wild, n)
		}
		return
	}
	delete(j.wild, n)
	if j.vars == nil {
		j.vars = map[string]string{}
	}
	j.vars[n] = v
}

// safePrefixVar reports whether exporting name=value to a reader keeps it a
// reader: locale, time zone, colours, terminal size, a pager that is cat.
func safePrefixVar(name, value string, known bool) bool {
	switch name {
	case "LANG", "LANGUAGE", "TZ", "COLUMNS", "LINES", "NO_COLOR", "TERM", "CLICOLOR",
		"FORCE_COLOR", "TIME_STYLE", "SYSTEMD_COLORS", "GREP_COLOR", "GREP_COLORS", "LS_COLORS",
		// Which account, region and project a cloud CLI reads from.
		"AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_DEFAULT_OUTPUT", "CLOUDSDK_CORE_PROJECT",
		"CLOUDSDK_COMPUTE_REGION", "CLOUDSDK_COMPUTE_ZONE", "AZURE_DEFAULTS_GROUP", "NOMAD_NAMESPACE", "NOMAD_REGION", "ETCDCTL_API",
		// Where a database client connects and with which password (issue
		// 25; the redaction masks the password). Not PGOPTIONS or
		// PGSERVICE, which can set search_path.
		"PGPASSWORD", "PGHOST", "PGPORT", "PGUSER", "PGDATABASE", "PGSSLMODE", "PGCONNECT_TIMEOUT", "MYSQL_PWD", "REDISCLI_AUTH":
		return known
	case "PAGER", "GIT_PAGER", "SYSTEMD_PAGER", "MANPAGER":
		return known && (value == "" || value == "cat")
	case "KUBECONFIG", "DOCKER_CONFIG":
		// A kubeconfig can run programs (exec credential plugins), and a
		// docker config plugin hooks: not one anybody could have written.
		return known && !worldWritable(value)
	}
	return strings.HasPrefix(name, "LC_")
}

// worldWritable reports whether p is in a directory every user can write.
func worldWritable(p string) bool {
	for _, d := range []string{"/tmp/", "/var/tmp/", "/dev/shm/"} {
		if strings.HasPrefix(p, d) {
			return true
		}
	}
	return false
}

// riskyVar reports whether setting a shell variable changes how later
// commands run or which programs they start.
func riskyVar(n string) bool {
	switch n {
	case "PATH", "IFS", "ENV", "CDPATH", "HOME", "SHELLOPTS", "BASHOPTS", "PS4",
		"PROMPT_COMMAND", "GLOBIGNORE", "EDITOR", "VISUAL", "NODE_OPTIONS", "RUBYOPT":
		return true
	case "RIPGREP_CONFIG_PATH", "TAR_OPTIONS", "UNZIP", "ZIPINFO", "LOCPATH", "GCONV_PATH", "PHPRC":
		// rg --pre, tar --checkpoint-action=exec, unzip options and
		// loadable modules, from the environment.
		return true
	}
	// TF_CLI_CONFIG_FILE points terraform at other providers, XDG_CONFIG_HOME
	// git at another config (core.pager), OPENSSL_CONF openssl at engines,
	// LUA_INIT and JAVA_TOOL_OPTIONS run code when the program starts.
	for _, p := range []string{"LD_", "BASH_", "GIT_", "LESS", "PYTHON", "PERL", "DYLD_", "KUBECTL_", "TF_", "JAVA_",
		"_JAVA_", "JDK_", "XDG_", "OPENSSL_", "LUA_", "PHP_", "RUBY", "NODE_", "HELM_"} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return strings.HasSuffix(n, "PAGER") || strings.HasSuffix(n, "EDITOR") || strings.HasSuffix(n, "_OPTIONS") || strings.HasSuffix(n, "_OPTS")
}

// declare judges declare, local, export, readonly, typeset: -n makes a name
// reference (assigning through it can set PATH) and -i evaluates every
// later assignment as arithmetic, which can run code.
func (j *judge) declare(d *syntax.DeclClause, depth int) {
	ref := false
	if d.Variant != nil && d.Variant.Value == "nameref" {
		j.unknown("nameref makes a name reference")
		ref = true
	}
	for _, as := range d.Args {
		if ref && as.Name != nil && as.Value != nil {
			// declare -n r=cmd: $r is $cmd from now on, and r=x sets cmd
			// (issue 25: followed like a variable).
			if target, ok := word(as.Value).lit(); ok && isName(target) {
				j.nameRef(as.Name.Value, target)
				continue
			}
		}
		if as.Naked && as.Name == nil && as.Value != nil {
			if f := word(as.Value); !f.dynamic && strings.HasPrefix(f.text, "-") && strings.ContainsRune(f.text, 'n') {
				ref = true
			}
			if f := word(as.Value); f.dynamic || strings.HasPrefix(f.text, "-") && strings.ContainsAny(f.text, "ni") {
				j.unknown(d.Variant.Value + " " + f.text + " changes how later assignments are evaluated")
			} else if name, _, _ := strings.Cut(f.text, "="); strings.ContainsAny(name, "[$`") {
				// declare 'b[$(cmd)]=1' is an assignment the parser saw as a word.
				j.unknown(d.Variant.Value + " " + f.text + " assigns through a quoted word, whose subscript can run code")
			} else if _, v, ok := strings.Cut(f.text, "="); ok && (riskyVar(name) || j.a.carriers.vars[name] != nil) {
				j.exportsPreload(name)
				j.carriedVar(name, arg{text: v, dynamic: f.dynamic}, depth)
				j.unknown(d.Variant.Value + " " + f.text + " sets " + name + ", which changes what later commands do")
			}
			continue
		}
		j.assign(as, "", depth)
	}
}

func (j *judge) markAssigned(name string) {
	if j.assigned == nil {
		j.assigned = map[string]bool{}
	}
	j.assigned[name] = true
}

// usesIFS reports whether a word expands $IFS, which hides word breaks.
func usesIFS(argv []arg) bool {
	for _, a := range argv {
		if a.dynamic && (strings.Contains(a.text, "$IFS") || strings.Contains(a.text, "${IFS}")) {
			return true
		}
	}
	return false
}

// splitIFS splits words on $IFS (or ${IFS}) as the shell would with the
// default IFS. Parts that hold other expansions stay dynamic.
func splitIFS(argv []arg) []arg {
	var out []arg
	for _, a := range argv {
		text := strings.ReplaceAll(a.text, "${IFS}", "$IFS")
		for _, part := range strings.Split(text, "$IFS") {
			if part == "" {
				continue
			}
			out = append(out, arg{text: part, dynamic: strings.ContainsAny(part, "$…"), glob: a.glob})
		}
	}
	return out
}

// nameRef makes name a reference to target: expansions of name read
// target, assignments to name set it.
func (j *judge) nameRef(name, target string) {
	if j.refs == nil {
		j.refs = map[string]string{}
	}
	j.refs[name] = target
	j.markAssigned(name)
}

// deref follows name references, a few hops at most (a loop of them is
// an error in bash too).
func (j *judge) deref(name string) string {
	for range 8 {
		t, ok := j.refs[name]
		if !ok {
			return name
		}
		name = t
	}
	return name
}

// isName reports whether s is a shell variable name.
func isName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isWordByte(s[i]) {
			return false
		}
	}
	return true
}
