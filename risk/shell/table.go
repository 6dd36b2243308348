package shell

import (
	"fmt"
)

// wrapperNames run another command that is judged on its own; their words
// are not checked for secrets themselves (the inner command's are).
var wrapperNames = []string{"sudo", "doas", "pkexec", "run0", "runuser", "su", "env", "timeout",
	"command", "time", "ionice", "nice", "nohup", "exec", "builtin", "stdbuf", "setsid", "taskset",
	"busybox", "xargs", "parallel", "watch", "chroot", "ssh", "script", "trap", "alias", "eval"}

// commandTable builds, once in New, the name → handler lookup (the
// readers, then the wrappers and the commands with absurd or dangerous
// forms; a name in both lists is a programming error), and the commands
// whose words touchesSecret skips: the readers, which have rules of their
// own (cat .env reads a secret, ls ~/.ssh lists one), and the wrappers,
// whose inner command is judged.
func commandTable() (_ map[string]handler, passThrough map[string]bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("bad option list in the command table: %v", r)
		}
	}()
	t := map[string]handler{}
	passThrough = map[string]bool{}
	for name, rd := range readers() {
		t[name] = rd.handle
		passThrough[name] = true
	}
	for _, name := range wrapperNames {
		passThrough[name] = true
	}
	special := map[string]handler{
		// Wrappers.
		"sudo": sudo, "doas": wrapper("-u -C", "runs commands as another user"),
		"pkexec": wrapper("--user", "runs commands as root"), "run0": sudo,
		"runuser": wrapper("-u -g -G --user --group --supp-group", "runs commands as another user"),
		"su":      su,
		"env":     env, "timeout": timeout, "command": command, "time": timeCmd, "ionice": ionice,
		"nice": wrapper("-n --adjustment", ""), "nohup": wrapper("", ""), "exec": execCmd,
		"builtin": wrapper("", ""), "stdbuf": wrapper("-i -o -e --input --output --error", ""),
		"setsid": wrapper("", ""), "taskset": taskset, "busybox": busybox,
		"xargs": xargs, "parallel": parallel, "watch": watch, "chroot": chroot,

		// Absurd on disks and system directories, dangerous elsewhere.
		"rm": rm, "dd": dd, "cp": cp, "mv": mv,
		"chmod": chmod, "chown": chmod, "chgrp": chmod,
		"shred": diskWriter("destroys"), "wipefs": diskWriter("wipes"), "blkdiscard": diskWriter("discards"),

		// Plain writes: not looks, with a reason that says what they do.
		"touch": writes("creates or touches files"), "mkdir": writes("creates directories"),
		"rmdir": writes("deletes empty directories"), "ln": writes("creates links"),
		"install": writes("copies files into place"), "unlink": writes("deletes a file"),

		// Dangers.
		// kill, reboot, truncate and the other commands that are a danger
		// whatever their arguments are rows of effects.go.
		"init": initCmd,
		"eval": eval, "source": source, ".": source,
		"trap": deferred, "alias": deferred, "ssh": ssh, "script": scriptCmd, "crontab": crontab,
		"iptables": firewall, "ip6tables": firewall, "nft": firewall,
		"java":  versioned,
		"fdisk": partitioner, "sfdisk": partitioner, "gdisk": partitioner, "sgdisk": partitioner,
		"parted": partitioner, "cfdisk": partitioner,
		"zpool": zfs, "zfs": zfs,
		"rsync": rsync, "aws": cloudCLI, "gcloud": cloudCLI, "az": cloudCLI,
		"mysqladmin": dbClient,
		"mysql":      dbClient, "mariadb": dbClient, "psql": dbClient, "sqlite3": dbClient, "redis-cli": dbClient,
		"mongo": dbClient, "mongosh": dbClient, "clickhouse-client": dbClient, "cqlsh": dbClient,
	}
	for name := range shells {
		special[name] = shell
	}
	for name := range interpreters {
		special[name] = interpreter
	}
	for name, h := range special {
		if _, dup := t[name]; dup {
			return nil, nil, fmt.Errorf("command %q is both a reader and a special command", name)
		}
		t[name] = h
	}
	return t, passThrough, nil
}
