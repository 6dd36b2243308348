package shell

import (
	"net/url"
	"strings"
)

// Tools with both looks and dangers: git, systemctl, docker, kubectl, helm,
// terraform. Each check returns why the command is not read-only ("" when it
// is) and records dangers on j.

func in(s string, list ...string) bool {
	for _, l := range list {
		if s == l {
			return true
		}
	}
	return false
}

// gitCheck: global options that point git at other config, a pager or a
// program are refused; each subcommand has its own rule.
func gitCheck(j *judge, c *cmd, _ []opt, _ []arg) string {
	args, why, done := gitGlobalOptions(c.args)
	if done {
		return why
	}
	if len(args) == 0 {
		return "git with no subcommand"
	}
	if why != "" {
		// The subcommand is still judged for its dangers (git -C "$D"
		// branch -D x); the global option already keeps it from a look.
		j.unknown(why)
	}
	sub, rest := args[0].text, args[1:]
	switch sub {
	case "status", "log", "diff", "show", "blame", "annotate", "shortlog", "describe", "rev-parse",
		"ls-files", "ls-tree", "cat-file", "rev-list", "show-ref", "for-each-ref", "count-objects",
		"name-rev", "merge-base", "whatchanged", "cherry", "grep", "version", "show-branch",
		"range-diff", "diff-tree", "diff-files", "diff-index", "check-ignore", "check-attr", "var", "ls-remote", "verify-commit", "verify-tag":
		return gitLook(j, sub, rest)
	case "branch":
		return gitBranch(j, rest)
	case "tag":
		return gitList("tag", rest, "-l --list -n --contains --no-contains --merged --no-merged --points-at --sort --format --column --no-column -i --ignore-case --color --no-color")
	case "remote":
		if len(rest) == 0 || in(rest[0].text, "-v", "--verbose", "show", "get-url") {
			return ""
		}
		return "git remote " + rest[0].text + " changes remotes"
	case "config":
		for _, a := range rest {
			_, v, eq := strings.Cut(a.text, "=")
			if !eq {
				v = a.text
			}
			j.secret("git config", arg{text: v, dynamic: a.dynamic}) // git config --file=.git-credentials --list
		}
		return gitConfig(j, rest, c.depth)
	case "reflog":
		if len(rest) == 0 || in(rest[0].text, "show", "exists") || strings.HasPrefix(rest[0].text, "-") {
			return ""
		}
		return "git reflog " + rest[0].text + " changes the reflog"
	case "checkout":
		return gitCheckout(j, rest)
	case "submodule":
		// git submodule [status|summary] only reads; foreach runs commands.
		if len(rest) == 0 || in(rest[0].text, "status", "summary") || rest[0].text == "--quiet" && len(rest) > 1 && in(rest[1].text, "status", "summary") {
			return gitLook(j, sub, rest)
		}
		return "git submodule " + rest[0].text + " changes submodules"
	case "credential", "credential-store", "credential-cache", "credential-osxkeychain", "credential-libsecret", "credential-manager", "credential-netrc":
		// A credential helper asked for a credential prints it.
		j.danger("git " + sub + " asks a credential helper for a stored credential")
		return ""
	case "stash", "worktree", "push", "reset", "clean", "restore", "switch":
		return gitDiscards(j, sub, rest)
	}
	return "git " + sub + " changes the repository"
}

// gitGlobalOptions reads the options before git's subcommand. done is set
// when they decide alone: why is then the reason, or "" for --version.
// Otherwise why, when set, says why the command is not a look, and the
// subcommand is judged all the same. -C DIR is a look's option when DIR
// is a literal absolute path (or under ~) no other user can write to:
// the deployed repository an engineer looks at, whose config is trusted
// as the current directory's is; a relative one, or --git-dir, may name
// a repository planted in the workspace. -c KEY=VALUE is judged by the
// carriers table (git -c core.pager=... runs a program).
func gitGlobalOptions(args []arg) (rest []arg, why string, done bool) {
	note := func(w string) {
		if why == "" {
			why = w
		}
	}
	for len(args) > 0 && strings.HasPrefix(args[0].text, "-") {
		t := args[0].text
		value := func() (arg, bool) {
			if _, v, ok := strings.Cut(t, "="); ok {
				return arg{text: v, dynamic: args[0].dynamic}, true
			}
			if len(args) > 1 {
				args = args[1:]
				return args[0], true
			}
			return arg{}, false
		}
		switch {
		case in(t, "--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--no-replace-objects", "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs", "--bare", "--no-advice"):
		case in(t, "--version", "--help", "-h"):
			return nil, "", true
		case t == "--":
		case t == "-c":
			// The value is judged by carriers.go; the word is skipped here.
			if len(args) > 1 {
				args = args[1:]
			}
		case strings.HasPrefix(t, "-c"):
		case strings.HasPrefix(t, "--config-env"):
			value()
			note("git " + t + " sets config from the environment, which can run programs")
		case t == "-C" || strings.HasPrefix(t, "--git-dir") || strings.HasPrefix(t, "--work-tree"):
			v, ok := value()
			switch {
			case !ok:
				return nil, "git " + t + " with no directory", true
			case v.dynamic:
				note("cannot tell which repository " + v.text + " is, and its config can run programs")
			case t != "-C" || !strings.HasPrefix(v.text, "/") && !strings.HasPrefix(v.text, "~/"):
				// A git directory named outright, or one inside the
				// workspace (.evil-git, a checked-out fixture), may be one
				// the model or a cloned repository planted.
				note("git " + t + " " + v.text + " points git at another repository, whose config can run programs")
			case worldWritable(v.text) || in(v.text, "/tmp", "/var/tmp", "/dev/shm"):
				note("git " + t + " " + v.text + " points git at a repository anybody could have written, whose config can run programs")
			}
		case strings.HasPrefix(t, "--namespace") || strings.HasPrefix(t, "--super-prefix"):
			value()
			note("git " + t + " changes which refs git sees")
		case t == "-p" || t == "--paginate" || strings.HasPrefix(t, "--exec-path"):
			note("git " + t + " runs a pager or other programs")
		default:
			return nil, "git " + t + " is not a known look", true
		}
		args = args[1:]
	}
	return args, why, false
}

// gitLook judges the subcommands that only read: a secret they show (git
// show HEAD:.env, git diff -- .env, git blame --contents=.env, git log
// -L1,5:.env) is a danger, an option that writes or runs is not a look.
func gitLook(j *judge, sub string, rest []arg) string {
	for _, a := range rest {
		t := a.text
		for _, file := range gitPaths(t) {
			j.secret("git "+sub, arg{text: file, dynamic: a.dynamic})
		}
		if why := gitOption(sub, t); why != "" {
			return "git " + sub + " " + t + why
		}
	}
	return ""
}

// gitDiscards judges the subcommands that change the working tree, the
// index or a remote: a form that throws work or history away is a danger
// (SPEC §2 rule 4: git push --force, git reset --hard, git clean -f).
func gitDiscards(j *judge, sub string, rest []arg) string {
	switch sub {
	case "stash":
		switch {
		case len(rest) > 0 && in(rest[0].text, "list", "show"):
			return ""
		case len(rest) > 0 && in(rest[0].text, "drop", "clear"):
			j.danger("git stash " + rest[0].text + " throws away stashed work")
			return ""
		}
		return "git stash changes the working tree"
	case "worktree":
		if len(rest) > 0 && rest[0].text == "list" {
			return ""
		}
		if len(rest) > 0 && rest[0].text == "remove" && gitForced(rest[1:], "") {
			j.danger("git worktree remove --force throws away uncommitted work")
			return ""
		}
		return "git worktree changes worktrees"
	case "push":
		for _, a := range rest {
			t := a.text
			if gitForced([]arg{a}, "") || strings.HasPrefix(t, "--force") || strings.HasPrefix(t, "+") && len(t) > 1 || t == "--mirror" || t == "--delete" || t == "-d" || t == "--prune" {
				j.danger("git push " + t + " rewrites or deletes remote history")
				return ""
			}
		}
		return "git push changes the remote"
	case "reset":
		for _, a := range rest {
			if in(a.text, "--hard", "--merge", "--keep") {
				j.danger("git reset " + a.text + " throws away uncommitted work")
				return ""
			}
		}
		return "git reset changes the index"
	case "clean":
		for _, a := range rest {
			if a.text == "--force" || gitForced([]arg{a}, "") {
				j.danger("git clean -f deletes untracked files")
				return ""
			}
		}
		return "git clean deletes untracked files"
	case "restore":
		staged, worktree := false, false
		for _, a := range rest {
			staged = staged || in(a.text, "--staged", "-S")
			worktree = worktree || in(a.text, "--worktree", "-W")
			if in(a.text, "--help", "-h") {
				return "git restore --help opens a pager"
			}
		}
		if !staged || worktree {
			j.danger("git restore discards changes in the working tree")
			return ""
		}
		return "git restore changes the index"
	default: // switch
		for _, a := range rest {
			if a.text == "--" {
				break
			}
			if in(a.text, "--force", "--discard-changes") || gitForced([]arg{a}, "cC") {
				j.danger("git switch " + a.text + " throws away local changes")
				return ""
			}
		}
		return "git switch changes the working tree"
	}
}

// gitWrites and gitRuns are the long options of git's looks that write a
// file or run a program. git accepts any unambiguous abbreviation of a
// long option (git diff --ext is --ext-diff, --out=F is --output=F).
var (
	gitWrites = []string{"output"}
	gitRuns   = []string{"ext-diff", "textconv", "filters", "open-files-in-pager", "exec", "upload-pack"}
)

// gitOption says what a word does when it is one of those options: " writes
// a file", " runs another program", or "".
func gitOption(sub, t string) string {
	if name, ok := strings.CutPrefix(t, "--"); ok {
		name, _, _ = strings.Cut(name, "=")
		for _, l := range gitWrites {
			if name != "" && strings.HasPrefix(l, name) {
				return " writes a file"
			}
		}
		for _, l := range gitRuns {
			if name != "" && strings.HasPrefix(l, name) {
				return " runs another program"
			}
		}
		return ""
	}
	switch {
	case t == "-o" && sub != "grep":
		return " writes a file"
	case t == "-O":
		return " runs another program"
	case sub == "grep" && strings.HasPrefix(t, "-") && strings.Contains(t, "O"):
		// git grep -O[PAGER], also in a cluster (-nOvim): opens the files in PAGER.
		return " runs another program"
	case sub == "ls-remote" && strings.HasPrefix(t, "-u"):
		return " runs another program"
	}
	return ""
}

// gitPaths returns the paths a git argument may name: the word itself, what
// follows the first ":" (HEAD:.env, -L1,5:.env) and what follows "="
// (--contents=.env).
func gitPaths(t string) []string {
	var out []string
	if !strings.HasPrefix(t, "-") {
		out = append(out, t)
	}
	if _, v, ok := strings.Cut(t, ":"); ok && v != "" {
		out = append(out, v)
	}
	if _, v, ok := strings.Cut(t, "="); ok && v != "" {
		out = append(out, v)
	}
	return out
}

// gitForced reports whether a short option cluster holds -f. Letters in
// valued take a value, so -bfix is -b fix, not -f.
func gitForced(args []arg, valued string) bool {
	for _, a := range args {
		t := a.text
		if t == "--" {
			return false
		}
		if len(t) < 2 || t[0] != '-' || t[1] == '-' {
			continue
		}
		for k := 1; k < len(t); k++ {
			if strings.IndexByte(valued, t[k]) >= 0 {
				break
			}
			if t[k] == 'f' {
				return true
			}
		}
	}
	return false
}

// gitCheckout: git checkout BRANCH switches branches (not a look); with -f,
// with paths (after --, or a second operand), or with . it overwrites
// local changes: a danger.
func gitCheckout(j *judge, rest []arg) string {
	operands := 0
	for i := 0; i < len(rest); i++ {
		t := rest[i].text
		switch {
		case t == "--":
			if i+1 < len(rest) {
				j.danger("git checkout -- " + rest[i+1].text + " overwrites local changes")
				return ""
			}
			return "git checkout changes the working tree"
		case t == "--force" || gitForced(rest[i:i+1], "bBU"):
			j.danger("git checkout " + t + " throws away local changes")
			return ""
		case strings.HasPrefix(t, "--pathspec-from-file"):
			j.danger("git checkout " + t + " overwrites local changes")
			return ""
		case in(t, "-b", "-B", "--orphan", "--conflict", "--unified", "--inter-hunk-context") || (t == "--track" || t == "--recurse-submodules") && i+1 < len(rest) && !strings.HasPrefix(rest[i+1].text, "-") && in(rest[i+1].text, "direct", "inherit", "on-demand", "checkout"):
			i++
		case strings.HasPrefix(t, "-"):
		default:
			operands++
			if t == "." || operands > 1 {
				j.danger("git checkout " + t + " overwrites local changes")
				return ""
			}
		}
	}
	return "git checkout changes the working tree"
}

// gitBranch: listing is a look; -D deletes unmerged work.
func gitBranch(j *judge, rest []arg) string {
	for _, a := range rest {
		t := a.text
		if strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.ContainsAny(t[1:], "D") ||
			(t == "--delete" || strings.HasPrefix(t, "-d")) && gitForced(rest, "") {
			j.danger("git branch " + t + " deletes a branch that may hold unmerged work")
			return ""
		}
	}
	return gitList("branch", rest, "-a --all -r --remotes -v -vv --verbose -l --list --show-current --contains --no-contains --merged --no-merged --points-at --sort --format --color --no-color --column --no-column -i --ignore-case --abbrev --no-abbrev -q --quiet")
}

// gitList allows git tag / git branch in listing form: only the listed
// options, and operands (patterns) only with -l/--list or a filter option.
func gitList(sub string, rest []arg, allowed string) string {
	ok := strings.Fields(allowed)
	listing := false
	for i := 0; i < len(rest); i++ {
		t := rest[i].text
		name, _, eq := strings.Cut(t, "=")
		if !strings.HasPrefix(t, "-") {
			if !listing {
				return "git " + sub + " " + t + " creates or changes a " + sub
			}
			continue
		}
		if strings.HasPrefix(name, "-n") && sub == "tag" {
			continue
		}
		if !in(name, ok...) {
			return "git " + sub + " " + t + " changes " + sub + "es"
		}
		switch name {
		case "-l", "--list":
			listing = true
		case "--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format":
			listing = true
			if !eq && i+1 < len(rest) && name != "--merged" && name != "--no-merged" {
				i++
			}
		}
	}
	return ""
}

// gitConfig allows reading config: --get*, --list, get, list.
// A dump of every value, or a value whose name says it is a credential,
// prints tokens: actions/checkout keeps one in http.extraheader, and
// credential helpers and URLs keep others. Names alone are fine. Writing
// a setting that runs a program (core.pager, alias.x=!cmd, core.fsmonitor)
// plants a command that a later look runs: a danger, and the command is
// judged.
func gitConfig(j *judge, rest []arg, depth int) string {
	read, bulk, namesOnly := false, false, false
	var key string
	var keyAt int
	for i, a := range rest {
		t := a.text
		low := strings.ToLower(t)
		switch {
		case !strings.HasPrefix(t, "-") && key == "" && gitRunsKey(t):
			key, keyAt = t, i
		case !strings.HasPrefix(t, "-") && (strings.Contains(low, "extraheader") || strings.Contains(low, "token") ||
			strings.Contains(low, "password") || strings.Contains(low, "secret") || strings.Contains(low, "credential") ||
			strings.Contains(low, "auth")):
			j.danger("git config " + t + " prints a credential")
			return ""
		case in(t, "--list", "-l", "list", "--get-regexp"):
			read, bulk = true, true
		case t == "--name-only":
			namesOnly = true
		case in(t, "--get", "--get-all", "--get-urlmatch", "get", "--get-color", "--get-colorbool"):
			read = true
		case in(t, "--global", "--system", "--local", "--worktree", "--show-origin", "--show-scope", "--null", "-z", "--name-only", "--includes", "--no-includes", "--type", "--bool", "--int", "--path", "--default", "-f", "--file", "--blob") || strings.HasPrefix(t, "--type=") || strings.HasPrefix(t, "--default=") || strings.HasPrefix(t, "--file="):
		case strings.HasPrefix(t, "-"):
			if key == "" {
				return "git config " + t + " changes config"
			}
		}
	}
	if key != "" && !read {
		for _, v := range rest[keyAt+1:] {
			if strings.HasPrefix(v.text, "-") && !v.dynamic {
				continue
			}
			j.danger("git config " + key + " plants a command that later git commands run")
			j.remote(func() {
				j.carry("git config "+key, arg{text: strings.TrimPrefix(v.text, "!"), dynamic: v.dynamic}, shellText, depth)
			})
			return ""
		}
	}
	if !read {
		return "git config without --get or --list changes config"
	}
	if bulk && !namesOnly {
		j.danger("git config --list prints every value, tokens included (http.extraheader)")
	}
	return ""
}

var systemctlReads = []string{"status", "show", "list-units", "list-unit-files", "list-sockets", "list-timers",
	"list-jobs", "list-dependencies", "list-machines", "list-automounts", "list-paths", "is-active", "is-enabled",
	"is-failed", "is-system-running", "cat", "show-environment", "get-default", "help"}

var systemctlDangers = []string{"stop", "restart", "try-restart", "reload-or-restart", "try-reload-or-restart",
	"force-reload", "condrestart", "disable", "mask", "kill", "poweroff", "reboot", "halt", "kexec", "suspend",
	"hibernate", "hybrid-sleep", "suspend-then-hibernate", "isolate", "emergency", "rescue", "default", "exit",
	"switch-root", "soft-reboot", "clean", "freeze", "daemon-reexec"}

func systemctlCheck(j *judge, c *cmd, _ []opt, ops []arg) string {
	if len(ops) == 0 {
		return ""
	}
	verb := ops[0].text
	switch {
	case in(verb, systemctlReads...):
		return ""
	case in(verb, systemctlDangers...):
		unit := ""
		if len(ops) > 1 {
			unit = " " + ops[1].text
		}
		j.danger("systemctl " + verb + unit + " stops or restarts services or the machine")
		return ""
	}
	return "systemctl " + verb + " changes services"
}

// service NAME status is a look; stop and restart are dangers.
func serviceCheck(j *judge, c *cmd, _ []opt, ops []arg) string {
	if len(c.args) == 1 && c.args[0].text == "--status-all" {
		return ""
	}
	if len(ops) < 2 {
		return "service needs a name and an action"
	}
	switch verb := ops[1].text; {
	case verb == "status":
		return ""
	case in(verb, "stop", "restart", "force-reload", "try-restart", "condrestart", "force-stop"):
		j.danger("service " + ops[0].text + " " + verb + " stops or restarts a service")
		return ""
	default:
		return "service " + ops[0].text + " " + verb + " changes a service"
	}
}

var dockerGlobal = mustSpec("-H -c -l --host --context --config --log-level --tlscacert --tlscert --tlskey")

var dockerReads = []string{"ps", "images", "inspect", "logs", "stats", "top", "version", "info", "port", "diff", "history", "events", "search"}

var dockerObjectReads = map[string][]string{
	"container": {"ls", "list", "ps", "logs", "inspect", "top", "port", "diff", "stats"},
	"image":     {"ls", "list", "inspect", "history"},
	"volume":    {"ls", "list", "inspect"},
	"network":   {"ls", "list", "inspect"},
	"system":    {"df", "info", "events"},
	"context":   {"ls", "list", "show", "inspect"},
	"node":      {"ls", "list", "inspect", "ps"},
	"service":   {"ls", "list", "ps", "logs", "inspect"},
	"stack":     {"ls", "list", "ps", "services"},
	"buildx":    {"ls", "inspect", "du", "version"},
	"manifest":  {"inspect"},
	"plugin":    {"ls", "list", "inspect"},
	"secret":    {"ls", "list"},
	"config":    {"ls", "list"},
}

var dockerDangers = []string{"rm", "rmi", "kill", "stop", "restart", "prune", "remove", "down", "leave", "update"}

func dockerCheck(j *judge, c *cmd, _ []opt, _ []arg) string {
	globals, rest := dockerGlobal.parseLeading(c.args)
	if len(rest) == 0 {
		return "docker with no command"
	}
	for _, o := range globals {
		if o.is(0, "config") && worldWritable(o.value.text) {
			return c.name + " --config " + o.value.text + " can run plugin hooks anybody could have written"
		}
	}
	sub := rest[0].text
	if sub == "compose" {
		return compose(j, c.name+" compose", rest[1:])
	}
	if c.name == "podman" {
		for _, a := range c.args[:len(c.args)-len(rest)] {
			// The runtime, conmon and hooks are programs podman runs.
			for _, bad := range []string{"--runtime", "--conmon", "--hooks-dir", "--network-cmd-path", "--module", "--ssh"} {
				if strings.HasPrefix(a.text, bad) {
					return "podman " + a.text + " points podman at other programs"
				}
			}
		}
	}
	for _, a := range rest[1:] {
		if a.text == "--bootstrap" {
			return c.name + " " + sub + " --bootstrap starts a builder"
		}
	}
	if in(sub, dockerReads...) {
		return ""
	}
	// exec and run: the command carried into the container is judged in
	// vehicles.go.
	if in(sub, dockerDangers...) {
		j.danger(c.name + " " + sub + " removes or stops containers or images")
		return ""
	}
	reads, object := dockerObjectReads[sub]
	if !object && len(rest) > 1 && in(rest[1].text, dockerDangers...) {
		// docker builder prune, docker buildx rm: teardown of objects the
		// table does not list.
		j.danger(c.name + " " + sub + " " + rest[1].text + " removes or stops " + sub + " data")
		return ""
	}
	if !object || len(rest) < 2 {
		return c.name + " " + sub + " is not a look"
	}
	verb := rest[1].text
	switch {
	case in(verb, reads...):
		return ""
	case in(verb, dockerDangers...):
		j.danger(c.name + " " + sub + " " + verb + " removes or stops " + sub + "s")
		return ""
	}
	return c.name + " " + sub + " " + verb + " is not a look"
}

var composeGlobal = mustSpec("-f -p --file --project-name --project-directory --env-file --profile --ansi --parallel --progress")

func composeCheck(j *judge, c *cmd, _ []opt, _ []arg) string {
	return compose(j, c.name, c.args)
}

func compose(j *judge, name string, args []arg) string {
	_, rest := composeGlobal.parseLeading(args)
	if len(rest) == 0 {
		return name + " with no command"
	}
	sub := rest[0].text
	switch {
	case in(sub, "ps", "logs", "ls", "images", "top", "version", "port", "events"):
		return ""
	case sub == "config":
		// The resolved config holds values interpolated from .env files;
		// the listing forms print names only.
		for _, a := range rest[1:] {
			if in(a.text, "--services", "--volumes", "--profiles", "--images", "--networks", "--no-interpolate", "-q", "--quiet") {
				return ""
			}
		}
		return name + " config prints values interpolated from the environment and .env files"
	case in(sub, "down", "rm", "kill", "stop", "restart"):
		j.danger(name + " " + sub + " stops or removes services")
		return ""
	}
	return name + " " + sub + " is not a look"
}

var kubectlSpec = mustSpec("-n -s -l -o -c -f -L -k --namespace --context --cluster --user --server --kubeconfig --token --selector --output --container --tail --since --since-time --filename --label-columns --sort-by --field-selector --template --request-timeout --as --as-group --as-uid --cache-dir --certificate-authority --client-certificate --client-key --kustomize --chunk-size --max-log-requests --limit-bytes --pod-running-timeout --replicas --timeout --for --subresource --raw --type --containers")

var kubectlReads = []string{"get", "describe", "logs", "top", "explain", "api-resources", "api-versions", "version", "cluster-info", "events", "wait", "kustomize", "completion"}

// kubectlCheck judges kubectl and oc: options that send the cluster's
// credentials elsewhere or run programs are refused, reads that print
// secret values are dangers, and each verb has its own rule.
func kubectlCheck(j *judge, c *cmd, _ []opt, _ []arg) string {
	opts, ops := kubectlSpec.parseInto(j, c.args)
	if len(ops) == 0 {
		return c.name + " with no command"
	}
	for _, o := range opts {
		switch {
		case o.is('s', "server"):
			// The cluster's credentials go to whatever server is named.
			return c.name + " " + o.String() + " sends the cluster credentials to another server"
		case o.is(0, "kubeconfig") && worldWritable(o.value.text):
			return c.name + " --kubeconfig " + o.value.text + " can run programs (exec credential plugins) anybody could have written"
		case o.long == "raw" && o.hasValue && strings.Contains(strings.ToLower(unescapePath(o.value.text)), "secret"):
			j.danger(c.name + " --raw " + o.value.text + " prints secret values")
			return ""
		}
	}
	verb := ops[0].text
	second := ""
	if len(ops) > 1 {
		second = strings.ToLower(ops[1].text) // kubectl get SECRET works too
	}
	if why, look := kubectlLook(j, c, opts, verb, second); look {
		return why
	}
	return kubectlChange(j, c, opts, verb, second)
}

// kubectlLook judges the verbs that only read. look is false for any
// other verb; why is then empty.
func kubectlLook(j *judge, c *cmd, opts []opt, verb, second string) (why string, look bool) {
	switch {
	case verb == "kustomize":
		for _, o := range opts {
			if o.is('o', "output") {
				return c.name + " kustomize -o writes files", true
			}
		}
		for _, a := range c.args {
			if strings.HasPrefix(a.text, "--enable") {
				return c.name + " kustomize " + a.text + " runs plugins or helm", true
			}
		}
		return "", true
	case verb == "cluster-info" && second == "dump":
		return c.name + " cluster-info dump writes a dump of the cluster", true
	case verb == "get" && strings.Contains(second, "secret"):
		for _, o := range opts {
			if o.is('o', "output") && !in(o.value.text, "name", "wide") || o.is(0, "template") {
				j.danger(c.name + " get secret -o " + o.value.text + " prints secret values")
				break
			}
		}
		return "", true
	case verb == "config" && in(second, "view", "get-contexts", "current-context", "get-clusters", "get-users"):
		for _, a := range c.args {
			// --flatten embeds the key files' contents and is not shortened.
			if a.text == "--raw" || a.text == "--flatten" || (strings.HasPrefix(a.text, "--raw=") || strings.HasPrefix(a.text, "--flatten=")) && !strings.HasSuffix(a.text, "=false") {
				j.danger(c.name + " config view " + a.text + " prints credentials")
			}
		}
		return "", true
	case in(verb, kubectlReads...),
		verb == "auth" && in(second, "can-i", "whoami"),
		verb == "diff", // a server-side dry run, compared with the diff program
		verb == "rollout" && in(second, "status", "history"),
		verb == "plugin" && second == "list":
		return "", true
	}
	return "", false
}

// kubectlChange judges the verbs that change the cluster: those that
// remove, stop or roll back workloads are dangers (SPEC §2 rule 4), and a
// command run inside a container is judged as well.
func kubectlChange(j *judge, c *cmd, opts []opt, verb, second string) string {
	switch {
	case verb == "exec" || verb == "debug" || verb == "run":
		// The command carried into the container is judged in vehicles.go.
	case verb == "rollout" && in(second, "restart", "undo", "pause"):
		j.danger(c.name + " rollout " + second + " restarts or rolls back workloads")
		return ""
	case in(verb, "delete", "drain"):
		j.danger(c.name + " " + verb + " removes cluster resources")
		return ""
	case verb == "scale":
		for _, o := range opts {
			if o.long == "replicas" && o.value.text == "0" {
				j.danger(c.name + " scale --replicas=0 stops a workload")
				return ""
			}
		}
	case verb == "apply":
		for _, a := range c.args {
			if a.text == "--prune" || strings.HasPrefix(a.text, "--prune=") && a.text != "--prune=false" {
				j.danger(c.name + " apply --prune deletes resources missing from the files")
				return ""
			}
		}
	case verb == "replace":
		for _, a := range c.args {
			if a.text == "--force" {
				j.danger(c.name + " replace --force deletes and recreates resources")
				return ""
			}
		}
	}
	return c.name + " " + verb + " changes the cluster"
}

var helmSpec = mustSpec("-n -o -f --namespace --kube-context --kubeconfig --output --revision --max --values --set --version --repo")

func helmCheck(j *judge, c *cmd, _ []opt, _ []arg) string {
	_, ops := helmSpec.parseInto(j, c.args)
	if len(ops) == 0 {
		return "helm with no command"
	}
	for i, a := range c.args {
		// -f .env, --set-file key=.env: files rendered into the output.
		for _, piece := range strings.Split(a.text, ",") {
			if i := strings.LastIndexByte(piece, '='); i >= 0 {
				piece = piece[i+1:]
			}
			j.secret("helm", arg{text: piece, dynamic: a.dynamic})
		}
		switch t := a.text; {
		case strings.HasPrefix(t, "--kubeconfig=") && worldWritable(strings.TrimPrefix(t, "--kubeconfig=")) ||
			t == "--kubeconfig" && i+1 < len(c.args) && worldWritable(c.args[i+1].text):
			return "helm --kubeconfig can run programs (exec credential plugins) anybody could have written"
		case strings.HasPrefix(t, "--kube-apiserver"):
			return "helm " + t + " sends the cluster credentials to another server"
		case strings.HasPrefix(t, "--post-renderer") || strings.HasPrefix(t, "--output-dir") ||
			strings.HasPrefix(t, "--dependency-update") || t == "--dry-run=server":
			return "helm " + t + " runs a program, writes files or talks to the cluster"
		}
	}
	verb := ops[0].text
	switch {
	case verb == "status" && helmFullOutput(c.args):
		j.danger("helm status -o json|yaml prints the release's values and manifest")
		return ""
	case verb == "get" && len(ops) > 1 && in(ops[1].text, "values", "manifest", "all", "hooks"):
		// Values and rendered Secret manifests are where passwords live:
		// helm get values stays a secret read even though on-call runs it,
		// as kubectl get secret -o yaml does.
		j.danger("helm get " + ops[1].text + " prints release values and Secrets")
		return ""
	case verb == "diff":
		// The helm-diff plugin masks Secrets unless told not to.
		for _, a := range c.args {
			if strings.HasPrefix(a.text, "--show-secrets") {
				j.danger("helm diff " + a.text + " prints Secrets")
				return ""
			}
		}
		if len(ops) > 1 && in(ops[1].text, "upgrade", "release", "revision", "rollback", "version") {
			return ""
		}
		return "helm diff " + joinOps(ops[1:]) + " is not a look"
	case in(verb, "list", "ls", "status", "get", "history", "hist", "show", "inspect", "search", "version", "env", "template", "lint", "verify"):
		return ""
	case in(verb, "repo", "dependency", "dep", "plugin") && len(ops) > 1 && in(ops[1].text, "list", "ls"):
		return ""
	case in(verb, "uninstall", "delete", "del", "un", "rollback"):
		j.danger("helm " + verb + " removes or rolls back a release")
		return ""
	}
	return "helm " + verb + " changes the cluster"
}

// helmFullOutput reports whether -o/--output asks for json or yaml, which
// for helm status is the whole release.
func helmFullOutput(args []arg) bool {
	opts, _ := helmSpec.parseArgs(args)
	for _, o := range opts {
		if o.is('o', "output") && !in(o.value.text, "table") {
			return true
		}
	}
	return false
}

// unescapePath undoes %XX escapes, as the API server does: %73ecrets is secrets.
func unescapePath(p string) string {
	if u, err := url.PathUnescape(p); err == nil {
		return u
	}
	return p
}

func terraformCheck(j *judge, c *cmd, _ []opt, _ []arg) string {
	args := c.args
	for len(args) > 0 && strings.HasPrefix(args[0].text, "-chdir") {
		args = args[1:]
	}
	if len(args) == 0 {
		return c.name + " with no command"
	}
	verb := args[0].text
	switch {
	case verb == "destroy":
		j.danger(c.name + " destroy tears down infrastructure")
		return ""
	case verb == "apply":
		for _, a := range args[1:] {
			if a.text == "-destroy" || a.text == "--destroy" {
				j.danger(c.name + " apply -destroy tears down infrastructure")
				return ""
			}
		}
	case in(verb, "output", "show"):
		for _, a := range args[1:] {
			if in(a.text, "-json", "--json", "-raw", "--raw") {
				j.danger(c.name + " " + verb + " " + a.text + " prints sensitive values")
				return ""
			}
		}
		return ""
	case verb == "providers" && len(args) > 1 && in(args[1].text, "lock", "mirror"):
		return c.name + " providers " + args[1].text + " downloads providers and writes files"
	case verb == "providers" && len(args) > 1 && args[1].text != "schema" && !strings.HasPrefix(args[1].text, "-"):
		return c.name + " providers " + args[1].text + " is not a look"
	case in(verb, "version", "providers", "graph", "validate", "-version", "--version"):
		return ""
	case verb == "fmt":
		for _, a := range args[1:] {
			if in(a.text, "-check", "--check", "-write=false", "--write=false") {
				return ""
			}
		}
		return c.name + " fmt rewrites files"
	case in(verb, "state", "workspace") && len(args) > 1 && in(args[1].text, "list", "show"):
		return ""
	}
	return c.name + " " + verb + " changes infrastructure"
}
