package shell

import (
	"fmt"
	"strings"
)

// Verb paths: the one shape in which a reader row says which of its
// subcommands are looks (ceph osd tree, ceph osd pool ls, nvme list). A
// command whose leading operands do not follow a path to its end is not a
// look, and when the word that left the paths is a destructive verb
// (delete, rm, stop...) it is a danger: ceph osd pool delete.

// verbTree is a compiled set of verb paths. Build it once, with
// mustVerbs, when the reader table is built.
type verbTree struct {
	bare bool // no verb at all is a look (timedatectl alone prints status)
	root *verbNode
}

// verbNode is one word position. end marks the end of a path: the words
// after it are the verb's own operands (names, keys), which are free.
type verbNode struct {
	next  map[string]*verbNode
	wild  []wildVerb // patterns ending in "*": ls-by-*
	end   bool
	group string // the words that lead here, for reasons and generated checks
}

type wildVerb struct {
	prefix string
	node   *verbNode
}

// mustVerbs compiles a spec: paths separated by ", ", words by spaces,
// alternatives by "|", a trailing "*" for any word with that prefix, and a
// leading "(none)" when the command alone is a look. A malformed spec is a
// programming error, caught when the table is built (commandTable
// recovers it into an error).
func mustVerbs(spec string) *verbTree {
	t := &verbTree{root: &verbNode{}}
	spec = strings.TrimSpace(spec)
	if rest, ok := strings.CutPrefix(spec, "(none)"); ok {
		t.bare, spec = true, strings.TrimSpace(rest)
	}
	for _, path := range strings.Split(spec, ",") {
		words := strings.Fields(path)
		if len(words) == 0 {
			panic(fmt.Sprintf("verb spec %q has an empty path", spec))
		}
		nodes := []*verbNode{t.root}
		for k, w := range words {
			var next []*verbNode
			for _, n := range nodes {
				for _, alt := range strings.Split(w, "|") {
					if alt == "" {
						panic(fmt.Sprintf("verb spec %q has an empty alternative", spec))
					}
					next = append(next, n.child(alt, k == len(words)-1))
				}
			}
			nodes = next
		}
	}
	return t
}

// child returns the node for word under n, making it when missing.
func (n *verbNode) child(word string, end bool) *verbNode {
	group := strings.TrimSpace(n.group + " " + strings.TrimSuffix(word, "*"))
	var c *verbNode
	if p, ok := strings.CutSuffix(word, "*"); ok {
		for _, w := range n.wild {
			if w.prefix == p {
				c = w.node
			}
		}
		if c == nil {
			c = &verbNode{group: group}
			n.wild = append(n.wild, wildVerb{prefix: p, node: c})
		}
	} else {
		if n.next == nil {
			n.next = map[string]*verbNode{}
		}
		if c = n.next[word]; c == nil {
			c = &verbNode{group: group}
			n.next[word] = c
		}
	}
	c.end = c.end || end
	return c
}

// find returns the child of n that word leads to, or nil.
func (n *verbNode) find(word string) *verbNode {
	if c := n.next[word]; c != nil {
		return c
	}
	for _, w := range n.wild {
		if strings.HasPrefix(word, w.prefix) {
			return w.node
		}
	}
	return nil
}

// groups calls f with the words of every node that has verbs below it
// (the root's are ""): the generated refusals add destructive verbs there.
func (t *verbTree) groups(f func(group string)) {
	var walk func(n *verbNode)
	walk = func(n *verbNode) {
		if len(n.next) == 0 && len(n.wild) == 0 {
			return
		}
		f(n.group)
		for _, c := range n.next {
			walk(c)
		}
	}
	walk(t.root)
}

// verbResult is what a command line's leading operands are.
type verbResult uint8

const (
	verbLook      verbResult = iota // a path followed to its end
	verbOther                       // a word off the paths, or a path left unfinished
	verbRunTime                     // a word on the path is computed at run time
	verbDangerous                   // the word off the paths is a destructive verb
)

// check follows the operands along the paths. It returns the verdict and
// the words read so far, the offending one last.
func (t *verbTree) check(operands []arg) (verbResult, string) {
	n := t.root
	var said strings.Builder
	for i := 0; ; i++ {
		// A verb's own operands are free (ceph osd pool get rbd size),
		// except after a verb that also leads to longer paths (ceph
		// health, ceph health detail): then only those may follow.
		if n.end && (i == len(operands) || len(n.next) == 0 && len(n.wild) == 0) {
			return verbLook, said.String()
		}
		if i == len(operands) {
			if i == 0 && t.bare {
				return verbLook, ""
			}
			return verbOther, said.String()
		}
		op := operands[i]
		if said.Len() > 0 {
			said.WriteByte(' ')
		}
		said.WriteString(op.text)
		if op.dynamic {
			return verbRunTime, said.String()
		}
		next := n.find(op.text)
		if next == nil {
			// On a row that says what its looks are, a verb that writes
			// (ceph osd set noout) is a change as surely as delete is.
			if destructiveVerb(op.text) || rowWriteVerbs[strings.ToLower(op.text)] {
				return verbDangerous, said.String()
			}
			return verbOther, said.String()
		}
		n = next
	}
}

// judgeVerbs applies a reader's verb paths to its operands and records
// why the command is not a look; it reports whether it is one.
func (j *judge) judgeVerbs(c *cmd, t *verbTree, operands []arg) bool {
	res, said := t.check(operands)
	switch res {
	case verbLook:
		return true
	case verbRunTime:
		j.runTime(c.shown + " " + said + ": the command's verb is built at run time, so what it does cannot be read")
	case verbDangerous:
		j.danger(c.shown + " " + said + " " + effDestructiveVerb)
	default:
		if said == "" {
			j.unknown(c.shown + " with no command is not a look")
		} else {
			j.unknown(c.shown + " " + said + " is not a look")
		}
	}
	return false
}

// effDestructiveVerb is the one reason the verb lexicon gives.
const effDestructiveVerb = "names a destructive verb or a change (delete, remove, stop, set...), so it destroys or changes what it names"

// destructiveVerbs is the lexicon of mechanism 3 (issue 16): leading
// subcommand words that destroy, stop, remove or reset. Looks (get, list,
// describe, show, status, ls) are never here.
var destructiveVerbs = map[string]bool{
	"delete": true, "del": true, "rm": true, "rmi": true, "remove": true, "purge": true, "drop": true, "destroy": true,
	"erase": true, "wipe": true, "kill": true, "stop": true, "shutdown": true, "halt": true, "poweroff": true,
	"reboot": true, "restart": true, "terminate": true, "uninstall": true, "reset": true, "truncate": true,
	"flush": true, "flushall": true, "flushdb": true, "format": true, "revoke": true, "disable": true,
	"detach": true, "evict": true, "drain": true, "cordon": true, "prune": true, "deregister": true,
	"unregister": true, "teardown": true, "decommission": true, "zap": true, "nuke": true, "rmdir": true,
	"force-stop": true, "force-reload": true, "force-leave": true, "leave": true, "deactivate": true,
	"undeploy": true, "unmount": true, "umount": true, "down": true, "scrub": true,
	"repair": true, "out": true, "lost": true, "rollback": true, "revert": true, "demote": true, "fail": true,
	"failover": true, "abort": true, "cancel": true, "suspend": true, "pause": true, "freeze": true,
	"expire": true, "invalidate": true, "obliterate": true, "shred": true, "clear": true, "unset": true,
	"retire": true, "offline": true, "takeover": true, "reinstall": true, "reimage": true, "reinit": true,
	"recreate": true, "replace": true, "overwrite": true, "set-password": true, "passwd": true,
}

// rowWriteVerbs change what a verb row's CLI manages; off the row's
// paths they are dangers, not merely "not a look". Too common in other
// words to be in the lexicon for CLIs with no row.
var rowWriteVerbs = map[string]bool{"set": true, "unset": true, "rename": true, "reweight": true, "create": true,
	"add": true, "apply": true, "patch": true, "edit": true, "update": true, "put": true, "write": true, "import": true,
	"export": true, "move": true, "mv": true, "exec": true, "run": true, "tell": true, "injectargs": true, "enable": true,
	"mark": true, "in": true, "config-key": true, "auth": true, "join": true, "promote": true, "upgrade": true,
	"resize": true, "rollback": true, "restore": true, "snapshot": true, "compact": true, "defrag": true, "lease": true}

// lookVerbs end the search for a destructive verb: the words after them
// are what they look at.
var lookVerbs = map[string]bool{"get": true, "list": true, "ls": true, "describe": true, "show": true, "status": true,
	"info": true, "logs": true, "log": true, "view": true, "inspect": true, "version": true, "help": true, "search": true,
	"find": true, "query": true, "cat": true, "print": true, "explain": true, "diff": true, "top": true, "tail": true}

// destructiveAffixes spell the same verbs inside a compound word:
// delete-bucket, vol-delete, force-remove.
var destructiveAffixes = []string{"delete", "remove", "destroy", "terminate", "purge", "drop", "wipe", "erase",
	"kill", "stop", "shutdown", "reboot", "restart", "uninstall", "truncate", "flush", "revoke", "deregister", "reset", "evict", "drain", "prune"}

// destructiveVerb reports whether a subcommand word is in the lexicon,
// alone or as a part of a word joined by - or _ (delete-bucket,
// vol_delete), in any case.
func destructiveVerb(w string) bool {
	if w == "" || w[0] == '-' || strings.ContainsAny(w, "/=.:@$") {
		return false
	}
	low := strings.ToLower(w)
	if destructiveVerbs[low] || destructiveVerbs[strings.TrimSuffix(low, "all")] && len(low) > 5 && strings.HasSuffix(low, "all") {
		return true // stopall, deleteall
	}
	if !strings.ContainsAny(low, "-_") {
		return false
	}
	for _, part := range strings.FieldsFunc(low, func(r rune) bool { return r == '-' || r == '_' }) {
		for _, a := range destructiveAffixes {
			if part == a {
				return true
			}
		}
	}
	return false
}

// destructiveOption reports whether an unknown CLI's option names a
// destructive verb: kafka-topics --delete, tool --purge, --force-delete.
func destructiveOption(args []arg) string {
	for _, a := range args {
		t := a.text
		if a.dynamic || !strings.HasPrefix(t, "--") || len(t) < 4 {
			continue
		}
		name, _, _ := strings.Cut(t[2:], "=")
		if destructiveVerb(name) && !in(name, "out", "down", "clear", "cancel", "fail", "set-password", "passwd", "format") {
			return t
		}
	}
	return ""
}

// leadingVerb returns the first word in the lexicon among a command's
// leading subcommand words (the operands before its first option, at most
// four), or "".
func leadingVerb(args []arg) string {
	for i, a := range args {
		if i == 4 || strings.HasPrefix(a.text, "-") {
			return ""
		}
		if lookVerbs[strings.ToLower(a.text)] {
			return "" // what follows a look is what it looks at: get stop-words
		}
		if !a.dynamic && destructiveVerb(a.text) {
			return a.text
		}
	}
	return ""
}
