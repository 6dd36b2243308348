package shell

import (
	"path"
	"strings"
)

// Absurd commands (SPEC §2 rule 1): whatever the LLM or the operator says,
// these never run. Each check here is also a danger check for the milder
// forms of the same command.

// protectedDirs are the top-level directories whose recursive removal,
// chmod or chown breaks the machine. /lib, /lib32, /lib64... match by prefix.
var protectedDirs = map[string]bool{
	"home": true, "root": true, "etc": true, "usr": true, "var": true, "bin": true,
	"sbin": true, "boot": true, "opt": true, "srv": true, "sys": true, "proc": true,
	"dev": true, "mnt": true, "media": true, "snap": true, "run": true, "nix": true,
	"Users": true, "System": true, "Library": true, "Applications": true,
}

// homeMark stands for the user's home directory while paths are cleaned:
// ~/.. cleans to /home, which is protected too.
const homeMark = "/home/\x00"

// protectedTarget reports why removing (or chmod -R of) target would wreck
// the system, or ok=false when it would not. cwd is where a literal cd went.
// A target is protected when it is /, a home directory, or a top-level
// system directory, followed only by wildcard components (/home/*, ~/*).
func protectedTarget(target, cwd string) (why string, ok bool) {
	p := target
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		p = homeMark + p[1:]
	case strings.HasPrefix(p, "~"):
		user, rest, _ := strings.Cut(p[1:], "/")
		if user == "root" {
			p = "/root/" + rest
		} else {
			p = "/home/" + user + "/" + rest
		}
	case !strings.HasPrefix(p, "/"):
		if p = joinPath(cwd, p); p == "" {
			return "", false
		}
		return protectedTarget(p, "")
	}
	p = path.Clean(p)
	if p == "/" {
		return " would delete the whole system", true
	}
	comps := strings.Split(p[1:], "/")
	if strings.HasPrefix(p+"/", homeMark+"/") {
		if allGlob(comps[2:]) {
			return " would delete the home directory", true
		}
		return "", false
	}
	first := comps[0]
	if hasGlobMeta(first) {
		return " would delete the whole system", true
	}
	if (protectedDirs[first] || strings.HasPrefix(first, "lib")) && allGlob(comps[1:]) {
		return " would break the system", true
	}
	return "", false
}

// allGlob reports whether every path component is a pattern (*, .*, ?x).
func allGlob(comps []string) bool {
	for _, c := range comps {
		if !hasGlobMeta(c) {
			return false
		}
	}
	return true
}

func hasGlobMeta(s string) bool { return strings.ContainsAny(s, "*?[") }

// isRawDisk reports whether p names a whole disk or a partition, by any
// name Linux gives it: /dev/sda, /dev/sdaa1, /dev/xvdba, /dev/nvme0n1p2
// (and the controller /dev/nvme0), /dev/mmcblk0, /dev/disk2, the
// device-mapper and LVM paths (/dev/mapper/vg-root, /dev/dm-0,
// /dev/vg0/root), the by-id/by-uuid/by-path links, md, loop, nbd, rbd,
// zvol, bcache, drbd and pmem devices. Not /dev/null, /dev/sda-volume or
// the device directories that hold no disks (/dev/pts, /dev/shm, ...).
func isRawDisk(p string) bool {
	rest, ok := strings.CutPrefix(path.Clean(p), "/dev/")
	if !ok {
		return false
	}
	if m, ok := strings.CutPrefix(rest, "mapper/"); ok {
		return m != "" && m != "control"
	}
	for _, pre := range []string{"disk/by-", "block/", "md/", "zvol/", "vx/dsk/", "ceph-", "drbd/", "nbd"} {
		if strings.HasPrefix(rest, pre) && len(rest) > len(pre) {
			return true
		}
	}
	if dir, lv, two := strings.Cut(rest, "/"); two {
		// /dev/VG/LV: LVM names each logical volume under its group.
		return !strings.Contains(lv, "/") && lv != "" && !nonDiskDirs[dir]
	}
	for _, pre := range []string{"xvd", "sd", "hd", "vd"} {
		if r, ok := strings.CutPrefix(rest, pre); ok {
			letters := 0
			for letters < len(r) && r[letters] >= 'a' && r[letters] <= 'z' {
				letters++
			}
			return letters >= 1 && letters <= 3 && (letters == len(r) || isDigits(r[letters:]))
		}
	}
	if r, ok := strings.CutPrefix(rest, "nvme"); ok {
		return numbered(r, "n", "p") || numbered(r, "c", "n", "p")
	}
	if r, ok := strings.CutPrefix(rest, "mmcblk"); ok {
		return numbered(r, "p") || numbered(r, "boot") || numbered(r, "rpmb")
	}
	for _, pre := range []string{"rdisk", "disk"} {
		if r, ok := strings.CutPrefix(rest, pre); ok {
			return numbered(r, "s")
		}
	}
	for _, pre := range []string{"md", "dm-", "loop", "rbd", "zd", "bcache", "drbd", "pmem", "sr", "ubd", "nbd", "vd", "sg", "st", "mtdblock", "ng"} {
		if r, ok := strings.CutPrefix(rest, pre); ok && r != "" {
			return numbered(r, "p", "n") || numbered(r, "n") || numbered(r, "p")
		}
	}
	return rest == "root"
}

// nonDiskDirs are the directories under /dev that hold no block devices.
var nonDiskDirs = map[string]bool{"pts": true, "shm": true, "fd": true, "net": true, "input": true, "snd": true,
	"bus": true, "char": true, "cpu": true, "dri": true, "hugepages": true, "mqueue": true, "usb": true,
	"serial": true, "v4l": true, "vfio": true, "hidraw": true, "tty": true, "console": true, "stdin": true,
	"stdout": true, "stderr": true, "tcp": true, "udp": true}

// numbered matches digits, then optionally each separator followed by
// digits, in order: numbered("0n1p2", "n", "p").
func numbered(s string, seps ...string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return false
	}
	s = s[i:]
	for _, sep := range seps {
		if s == "" {
			return true
		}
		r, ok := strings.CutPrefix(s, sep)
		if !ok {
			return false
		}
		i = 0
		for i < len(r) && r[i] >= '0' && r[i] <= '9' {
			i++
		}
		if i == 0 {
			return false
		}
		s = r[i:]
	}
	return s == ""
}

var rmSpec = mustSpec("")

// rm: recursive removal of a protected directory is absurd; recursive or
// wildcard removal, and removal of . / .. / a source directory, is a danger;
// deleting a named file is a plain write.
func rm(j *judge, c *cmd) {
	opts, ops := rmSpec.parseInto(j, c.args)
	recursive := false
	for _, o := range opts {
		switch {
		case o.is('r', "recursive"), o.is('R', ""):
			recursive = true
		case o.long == "help" || o.long == "version":
			j.unknown("rm " + o.String())
			return
		}
	}
	if len(ops) == 0 {
		j.unknown("rm with nothing to delete")
		return
	}
	for _, op := range ops {
		target := j.resolve(op)
		why, protected := protectedTarget(target, j.cwd)
		switch {
		case protected && recursive:
			j.absurd("rm -r of " + op.text + why)
		case protected:
			j.danger("rm of " + op.text + " targets a system directory")
		case recursive:
			j.danger("recursive delete of " + op.text)
		case op.glob || hasGlobMeta(target) && op.dynamic:
			j.danger("wildcard delete of " + op.text)
		case isDotDir(target):
			j.danger("rm of " + op.text + " deletes the working directory")
		case sourceDirs[path.Base(target)]:
			j.danger("rm of " + op.text + " deletes a source directory")
		default:
			j.unknown("deletes " + op.text)
		}
	}
}

// isDotDir reports whether p is ., .. or made only of them (../..).
func isDotDir(p string) bool {
	c := path.Clean(p)
	return c == "." || c == ".." || strings.Trim(c, "./") == "" && c != "/"
}

// sourceDirs are directory names whose removal loses work.
var sourceDirs = map[string]bool{
	".git": true, "src": true, "lib": true, "app": true, "pkg": true, "cmd": true,
	"internal": true, "include": true, "config": true, ".github": true,
}

// resolve substitutes a variable assigned a literal earlier in the script:
// X=/; rm -rf $X.
func (j *judge) resolve(a arg) string {
	if !a.dynamic || len(j.vars) == 0 && len(j.refs) == 0 || !strings.ContainsRune(a.text, '$') {
		return a.text
	}
	if v, ok := j.expandVars(a.text); ok {
		return v
	}
	return a.text
}

// expandVars replaces every $NAME and ${NAME} in text with the value a
// literal assignment gave it (c=r; c+=m; $c, R=/; ${R}x). It fails when
// any other expansion is left ($(…), ${x:-y}, a variable never assigned).
func (j *judge) expandVars(text string) (string, bool) { return j.expand(text, false) }

// expand is expandVars; with once set, only variables assigned once in
// the script are put in, so that a value set in one branch is not taken
// for the value.
func (j *judge) expand(text string, once bool) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != '$' {
			if strings.HasPrefix(text[i:], "…") {
				return "", false
			}
			b.WriteByte(c)
			continue
		}
		rest := text[i+1:]
		var name string
		if strings.HasPrefix(rest, "{") {
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				return "", false
			}
			name = rest[1:end]
			i += end + 1
		} else {
			n := 0
			for n < len(rest) && isWordByte(rest[n]) {
				n++
			}
			if n > 0 && rest[0] >= '0' && rest[0] <= '9' {
				n = 1 // $12 is ${1}2
			}
			name = rest[:n]
			i += n
		}
		if len(j.refs) > 0 {
			name = j.deref(name)
		}
		v, ok := j.vars[name]
		if name == "" || !ok || once && j.sets[name] != 1 {
			return "", false
		}
		b.WriteString(v)
	}
	return b.String(), true
}

// isMkfs reports whether name formats a file system: mkfs, mkfs.ext4, mke2fs...
func isMkfs(name string) bool {
	switch name {
	case "mkfs", "mke2fs", "mkswap", "mkntfs", "mkdosfs", "mkexfatfs", "mkfs.btrfs":
		return true
	}
	fs, ok := strings.CutPrefix(name, "mkfs.")
	if !ok || fs == "" {
		return false
	}
	for i := 0; i < len(fs); i++ {
		if c := fs[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// mkfsSpec holds the options of the mkfs family that take a value.
var mkfsSpec = mustSpec("-L -b -C -d -E -e -G -g -I -i -J -l -m -M -N -o -O -r -t -T -U -z --label --type")

// mkfs on a disk erases it: absurd, unless -n (dry run) or -V asks only to
// look, which is still confirmed.
func mkfs(j *judge, c *cmd) {
	opts, ops := mkfsSpec.parseInto(j, c.args)
	dry := false
	for _, o := range opts {
		dry = dry || o.is('n', "") || o.is('V', "") || o.long == "help" || o.long == "version"
	}
	// A disk given as the value of an option that takes a number (mkfs.vfat
	// -I is a flag, mkfs.ext4 -I takes a size) is the device after all;
	// a label, a UUID or a directory is not.
	for _, o := range opts {
		if o.hasValue && isRawDisk(o.value.text) && !o.is('L', "label") && !o.is('U', "") && !o.is('M', "") && !o.is('d', "") {
			ops = append(ops, o.value)
		}
	}
	for _, op := range ops {
		// mkfs of a device named at run time ($DEV, /dev/$X) could be any
		// disk: blocked as one (mkfs has no other use).
		if isRawDisk(j.resolve(op)) || op.dynamic && couldBeDevice(j.resolve(op)) {
			if dry {
				j.danger(c.name + " on " + op.text + " formats a disk")
			} else {
				j.absurd(c.name + " on " + op.text + " would erase the disk")
			}
			return
		}
	}
	target := "a file system"
	if len(ops) > 0 {
		target = ops[0].text
	}
	j.danger(c.name + " formats " + target)
}

// dd onto a disk is absurd; any other dd is a danger.
func dd(j *judge, c *cmd) {
	for _, a := range c.args {
		// of=/dev/$X could be a disk: blocked; of=$X could be a file: a danger.
		if of, ok := strings.CutPrefix(j.resolve(a), "of="); ok && (isRawDisk(of) || a.dynamic && strings.HasPrefix(of, "/dev/")) {
			j.absurd("dd onto " + a.text[3:] + " would destroy the disk")
			return
		}
	}
	j.danger("dd writes raw data")
}

// diskWriter builds the handler of a command that destroys what it is
// given (shred, wipefs, blkdiscard): absurd on a disk, else a danger.
func diskWriter(verb string) handler {
	return func(j *judge, c *cmd) {
		_, ops := rmSpec.parseInto(j, c.args)
		for _, op := range ops {
			if isRawDisk(op.text) {
				j.absurd(c.name + " of " + op.text + " would destroy the disk")
				return
			}
		}
		what := "files"
		if len(ops) > 0 {
			what = ops[0].text
		}
		j.danger(c.name + " " + verb + " " + what)
	}
}

var cpSpec = mustSpec("-t -S --target-directory --suffix --backup --sparse --reflink --preserve --no-preserve")

// cp onto a disk is absurd; any other copy is a plain write.
func cp(j *judge, c *cmd) {
	opts, ops := cpSpec.parseInto(j, c.args)
	for _, o := range opts {
		if o.is('t', "target-directory") && isRawDisk(o.value.text) {
			j.absurd("cp onto " + o.value.text + " would destroy the disk")
			return
		}
	}
	if len(ops) > 0 && isRawDisk(ops[len(ops)-1].text) {
		j.absurd("cp onto " + ops[len(ops)-1].text + " would destroy the disk")
		return
	}
	j.unknown(c.name + " writes files")
}

// mv of a protected directory breaks the machine; it is confirmed, not
// blocked, since moving /home to a new disk is a real operation.
func mv(j *judge, c *cmd) {
	_, ops := cpSpec.parseInto(j, c.args)
	for i, op := range ops {
		if i == len(ops)-1 {
			break
		}
		if why, ok := protectedTarget(j.resolve(op), j.cwd); ok && !op.glob {
			j.danger("mv of " + op.text + why)
			return
		}
	}
	j.unknown(c.name + " moves files")
}

var chmodSpec = mustSpec("")

// chmod -R, chown -R, chgrp -R: absurd on a protected directory, a danger
// elsewhere; a plain chmod is a write.
func chmod(j *judge, c *cmd) {
	opts, ops := chmodSpec.parseInto(j, c.args)
	recursive, reference, dashMode := false, false, false
	for _, o := range opts {
		recursive = recursive || o.is('R', "recursive")
		reference = reference || o.long == "reference"
		// chmod -x FILE: the mode looks like an option.
		dashMode = dashMode || c.name == "chmod" && o.short != 0 && strings.IndexByte("rwxXst", o.short) >= 0
	}
	if !reference && !dashMode && len(ops) > 0 {
		ops = ops[1:] // the mode or owner
	}
	for _, op := range ops {
		if !recursive {
			break
		}
		if why, ok := protectedTarget(j.resolve(op), j.cwd); ok {
			if strings.Contains(why, "home") {
				break // chown -R me ~ is a repair, not a wreck: a danger below
			}
			j.absurd(c.name + " -R of " + op.text + strings.Replace(why, "delete", "wreck", 1))
			return
		}
	}
	if recursive {
		target := "files"
		if len(ops) > 0 {
			target = ops[0].text
		}
		j.danger("recursive " + c.name + " of " + target)
		return
	}
	for _, op := range ops {
		if why, ok := protectedTarget(j.resolve(op), j.cwd); ok && !strings.Contains(why, "home") {
			j.danger(c.name + " of " + op.text + " changes a system directory")
			return
		}
	}
	j.unknown(c.name + " changes file permissions")
}

// ruleOneUntrusted applies SPEC rule 1's disguises (issue 25, item 7) to a
// command whose name is not a system command as written (./find, a name
// held in a variable: n=find; $n / -delete), where the command's own row
// does not judge it: find of a protected tree with -delete or -exec rm,
// and any writer (tee, cp, install, sponge...) onto a raw disk.
func (j *judge) ruleOneUntrusted(name string, args []arg) {
	switch name {
	case "find":
		starts := true
		protected, deletes := "", false
		for i, a := range args {
			t := j.resolve(a)
			if starts && (strings.HasPrefix(t, "-") || t == "(" || t == "!") {
				starts = false
			}
			if starts {
				if _, ok := protectedTarget(t, j.cwd); ok && protected == "" {
					protected = t
				}
				continue
			}
			if t == "-delete" {
				deletes = true
			}
			if in(t, "-exec", "-execdir", "-ok", "-okdir") && i+1 < len(args) {
				if n, _, ok := commandName(args[i+1]); ok && in(n, "rm", "shred", "unlink", "rmdir", "truncate", "wipe", "srm") {
					deletes = true
				}
			}
		}
		if protected != "" && deletes {
			j.absurd("find " + protected + " deleting what it finds would wreck the system")
		}
	case "tee", "sponge", "cp", "install", "mv", "rsync":
		for _, a := range args {
			if t := j.resolve(a); !strings.HasPrefix(t, "-") && isRawDisk(t) && (name == "tee" || name == "sponge" || a == args[len(args)-1]) {
				j.absurd(name + " onto " + a.text + " would destroy the disk")
				return
			}
		}
	}
}
