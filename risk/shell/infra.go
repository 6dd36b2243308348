package shell

import (
	"strings"
)

// System tools with a few destructive forms: cron, firewalls, partition
// tables, storage pools, rsync --delete and cloud CLIs.

var crontabSpec = mustSpec("-u")

// crontab -l lists; -r deletes every job; anything else installs jobs.
func crontab(j *judge, c *cmd) {
	opts, ops := crontabSpec.parseInto(j, c.args)
	if len(ops) > 0 && !hasOpt(opts, 'l', "") && !hasOpt(opts, 'r', "") {
		// crontab FILE, crontab -: replaces the cron jobs with the file's.
		j.danger("crontab " + ops[0].text + " " + effCron)
		return
	}
	list := false
	for _, o := range opts {
		switch {
		case o.is('r', ""):
			j.danger("crontab -r deletes every cron job")
			return
		case o.is('l', ""):
			list = true
		case !o.is('u', ""):
			list = false
			j.unknown(c.name + " " + o.String() + " changes cron jobs")
			return
		}
	}
	if list && c.trusted {
		return
	}
	j.unknown(c.name + " changes cron jobs")
}

// firewall: iptables -L/-S lists rules; -F, -X, -P and nft flush drop them.
// nft joins its words into one command line where ";" starts another
// command, so only a lone "list ..." is a look.
func firewall(j *judge, c *cmd) {
	if c.name == "nft" {
		nft(j, c)
		return
	}
	listing := false
	for _, a := range c.args {
		t := a.text
		if len(t) > 2 && t[0] == '-' && t[1] != '-' && strings.Trim(t[1:], "LSnvx") == "" {
			// -nvL: a cluster of listing letters.
			listing = listing || strings.ContainsAny(t[1:], "LS")
			continue
		}
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

// nft list ... is a look; flush and delete drop rules; the rest change them.
func nft(j *judge, c *cmd) {
	for _, a := range c.args {
		for _, w := range strings.FieldsFunc(a.text, func(r rune) bool { return r == ' ' || r == ';' || r == '\t' || r == '\n' }) {
			if in(w, "flush", "delete", "destroy", "reset") {
				j.danger(c.name + " " + w + " drops firewall rules")
				return
			}
		}
	}
	verb := ""
	for _, a := range c.args {
		t := a.text
		switch {
		case strings.ContainsAny(t, ";\n"):
			j.unknown(c.name + " " + t + " runs several nft commands, which changes firewall rules")
			return
		case verb == "" && strings.HasPrefix(t, "-"):
			if !in(t, "-n", "--numeric", "-a", "--handle", "-s", "--stateless", "-j", "--json", "-t", "--terse", "-y", "--numeric-priority", "-N", "-S", "--service", "-u", "--guid", "-T", "--numeric-time") {
				j.unknown(c.name + " " + t + " changes firewall rules")
				return
			}
		case verb == "":
			verb = t
		}
	}
	if verb != "list" || !c.trusted {
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
	if list && c.trusted && (c.name == "fdisk" || c.name == "sfdisk") && onlyListing(c.args) {
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

// onlyListing reports whether every option of fdisk/sfdisk is one that
// lists: sfdisk -d /dev/sda --delete /dev/sda 1 is not a look.
func onlyListing(args []arg) bool {
	for _, a := range args {
		t := a.text
		if a.dynamic {
			return false
		}
		if strings.HasPrefix(t, "-") && !in(t, "-l", "--list", "-d", "--dump", "-x", "--list-details", "-J", "--json",
			"-F", "--list-free", "-s", "--show-size", "-V", "--verify", "-u", "-q", "--quiet", "--color", "-L", "-n", "--no-act") {
			return false
		}
	}
	return true
}

var rsyncSpec = mustSpec("-e -f -T --rsh --filter --exclude --include --exclude-from --include-from --files-from --temp-dir --partial-dir --backup-dir --suffix --chmod --chown --log-file --password-file --port --timeout --contimeout --bwlimit --compare-dest --copy-dest --link-dest")

// rsync --delete mirrors by deleting: onto a protected directory it wipes
// the system; elsewhere it is a danger.
func rsync(j *judge, c *cmd) {
	opts, ops := rsyncSpec.parseInto(j, c.args)
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

// zfs destroy and zpool destroy remove data sets and pools. The verb is the
// first word that is not an option: zpool create -f list /dev/sdb makes a
// pool called list.
func zfs(j *judge, c *cmd) {
	for _, a := range c.args {
		if in(a.text, "destroy", "labelclear") {
			j.danger(c.name + " " + a.text + " deletes storage")
			return
		}
	}
	for _, a := range c.args {
		if strings.HasPrefix(a.text, "-") && !a.dynamic {
			continue
		}
		if in(a.text, "list", "status", "get", "iostat", "history") && c.trusted {
			return
		}
		break
	}
	j.unknown(c.name + " changes storage")
}
