package shell

import (
	"strings"
)

// Commands that run other commands later or elsewhere (trap, alias, ssh,
// script) and system tools with a few destructive forms.

// trap 'CMD' SIGNAL runs CMD later; alias NAME='CMD' may. Neither is a
// look, and what they would run is judged for absurd and dangerous forms.
func deferred(j *judge, c *cmd) {
	j.unknown(c.name + " sets up a command to run later")
	for _, a := range c.args {
		if strings.HasPrefix(a.text, "-") {
			continue
		}
		text := a.text
		if c.name == "alias" {
			_, text, _ = strings.Cut(text, "=")
		}
		if a.dynamic {
			j.danger(c.name + " runs a command built at run time")
		} else if text != "" {
			j.remote(func() { j.nested(text, c.depth) })
		}
		if c.name == "trap" {
			return // the rest are signal names
		}
	}
}

// remote judges commands that run somewhere the script cannot look after
// them (another host, a container, later): absurd and dangerous findings
// stand; what is merely not read-only is already said by the caller.
func (j *judge) remote(judge func()) {
	before := len(j.res.Unknown)
	judge()
	j.res.Unknown = j.res.Unknown[:before]
}

var sshSpec = mustSpec("-b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w -B")

// ssh HOST COMMAND runs COMMAND on another machine through its shell.
func ssh(j *judge, c *cmd) {
	_, rest := sshSpec.parseLeading(c.args)
	j.unknown(c.name + " runs commands on another host")
	if len(rest) > 1 {
		j.remote(func() { j.shellString(c.name, rest[1:], c.depth) })
	}
}

// script -c COMMAND runs COMMAND through a shell, recording a typescript.
func scriptCmd(j *judge, c *cmd) {
	opts, _ := mustSpec("-c -E -I -O -B -T -t -m --command --echo --log-in --log-out --log-io --log-timing --logging-format").parseArgs(c.args)
	j.unknown(c.name + " records a session to a file")
	for _, o := range opts {
		if o.is('c', "command") {
			if o.value.dynamic {
				j.danger(c.name + " -c runs a command built at run time")
				continue
			}
			j.nested(o.value.text, c.depth)
		}
	}
}

// crontab -l lists; -r deletes every job; anything else installs jobs.
func crontab(j *judge, c *cmd) {
	opts, _ := mustSpec("-u").parseArgs(c.args)
	for _, o := range opts {
		switch {
		case o.is('r', ""):
			j.danger("crontab -r deletes every cron job")
			return
		case o.is('l', ""):
			if c.trusted {
				return
			}
		}
	}
	j.unknown(c.name + " changes cron jobs")
}

// firewall: iptables -L/-S lists rules; -F, -X, -P and nft flush drop them.
func firewall(j *judge, c *cmd) {
	listing := false
	for _, a := range c.args {
		t := a.text
		switch {
		case in(t, "-F", "--flush", "-X", "--delete-chain", "-P", "--policy", "flush", "-Z", "--zero"):
			j.danger(c.name + " " + t + " drops firewall rules")
			return
		case in(t, "-L", "--list", "-S", "--list-rules", "list", "-n", "--numeric", "-v", "--verbose", "-t", "--table", "--line-numbers", "-x", "--exact", "-a", "ruleset", "tables", "table", "-w", "--wait"):
			listing = listing || in(t, "-L", "--list", "-S", "--list-rules", "list")
		case strings.HasPrefix(t, "-"):
			j.unknown(c.name + " " + t + " changes firewall rules")
			return
		}
	}
	if !listing || !c.trusted {
		j.unknown(c.name + " changes firewall rules")
	}
}

// partitioner: fdisk -l and friends list partitions; pointed at a disk
// for anything else they rewrite its partition table.
func partitioner(j *judge, c *cmd) {
	list := false
	for _, a := range c.args {
		list = list || in(a.text, "-l", "--list", "-d", "--dump", "print", "-p", "--print")
	}
	for _, a := range c.args {
		if strings.HasPrefix(a.text, "--zap") || a.text == "-Z" || a.text == "-o" {
			j.danger(c.name + " " + a.text + " wipes a partition table")
			return
		}
	}
	if list && c.trusted && (c.name == "fdisk" || c.name == "sfdisk" || c.name == "lsblk") {
		return
	}
	for _, a := range c.args {
		if isRawDisk(a.text) {
			j.danger(c.name + " " + a.text + " rewrites a partition table")
			return
		}
	}
	j.unknown(c.name + " changes partitions")
}

// rsync --delete mirrors by deleting: onto a protected directory it wipes
// the system; elsewhere it is a danger.
func rsync(j *judge, c *cmd) {
	opts, ops := mustSpec("-e -f -T --rsh --filter --exclude --include --exclude-from --include-from --files-from --temp-dir --partial-dir --backup-dir --suffix --chmod --chown --log-file --password-file --port --timeout --contimeout --bwlimit --compare-dest --copy-dest --link-dest").parseArgs(c.args)
	deletes := false
	for _, o := range opts {
		deletes = deletes || strings.HasPrefix(o.long, "del") || o.long == "remove-source-files"
	}
	if deletes && len(ops) > 1 {
		dest := ops[len(ops)-1]
		if why, ok := protectedTarget(j.resolve(dest), j.cwd); ok {
			j.absurd("rsync --delete into " + dest.text + why)
			return
		}
		j.danger("rsync --delete deletes files in " + dest.text)
		return
	}
	j.unknown(c.name + " copies files")
}

// cloudCLI: aws, gcloud, az, doctl: a subcommand that deletes, destroys or
// terminates is teardown; the rest are API calls, never a look from here.
func cloudCLI(j *judge, c *cmd) {
	for _, a := range c.args {
		t := strings.ToLower(a.text)
		if strings.HasPrefix(t, "-") {
			continue
		}
		if in(t, "delete", "destroy", "rm", "rb", "remove", "purge", "terminate") || strings.HasPrefix(t, "delete-") ||
			strings.HasPrefix(t, "terminate-") || strings.HasPrefix(t, "remove-") || strings.HasPrefix(t, "deregister") {
			j.danger(c.name + " " + a.text + " tears down cloud resources")
			return
		}
	}
	j.unknown(c.name + " calls a cloud API")
}

// execIn judges docker exec / kubectl exec: the command runs inside a
// container, where rm -rf / is still absurd.
func (j *judge) execIn(args []arg, depth int) {
	if len(args) == 0 {
		return
	}
	j.remote(func() { j.command(args, depth) })
}

// zfs destroy and zpool destroy remove data sets and pools.
func zfs(j *judge, c *cmd) {
	for _, a := range c.args {
		if in(a.text, "destroy", "labelclear") {
			j.danger(c.name + " " + a.text + " deletes storage")
			return
		}
		if in(a.text, "list", "status", "get", "iostat", "history") && c.trusted {
			return
		}
	}
	j.unknown(c.name + " changes storage")
}
