package shell

import (
	"cmp"
	"path"
	"strings"
)

// handler judges one command and records its findings on the judge.
type handler func(j *judge, c *cmd)

// check is a reader's extra argument rule. It returns why the command is
// not read-only, or "" when it is; it may record a danger on j itself.
type check func(j *judge, c *cmd, opts []opt, operands []arg) string

// reader describes a command that only looks, and the argument rules that
// keep it that way (SPEC §2 rule 6). A command used outside its rules is not
// read-only; it is not dangerous for that alone.
type reader struct {
	opts        optSpec // options that take a value
	deny        optSpec // options that make it write, run a program or change state
	denyWhy     string  // what a denied option does: "writes a file"
	maxOperands int     // most operands it may have and stay a reader; -1 for any
	content     bool    // operands are files whose content it prints: secrets are checked
	paths       pathUse // what it does with paths among its operands: sensitive ones are checked
	// secretOpts are options whose value is a file the command reads and
	// shows back, at least in its error messages (date -f, wc
	// --files0-from): a secret there is read like an operand. Each must also
	// be in opts, so that a separate value is taken as the option's.
	secretOpts optSpec
	pattern    bool // the first operand is a pattern or program, unless -e/-f gave one
	// raw is set when check reads the raw words itself (git, kubectl...): then
	// any word computed at run time makes the command not read-only.
	raw bool
	// stops is set when the command reads options only up to its first
	// operand (awk's program, printf's format): a word computed at run time
	// after that cannot be an option.
	stops bool
	// mild is set when the denied options do not write or run anything
	// (ping -f floods): a word computed at run time is then still a look.
	mild  bool
	check check // an extra rule, nil when the options and operands say all
	// verbs are the subcommand paths that are looks (ceph osd tree): the
	// leading operands must follow one to its end (verbs.go). nil when
	// the command has no subcommands, or check reads them itself.
	verbs *verbTree
	// groups name, for a raw reader whose check reads its subcommands
	// itself (docker, kubectl, git), its command groups: the generated
	// refusals add destructive verbs after each, as they do after the
	// groups of verbs.
	groups []string
	// accept and refuse are samples the table test runs: each accept
	// must come out read-only, each refuse must not.
	accept, refuse []string
}

// withVerbs sets the verb paths of a reader (see mustVerbs).
func (rd reader) withVerbs(spec string) reader { rd.verbs = mustVerbs(spec); return rd }

// samples sets what the table test runs: looks to accept, forms to refuse.
func (rd reader) samples(accept []string, refuse ...string) reader {
	rd.accept, rd.refuse = accept, refuse
	return rd
}

// withGroups names a raw reader's command groups for the generated refusals.
func (rd reader) withGroups(groups ...string) reader { rd.groups = groups; return rd }

// r is a shorthand for table entries: value-taking options, denied options.
func r(opts, deny, why string) reader {
	return reader{opts: mustSpec(opts), deny: mustSpec(deny), denyWhy: why, maxOperands: -1}
}

// anyArgs is a reader with no option that writes.
func anyArgs() reader { return reader{maxOperands: -1} }

// files is a reader that prints the content of its operands.
func files(opts string) reader {
	return reader{opts: mustSpec(opts), maxOperands: -1, content: true}
}

// noOperands is a reader that takes options only.
func noOperands(opts, deny, why string) reader {
	rd := r(opts, deny, why)
	rd.maxOperands = 0
	return rd
}

func (rd reader) withCheck(f func(j *judge, c *cmd, opts []opt, operands []arg) string) reader {
	rd.check = f
	return rd
}

// withRaw is withCheck for a check that reads c.args itself.
func (rd reader) withRaw(f func(j *judge, c *cmd, opts []opt, operands []arg) string) reader {
	rd.check, rd.raw = f, true
	return rd
}

func (rd reader) withMax(n int) reader { rd.maxOperands = n; return rd }

// stops marks a reader whose options end at its first operand.
func stops(rd reader) reader { rd.stops = true; return rd }

func (rd reader) withPattern() reader { rd.pattern = true; rd.content = true; return rd }

func (rd reader) withContent() reader { rd.content = true; return rd }

// pathUse says what a reader that does not print content does with the
// paths among its operands (or, without any, the current directory).
type pathUse uint8

const (
	noPaths   pathUse = iota
	describes         // stat, file: a sensitive operand is a danger
	lists             // ls, tree, du, find: so is a directory that holds secrets
)

func (rd reader) with(u pathUse) reader { rd.paths = u; return rd }

// withSecretOpts names the options whose value is a file that is read.
func (rd reader) withSecretOpts(spec string) reader { rd.secretOpts = mustSpec(spec); return rd }

// readers is the whitelist: what an on-call engineer runs all day to look.
// Left out on purpose: pagers and editors (less, more, vim, man: they run
// commands), curl and wget (HTTP belongs to http_request, and both write
// files), watch (never ends), anything that needs a terminal.
func readers() map[string]reader {
	rows := baseReaders()
	for name, rd := range tailReaders() {
		if _, dup := rows[name]; dup {
			panic("reader " + name + " is in two tables")
		}
		rows[name] = rd
	}
	return rows
}

// baseReaders are the rows of rounds one to three; tailReaders
// (observability.go) adds the long tail.
func baseReaders() map[string]reader {
	ping := r("-c -i -I -s -t -W -w -p -Q -l -M -m", "-f", "floods the network")
	ping.mild = true
	// grep's --color[=WHEN] and diff's --color, --context[=N] and
	// --unified[=N] take a value only after "=": listed as valued, grep
	// --color password .env would hide .env as the pattern.
	grep := r("-e -f -m -A -B -C -d -D --regexp --file --max-count --after-context --before-context --context --label --include --exclude --exclude-dir --exclude-from --binary-files --devices --directories", "", "").withPattern().withSecretOpts("-f --file --exclude-from")
	sum := r("", "", "")
	// LVM reports take a --config override, which can point LVM at other
	// devices but not write; --select and -o only filter.
	lvmReport := r("-o -O -S --options --sort --select --units --separator --config --reportformat", "", "")
	// --files0-from=F reads file names from F and echoes each bad one back.
	files0 := r("--files0-from", "", "").withSecretOpts("--files0-from")
	return map[string]reader{
		// Files and text.
		"cat": files(""), "tac": files(""), "nl": files("-b -d -f -h -i -l -n -s -v -w"),
		"head": files("-n -c --lines --bytes"), "tail": files("-n -c -s --lines --bytes --pid --sleep-interval --max-unchanged-stats"),
		"grep": grep, "egrep": grep, "fgrep": grep, "zgrep": grep,
		"zcat": files(""), "bzcat": files(""), "xzcat": files(""),
		"rg": r("-e -f -g -t -T -m -A -B -C -j -M -E --regexp --file --glob --iglob --type --type-not --max-count --after-context --before-context --context --threads --max-columns --encoding --sort --sortr --color --colors --max-depth --max-filesize --type-add --ignore-file --replace -r", "--pre --pre-glob -z --search-zip --hostname-bin", "runs other programs on the files").withPattern().withSecretOpts("-f --file --ignore-file"),
		"wc": files0, "ls": anyArgs().with(lists), "stat": anyArgs().with(describes), "du": files0.with(lists), "df": anyArgs(),
		"file": r("-m -e -F -P -f --magic-file --exclude --separator --parameter --files-from", "-C --compile", "writes a compiled magic file").withSecretOpts("-m --magic-file -f --files-from").with(describes),
		"tree": r("-L -P -I -H -T --charset --filelimit --timefmt --sort", "-o -R --fromfile", "writes output files or lists what a file says").with(lists),
		"cut":  files("-b -c -d -f --bytes --characters --delimiter --fields --output-delimiter"),
		"tr":   anyArgs(), "column": files("-c -s -o -N -R -E -H -W -n -r -l"),
		"sort": r("-k -t -S -T --key --field-separator --buffer-size --temporary-directory --parallel --batch-size --files0-from --sort --random-source", "-o --output --compress-program", "writes a file or runs a program").withContent().withSecretOpts("--files0-from"),
		"uniq": r("-f -s -w --skip-fields --skip-chars --check-chars", "", "").withContent().withMax(1),
		"diff": files("-C -U -I -F -L -x -X -W --ignore-matching-lines --label --exclude --exclude-from --width --show-function-line --from-file --to-file --palette --tabsize --line-format --new-line-format --old-line-format --unchanged-line-format --horizon-lines").withSecretOpts("--from-file --to-file -X --exclude-from"),
		"cmp":  files("-i -n --ignore-initial --bytes"), "comm": files(""),
		"rev": files(""), "fold": files("-w --width"), "fmt": files("-w -p -g --width --prefix --goal"),
		"paste": files("-d --delimiters"), "join": files("-a -e -j -o -t -v -1 -2"),
		"expand": files("-t --tabs"), "unexpand": files("-t --tabs"),
		"strings": files("-n -t -e -T --bytes --radix --encoding --target"),
		"xxd":     files("-c -g -l -o -s -n").withMax(1),
		"hexdump": files("-e -f -n -s").withSecretOpts("-f"), "od": files("-A -j -N -t -w --address-radix --skip-bytes --read-bytes --format --width"),
		"base64": r("-w --wrap", "-o --output", "writes a file").withContent(),
		"base32": files("-w --wrap"),
		"md5sum": sum, "sha1sum": sum, "sha224sum": sum, "sha256sum": sum, "sha384sum": sum, "sha512sum": sum, "b2sum": sum, "cksum": sum, "sum": sum,
		// --rawfile NAME FILE and --slurpfile NAME FILE take two words; left
		// out of the valued options, FILE counts as an input and is checked.
		"jq":  r("--arg --argjson --indent -L", "", "").withPattern(),
		"yq":  r("--arg --indent -I -o -p --output-format --input-format --expression", "-i --inplace --split-exp -s --from-file", "writes files or reads its expression from a file").withPattern().withCheck(yqCheck),
		"sed": r("-e -f -l --expression --file --line-length", "-i --in-place", "edits files in place").withPattern().withCheck(sedCheck),
		"awk": awkReader(), "gawk": awkReader(), "mawk": awkReader(), "nawk": awkReader(),
		"find":   anyArgs().withRaw(findCheck),
		"numfmt": anyArgs(), "seq": anyArgs(), "expr": anyArgs(), "factor": anyArgs(),
		"basename": anyArgs(), "dirname": anyArgs(), "realpath": anyArgs(), "readlink": anyArgs(), "pwd": anyArgs(),
		"echo": anyArgs(), "printf": stops(r("", "-v", "assigns a variable")), "true": anyArgs(), "false": anyArgs(), ":": anyArgs(),
		"test": anyArgs().withCheck(testCheck), "[": anyArgs().withCheck(testCheck), "sleep": anyArgs(),
		"tee": anyArgs().withCheck(teeCheck),

		// Shell builtins that change nothing outside the shell.
		"cd": anyArgs().withCheck(cdCheck), "pushd": anyArgs().withCheck(cdCheck), "popd": anyArgs().withCheck(forgetCwd), "dirs": anyArgs(),
		"exit": anyArgs(), "return": anyArgs(), "break": anyArgs(), "continue": anyArgs(), "shift": anyArgs(),
		"set": anyArgs().withRaw(setCheck), "wait": r("", "-p", "assigns a variable"), "type": anyArgs(), "hash": noOperands("", "-p -d -r", "changes the command table"),
		"ulimit": anyArgs().withCheck(ulimitCheck), "umask": noOperands("", "", ""), "jobs": r("", "-x", "runs a command"),

		// Who and where.
		"which": anyArgs(), "whereis": anyArgs(), "id": anyArgs(), "whoami": anyArgs(), "groups": anyArgs(),
		"uname": anyArgs(), "arch": anyArgs(), "nproc": anyArgs(), "getconf": anyArgs(), "locale": anyArgs(),
		"tty": anyArgs(), "logname": anyArgs(), "hostid": anyArgs(), "users": anyArgs(), "printenv": anyArgs(),
		"hostname": noOperands("", "-F --file -b --boot", "sets the host name"),
		"date":     r("-d -f -r -I --date --file --reference --iso-8601 --rfc-3339", "-s --set", "sets the clock").withCheck(dateCheck).withSecretOpts("-f --file"),
		"cal":      anyArgs(),
		"timedatectl": r("-H -M --host --machine -p --property", "", "").withVerbs("(none) status, show, list-timezones, timesync-status, show-timesync").
			samples([]string{"timedatectl", "timedatectl status", "timedatectl show -p NTP"}, "timedatectl set-time 12:00", "timedatectl set-ntp false", "timedatectl set-timezone UTC"),
		"hostnamectl": r("-H -M --host --machine", "", "").withVerbs("(none) status").
			samples([]string{"hostnamectl", "hostnamectl status"}, "hostnamectl set-hostname x", "hostnamectl hostname x"),

		// System state.
		"uptime": anyArgs(), "free": anyArgs(), "ps": r("-o -p -u -U -g -G -t -C -O -q -s --sort --format --pid --ppid --user --group --cols --columns --rows --lines --width", "", "").withCheck(psCheck), "pgrep": anyArgs(), "pidof": anyArgs(),
		"top":    r("-d -n -p -u -U -o -w -E -e -O", "", "").withCheck(topCheck),
		"vmstat": anyArgs(), "iostat": anyArgs(), "mpstat": anyArgs(), "pidstat": r("", "-e", "runs a program"),
		"sar":  r("-f -e -s -i -P -n -I -q -m -o", "-o", "writes a data file"),
		"lsof": anyArgs(), "netstat": anyArgs(), "lscpu": anyArgs(), "lsblk": anyArgs(), "blkid": r("-c -o -s -t -L -U -n -u -O -S", "-g --garbage-collect", "cleans the device cache"),
		"findmnt": anyArgs(), "lsmod": anyArgs(), "lspci": anyArgs(), "lsusb": anyArgs(), "lsns": anyArgs(),
		"last": anyArgs(), "lastlog": noOperands("-b -t -u --before --time --user", "-C -S --clear --set", "changes the lastlog"),
		"w": anyArgs(), "who": anyArgs(), "loginctl": r("-H -M -p -n -o --host --machine --property --lines --output", "", "").withVerbs("(none) list-sessions, list-users, list-seats, show-session, show-user, show-seat, session-status, user-status, seat-status").
			samples([]string{"loginctl list-sessions", "loginctl show-user root -p State"}, "loginctl terminate-session 3", "loginctl kill-user bob", "loginctl lock-sessions"),
		"ss":       r("-f -A -N -F --family --query --socket --net --filter", "-K --kill -D --diag", "kills sockets or writes a dump file"),
		"ip":       anyArgs().withRaw(ipCheck).withGroups("link", "addr", "route", "neigh", "rule", "netns", "-br addr"),
		"ifconfig": r("", "", "").withMax(1).withCheck(ifconfigCheck),
		"ping":     ping, "ping6": ping, "traceroute": anyArgs(), "tracepath": anyArgs(), "mtr": r("", "", "").withCheck(mtrCheck),
		"dig": r("-f -k -b -c -p -q -t -x -y", "", "").withSecretOpts("-f -k").withCheck(zoneTransfer), "host": r("-t -c -N -R -W -m", "-l", "asks for a zone transfer").withCheck(zoneTransfer), "nslookup": anyArgs().withCheck(zoneTransfer),
		"drill": r("-k -o -p -q -s -t -x -y -r -I", "", "").withCheck(zoneTransfer), "kdig": anyArgs().withCheck(zoneTransfer), "delv": anyArgs().withCheck(zoneTransfer), "getent": anyArgs().withCheck(getentCheck), "whois": anyArgs(),
		"dmesg": r("-f -l -F -s --facility --level --file --buffer-size --time-format", "-C --clear -c --read-clear -D --console-off -E --console-on -n --console-level", "changes the kernel log").withSecretOpts("-F --file"),
		"journalctl": r("-u -t -p -n -S -U -b -o -g -D -M -F -c --unit --user-unit --identifier --priority --lines --since --until --boot --output --grep --directory --machine --field --file --cursor --after-cursor --namespace --facility --output-fields --root --image",
			"--vacuum-size --vacuum-time --vacuum-files --rotate --flush --sync --relinquish-var --smart-relinquish-var --setup-keys --update-catalog --cursor-file", "changes the journal"),
		"systemctl":      r("-t -p -n -o -H -M -s --type --state --property --lines --output --host --machine --signal --kill-whom --what --root", "", "").withRaw(systemctlCheck),
		"service":        anyArgs().withRaw(serviceCheck).withGroups("nginx"),
		"sysctl":         r("-p --load", "-w --write -p --load --system -f", "changes kernel settings").withCheck(sysctlCheck),
		"mount":          noOperands("-t -O --types --test-opts", "", "").withCheck(mountCheck),
		"docker":         anyArgs().withRaw(dockerCheck).withGroups("", "container", "image", "volume", "network", "system", "node", "service", "stack", "compose", "plugin", "secret", "config", "context", "buildx", "manifest", "swarm", "trust"),
		"podman":         anyArgs().withRaw(dockerCheck).withGroups("", "container", "image", "volume", "network", "system", "pod", "machine", "secret"),
		"docker-compose": anyArgs().withRaw(composeCheck).withGroups(""),
		"kubectl":        anyArgs().withRaw(kubectlCheck).withGroups("", "config", "auth", "rollout", "certificate", "plugin", "-n prod"),
		"oc":             anyArgs().withRaw(kubectlCheck).withGroups("", "config", "auth", "rollout", "adm", "project"),
		"helm":           anyArgs().withRaw(helmCheck).withGroups("", "repo", "plugin", "registry"),
		"git":            anyArgs().withRaw(gitCheck).withGroups("", "remote", "stash", "submodule", "worktree", "notes", "reflog", "config", "lfs", "branch", "tag", "bisect", "sparse-checkout"),
		"terraform":      anyArgs().withRaw(terraformCheck).withGroups("", "state", "workspace", "providers"),

		// looks.go.
		"read":    r("-a -d -i -n -N -p -t -u", "", "").withCheck(readCheck),
		"mapfile": r("-d -n -O -s -u -C -c", "-C", "runs a callback").withCheck(readCheck), "readarray": r("-d -n -O -s -u -C -c", "-C", "runs a callback").withCheck(readCheck),
		"openssl": anyArgs().withRaw(opensslCheck).withGroups("", "x509", "req", "s_client"),
		"nginx":   r("-c -g -p -e -s", "", "").withCheck(nginxCheck), "apachectl": anyArgs().withRaw(apachectlCheck).withGroups(""), "apache2ctl": anyArgs().withRaw(apachectlCheck),
		"tar":   anyArgs().withRaw(tarCheck).withGroups(""),
		"unzip": r("-d -x -P", "", "").withCheck(unzipCheck), "zipinfo": anyArgs(),
		"dpkg": r("-f --showformat --admindir --root", "", "").withCheck(packageQuery), "dpkg-query": r("-f --showformat --admindir --root", "", "").withCheck(packageQuery),
		"rpm": r("--root --dbpath --qf --queryformat", "", "").withCheck(packageQuery),
		"apt": r("-o -c -t", "", "").withCheck(packageQuery), "apt-cache": r("-o -c -t", "", "").withCheck(packageQuery),
		"pip": r("--format", "", "").withCheck(packageQuery), "pip3": r("--format", "", "").withCheck(packageQuery),
		"ufw":      anyArgs().withCheck(ufwCheck),
		"sensors":  r("-c --config-file", "-s --set", "sets chip limits"),
		"smartctl": r("-d -l -T -n --device --log --tolerance --nocheck", "", "").withCheck(smartctlCheck),
		"ipmitool": anyArgs().withRaw(ipmitoolCheck).withGroups("", "sel", "chassis", "sdr", "lan", "user", "mc", "sensor", "fru", "-I lanplus -H bmc"),
		"nc":       r("-w", "", "").withCheck(ncCheck), "netcat": r("-w", "", "").withCheck(ncCheck), "ncat": r("-w", "", "").withCheck(ncCheck),
		"bc":              files("-s -l -q -w"),
		"go":              anyArgs().withRaw(goCheck).withGroups("", "mod", "tool"),
		"ethtool":         r("", "", "").withCheck(ethtoolCheck),
		"systemd-analyze": r("--root --image --unit --from-pattern --to-pattern --fuzz --man --generators --offline --threshold --security-policy --json --iterations --base-time -H --host -M --machine", "", "").withCheck(systemdAnalyzeCheck),
		"systemd-cgls":    anyArgs(), "systemd-cgtop": r("-n -d --iterations --delay --depth -M --machine", "", "").withCheck(batchCheck),
		"crictl": r("-r -i -t --runtime-endpoint --image-endpoint --timeout --config -c --tail --since --until -o --output -s --state --name --label --pod", "", "").
			withVerbs("ps, pods, images, img, logs, inspect, inspectp, inspecti, stats, statsp, info, version, imagefsinfo").
			samples([]string{"crictl ps -a", "crictl pods", "crictl logs --tail 100 0f3a9c"}, "crictl rm -a", "crictl rmp -a", "crictl stop 0f3a9", "crictl exec -it 0f3a sh", "crictl", "crictl rmi --prune"),
		"ssh-keygen": r("-f -E -F", "", "").withCheck(sshKeygenCheck),
		"fuser":      r("", "-k --kill -i --interactive", "kills processes"),
		"pstree":     anyArgs(), "pmap": anyArgs(), "getfacl": anyArgs().with(describes), "lsattr": anyArgs().with(describes), "namei": anyArgs().with(describes),
		"lsb_release": anyArgs(), "pg_isready": anyArgs(), "pg_lsclusters": anyArgs(),
		"dmidecode": r("-t -s -H --type --string --handle --from-dump --dev-mem", "--dump-bin", "writes a file"),
		"pvs":       lvmReport, "vgs": lvmReport, "lvs": lvmReport, "pvdisplay": lvmReport, "vgdisplay": lvmReport, "lvdisplay": lvmReport,
		"iotop":           r("-n -d -p -u --iter --delay --pid --user", "", "").withCheck(batchCheck),
		"resolvectl":      r("-i --interface -p --protocol -t --type -c --class", "", "").withCheck(both(allowed("-i --interface -p --protocol -t --type -c --class --no-pager --legend", false, "status", "statistics", "query", "dns", "domain", "llmnr", "mdns", "dnssec", "dnsovertls", "nta", "default-route", "monitor", "show-cache", "show-server-state"), resolvectlCheck)),
		"systemd-resolve": r("-i --interface -p --protocol -t --type -c --class", "", "").withCheck(allowed("--status --statistics -i --interface -t --type -p --protocol -c --class --no-pager", false)),
		"swapon":          r("", "", "").withCheck(requires("--show -s --summary", allowed("--show -s --summary --bytes --noheadings --raw", false))).withMax(0),
		"slabtop":         r("-d -s --delay --sort", "", "").withCheck(requires("-o --once", allowed("-o --once -s --sort", false))),
		"lastb":           anyArgs(), "atq": anyArgs(), "runlevel": anyArgs(), "getcap": anyArgs(), "sestatus": anyArgs(), "getenforce": anyArgs(), "aa-status": anyArgs(),
		"faillog": r("-u -t --user --time", "-r --reset -l --lock-secs -m --maximum", "changes failure counts"),
		"chage":   r("", "", "").withCheck(requires("-l --list", allowed("-l --list -i --iso8601", false))),
		"chronyc": r("-h", "", "").withCheck(allowed("-n -c -a -h -4 -6 -v", false)).
			withVerbs("tracking, sources, sourcestats, activity, ntpdata, serverstats, clients, selectdata, authdata, rtcdata, smoothing, waitsync").
			samples([]string{"chronyc tracking", "chronyc sources -v"}, "chronyc makestep", "chronyc", "chronyc -m tracking makestep", "chronyc burst 4/4"),
		"ntpq":         r("", "", "").withCheck(allowed("-p -n -4 -6 -w --peers --numeric", false)).withMax(1),
		"hwclock":      r("-f --rtc", "", "").withCheck(requires("-r --show --get", allowed("-r --show --get -u --utc --localtime -f --rtc --verbose -v", false))),
		"nvidia-smi":   r("-i -f -l --id --filename --loop --loop-ms --query-gpu --query-compute-apps --format", "", "").withCheck(nvidiaSmiCheck),
		"firewall-cmd": anyArgs().withRaw(firewallCmdCheck).withGroups(""),
		"conntrack":    r("-p -s -d -f -m -o --proto --src --dst --family --mark --output", "", "").withCheck(allowed("-L --dump -C --count -S --stats -E --event -p --proto -s --src -d --dst -f --family -m --mark -o --output -n", false)),
		"tc":           anyArgs().withRaw(tcCheck).withGroups("qdisc", "class", "filter", "-s qdisc"), "bridge": anyArgs().withRaw(tcCheck).withGroups("link", "fdb", "vlan", "mdb"),
		"arp":   r("-i -H -t", "", "").withCheck(allowed("-n -a -e -v -i -H -t", false)),
		"route": r("-A", "", "").withCheck(allowed("-n -e -ee -v -A -F -C --numeric --extend --verbose", false)).withMax(0),
		"coredumpctl": r("-S -U -F --since --until --field -n", "", "").withCheck(allowed("-S -U -F --since --until --field -n -r --reverse -q --quiet --no-pager --no-legend -1 --json", false)).
			withVerbs("(none) list, info").samples([]string{"coredumpctl list", "coredumpctl info 1234"}, "coredumpctl debug", "coredumpctl dump -o core", "coredumpctl gdb"),
		"dstat": r("-C -D -I -N -S --output", "--output", "writes a file"),
		"tofu":  anyArgs().withRaw(terraformCheck),

		// Storage and hardware status (issue 11).
		"mdadm":     r("", "", "").withCheck(requires("--detail -D --examine -E --query -Q --detail-platform", allowed("--detail -D --examine -E --query -Q --detail-platform --scan -s --brief -b --verbose -v --export -Y --test -t", false))),
		"multipath": r("-v", "", "").withCheck(requires("-l", allowed("-l -v", false))).withMax(0),
		"iscsiadm":  r("-m --mode -P --print -r --sid -T --targetname -p --portal -I --interface", "", "").withCheck(requires("-m --mode", allowed("-m --mode -P --print -r --sid -T --targetname -p --portal -I --interface", false))).withMax(0),
		"nvme": r("-o --output-format -n --namespace-id -e --log-entries", "", "").withVerbs("(none) list, list-subsys, smart-log, id-ctrl, id-ns, error-log, fw-log, list-ns, show-regs, version, help, list-ctrl, effects-log, telemetry-log-show, show-topology").
			samples([]string{"nvme list", "nvme smart-log /dev/nvme0", "nvme id-ctrl /dev/nvme0 -o json"}, "nvme format /dev/nvme0n1", "nvme delete-ns /dev/nvme0 -n 1", "nvme sanitize /dev/nvme0", "nvme fw-commit /dev/nvme0"),
		"numactl":     r("", "", "").withCheck(requires("--hardware -H --show -s", allowed("--hardware -H --show -s", false))).withMax(0),
		"lvmdiskscan": anyArgs(), "pvscan": noOperands("", "--cache -a --activate", "changes LVM state"), "vgscan": noOperands("", "--mknodes --cache", "changes LVM state"),
		"lsscsi": anyArgs(), "sg_map": anyArgs(), "blockdev": r("", "--setro --setrw --setra --setfra --setbsz --flushbufs --rereadpt", "changes a block device").withCheck(requires("--getsz --getsize64 --getss --getbsz --getro --getra --report --getpbsz --getiomin --getioopt --getalignoff --getmaxsect --getsize --getfra --getdiscardzeroes", allowed("--getsz --getsize64 --getss --getbsz --getro --getra --report --getpbsz --getiomin --getioopt --getalignoff --getmaxsect --getsize --getfra --getdiscardzeroes -v", false))),
		"zdb": r("", "", "").withCheck(requires("-C", allowed("-C", false))), "arcstat": anyArgs(), "ceph": r("-f --format -c --conf --cluster -n --name --id -k --keyring --connect-timeout -m --watch-channel", "-o --out-file -i --in-file -w --watch --watch-debug --watch-info --watch-sec --watch-warn --watch-error", "writes or reads a file, or never ends").
			withVerbs("(none) status, health, df, versions, version, report, quorum_status, mon_status, features, time-sync-status, "+
				"osd tree|ls|df|stat|dump|perf|utilization|find|metadata|blocked-by|getmaxosd|lspools|versions|ok-to-stop|safe-to-destroy, "+
				"osd pool ls|get|stats|autoscale-status|get-quota, osd crush dump|tree|ls-node|class ls, osd crush rule ls|dump|list, "+
				"pg stat|dump|ls|ls-by-*|query|dump_stuck|map|dump_json, mon stat|dump|metadata|versions|count-metadata, "+
				"mgr stat|dump|services|versions|metadata, mgr module ls, fs ls|status|dump|get, mds stat|metadata, "+
				"crash ls|ls-new|info|stat, balancer status, orch ls|ps|status, orch host|device ls, log last, config dump|get|show|log, health detail").
			samples([]string{"ceph -s", "ceph status", "ceph health detail", "ceph osd tree", "ceph osd pool ls detail", "ceph osd pool get rbd size", "ceph pg dump_stuck", "ceph df detail -f json"},
				"ceph osd pool delete p p --yes-i-really-really-mean-it", "ceph osd rm 3", "ceph osd out 3", "ceph osd purge 3 --yes-i-really-mean-it",
				"ceph osd pool set rbd size 1", "ceph mon remove a", "ceph pg repair 1.2", "ceph osd", "ceph auth get client.admin", "ceph config set osd x y", "ceph fs fail cephfs"),
		"ntpstat": anyArgs(), "chronyd": r("", "", "").withCheck(requires("-v --version", allowed("-v --version", false))),
		"rndc": r("-s -p -k -c -y", "", "").withVerbs("status").samples([]string{"rndc status"}, "rndc reload", "rndc flush", "rndc stop"), "named-checkconf": r("-t", "-p -z -j", "prints or loads zones").withMax(1), "named-checkzone": r("-i -k -m -n -t -w -D -f -F -J", "-o -D -s", "writes the zone"),
		"unbound-control": r("-c -s", "", "").withVerbs("status, stats_noreset, list_stubs, list_forwards, list_local_zones, list_local_data, dump_infra, get_option").
			samples([]string{"unbound-control status", "unbound-control stats_noreset"}, "unbound-control stats", "unbound-control flush_zone x", "unbound-control stop", "unbound-control reload"),
		"systemd-detect-virt": anyArgs(), "virt-what": anyArgs(), "lshw": anyArgs(), "inxi": anyArgs(), "hwinfo": anyArgs(), "lsipc": anyArgs(), "lslocks": anyArgs(), "lsirq": anyArgs(),
		"ctr": r("-n --namespace -a --address --timeout", "", "").
			withVerbs("version, containers|c|container|images|image|i|tasks|task|t|namespaces|ns|snapshots|snapshot|content|plugins|plugin|leases ls|list|info|ps|metrics").
			samples([]string{"ctr -n k8s.io containers ls", "ctr version", "ctr -n k8s.io t ls"}, "ctr -n k8s.io task kill abc", "ctr images rm x", "ctr", "ctr -n k8s.io containers delete x", "ctr run --rm x y sh"), "nerdctl": anyArgs().withRaw(dockerCheck),
		"vault": r("", "", "").
			withVerbs("status, version, secrets list, auth list, policy list, audit list, plugin list, namespace list, operator raft list-peers, operator members").
			samples([]string{"vault status", "vault secrets list -format=json"}, "vault kv get secret/x", "vault read secret/x", "vault operator seal", "vault token create", "vault", "vault policy write p p.hcl"),
		"consul": r("", "", "").
			withVerbs("members, info, version, catalog services|nodes|datacenters, operator raft list-peers, operator autopilot state|get-config, intention list, config list, acl auth-method list").
			samples([]string{"consul members", "consul catalog services"}, "consul kv delete -recurse x", "consul leave", "consul force-leave n1", "consul kv get secret/x", "consul snapshot restore s.snap"),
		"nomad": r("", "", "").
			withVerbs("(none) status, version, job status|history|periodic, node status, alloc status|logs, server members, deployment status|list, eval status|list, operator raft list-peers, system gc-status").
			samples([]string{"nomad status", "nomad job status api", "nomad node status -verbose", "nomad alloc logs -stderr abc"}, "nomad job stop api", "nomad job run x.nomad", "nomad alloc exec abc sh", "nomad node drain -enable n1", "nomad system gc"),
		"etcdctl": r("--endpoints --cacert --cert --key --user --password --command-timeout --dial-timeout -w --write-out", "", "").withCheck(etcdctlCheck).
			withVerbs("version, check perf|datascale, member list, endpoint status|health|hashkv, alarm list, get").
			samples([]string{"etcdctl endpoint health --cluster", "etcdctl member list -w table", "etcdctl get /registry/namespaces --prefix --keys-only", "etcdctl get /service/pg/leader"}, "etcdctl get /registry/secrets --prefix --keys-only", "etcdctl del --prefix /registry/pods", "etcdctl get / --prefix", "etcdctl get /registry/secrets/default/db", "etcdctl get --from-key ''", "etcdctl get /registry --prefix --keys-only=false", "etcdctl get /a /z", "etcdctl get", "etcdctl put /x y", "etcdctl defrag", "etcdctl snapshot restore s.db", "etcdctl member remove 8e9e", "etcdctl compact 5", "etcdctl"),
	}
}

// handle judges a command against its reader entry. A reader used in a
// form that is not a look (tar czf - ~/.ssh, git add .env) is judged like
// any other command that names a secret: a danger.
func (rd *reader) handle(j *judge, c *cmd) {
	before, dangers := len(j.res.Unknown), len(j.res.Danger)
	rd.judgeArgs(j, c)
	if len(j.res.Unknown) > before {
		j.touchesSecret(append([]arg{{text: c.shown}}, c.args...))
		// ip link delete, tc qdisc del: a raw reader's subcommand off its
		// looks that is a destructive verb is a danger, as it is for a CLI
		// with no row (verbs.go); unless a rule already said why.
		if rd.raw && len(j.res.Danger) == dangers && !j.hadEffect {
			if v := leadingVerb(c.args); v != "" {
				j.danger(c.shown + " " + v + " " + effDestructiveVerb)
			}
		}
	}
}

// judgeArgs applies the reader's argument rules.
func (rd *reader) judgeArgs(j *judge, c *cmd) {
	if !c.trusted {
		j.unknown("unknown command " + c.shown)
		return
	}
	// A word computed at run time may split into options (sort $X, with
	// X="-o out"): where an option could write, that is not a look.
	// An unresolved word only withholds read-only status: the option and
	// verb checks below still run on every other word, so git branch -D
	// "$OLD" and kubectl drain "$NODE" are still dangers (issue 11).
	unresolved := ""
	guarded := rd.raw || len(rd.deny.short)+len(rd.deny.long) > 0 && !rd.mild
	operandSeen := false
	for _, a := range c.args {
		// No option can follow; for kubectl and the other raw readers a
		// word after -- is still read as a resource (kubectl get -- $x).
		if operandSeen && rd.stops || a.text == "--" && !a.dynamic && (!rd.raw || c.name == "git") {
			break
		}
		if a.dynamic && guarded && unresolved == "" {
			unresolved = "cannot tell what " + a.text + " expands to in " + c.name
		}
		// sed -n 1p *.log with a file named -i.log edits in place: a
		// pattern that can expand to a word starting with "-" is an option
		// the rules never saw.
		if guarded && a.glob && strings.ContainsRune("*?[@!+", rune(a.text[0])) && unresolved == "" {
			unresolved = a.text + " could match a file named like an option of " + c.name + " (write ./" + a.text + ")"
		}
		operandSeen = operandSeen || !strings.HasPrefix(a.text, "-")
	}
	if unresolved != "" {
		defer j.unknown(unresolved)
	}
	if rd.raw || len(rd.groups) > 0 {
		if v, ok := leadingVerbWord(c.args); ok && v.dynamic {
			j.runTime(c.shown + " " + v.text + ": the command's verb is built at run time, so what it does cannot be read")
		}
	}
	opts, operands := rd.opts.parseInto(j, c.args)
	for _, o := range opts {
		if rd.deny.has(o) {
			j.unknown(c.name + " " + o.String() + " " + rd.denyWhy)
			return
		}
		if o.hasValue && rd.secretOpts.has(o) {
			j.secret(c.name+" "+o.String(), o.value)
		}
		// An option whose value is optional in the real tool (date -I,
		// journalctl -b) may not have taken the next word: a value that is
		// itself a denied option is judged as one.
		if o.hasValue && o.value.isOption() {
			vo, _ := rd.opts.parseArgs([]arg{o.value})
			for _, v := range vo {
				if rd.deny.has(v) {
					j.unknown(c.name + " " + v.String() + " " + rd.denyWhy)
					return
				}
			}
		}
	}
	if rd.maxOperands >= 0 && len(operands) > rd.maxOperands {
		if rd.content {
			// uniq IN OUT, xxd IN OUT: the operand past the inputs is written.
			j.unknown(c.name + " " + operands[rd.maxOperands].text + " is an output file")
		} else {
			j.unknown(c.name + " " + operands[rd.maxOperands].text + " is not a look")
		}
		return
	}
	if rd.verbs != nil && !j.judgeVerbs(c, rd.verbs, operands) {
		return
	}
	if rd.content {
		files := operands
		if rd.pattern && len(files) > 0 && !hasOpt(opts, 'e', "regexp") && !hasOpt(opts, 'e', "expression") &&
			!hasOpt(opts, 'f', "file") && !hasOpt(opts, 0, "from-file") {
			files = files[1:]
		}
		if c.name == "rg" || hasOpt(opts, 'r', "recursive") || hasOpt(opts, 'R', "dereference-recursive") {
			j.recursiveInto(c.name+" -r", files)
		}
		for _, f := range files {
			j.secret(c.name, f)
		}
	}
	if rd.paths != noPaths {
		j.listed(c.name, operands, rd.paths)
	}
	if rd.check != nil {
		if why := rd.check(j, c, opts, operands); why != "" {
			j.unknown(why)
		}
	}
}

// secret records a danger when a reader points at a sensitive path.
// A variable assigned earlier (f=.env; cat $f) is looked through, and a
// relative path is also tried from the directory a cd moved to.
func (j *judge) secret(name string, f arg) {
	p := j.resolve(f)
	if f.dynamic && p == f.text {
		if items, ok := j.loopItems(f.text); ok {
			for _, it := range items {
				j.secret(name, it)
			}
			return
		}
		if j.maybeSecret(f.text) {
			// cat ~/.ssh/$KEY: the variable could be anything there.
			j.danger(name + " " + f.text + " may read a secret (part of the path is computed at run time)")
			return
		}
		j.unseenContent = true
		return // a value nobody can know here; see the package doc
	}
	if j.isSecret(p) || f.glob && j.globSecret(p) {
		j.danger(name + " " + f.text + " reads a secret")
		return
	}
	if isRawDisk(p) || in(p, "/dev/mem", "/dev/kmem", "/dev/port", "/proc/kcore") || strings.HasPrefix(p, "/proc/") && strings.HasSuffix(p, "/mem") {
		// strings /dev/sda1 | grep root: every file on it, past permissions.
		j.danger(name + " " + f.text + " reads raw disk or memory, which holds every secret on it")
		return
	}
	if full := joinPath(j.cwd, p); full != "" && full != p && j.isSecret(full) {
		j.danger(name + " " + f.text + " reads a secret")
	}
}

// listed records a danger when a reader lists or describes a sensitive
// path, as the file tool's list and stat of it are (SPEC §2 rule 4); a
// lister (ls .aws, find ~/.ssh) also when the directory holds secrets,
// since it shows their names. With no operand the reader looks at the
// directory a cd moved to.
func (j *judge) listed(name string, operands []arg, use pathUse) {
	if len(operands) == 0 {
		if j.cwd != "" {
			j.listedPath(name, arg{text: "."}, use)
		}
		return
	}
	for _, f := range operands {
		j.listedPath(name, f, use)
	}
}

// listedPath judges one path a reader lists or describes. A pattern is
// judged as written (ls ~/.ssh/* is inside .ssh), not by the secrets it
// might match: a listing shows names, and ls /etc/* must stay a look.
func (j *judge) listedPath(name string, f arg, use pathUse) {
	p := j.resolve(f)
	if f.dynamic && p == f.text {
		return // a value nobody can know here; see the package doc
	}
	for _, cand := range [2]string{p, joinPath(j.cwd, p)} {
		if cand == "" {
			continue
		}
		var secret bool
		if use == lists {
			_, secret = j.a.secrets.MatchDir(cand) // MatchDir includes Match
			secret = secret || shellSecret(cand)
		} else {
			secret = j.isSecret(cand)
		}
		if !secret {
			continue
		}
		if use == lists && holdsSecrets(cand) {
			j.danger(name + " " + f.text + " lists a directory that holds secrets")
		} else {
			j.danger(name + " " + f.text + " looks at a secret")
		}
		return
	}
}

// holdsSecrets reports whether a sensitive path p names a directory that
// holds secrets (.ssh, ~/.aws/, a cd's "."), rather than a secret file.
func holdsSecrets(p string) bool {
	if strings.HasSuffix(p, "/") || strings.HasSuffix(p, "/.") {
		return true
	}
	return in(p[strings.LastIndexByte(p, '/')+1:], dirCandidates...)
}

// isSecret reports whether p is a sensitive path: the configured patterns,
// and the shell's own list (secrets.go), which includes a process
// environment (/proc/PID/environ), where the bot's own tokens live even
// though the shell's environment is scrubbed.
func (j *judge) isSecret(p string) bool {
	if _, ok := j.a.secrets.Match(p); ok {
		return true
	}
	return shellSecret(p)
}

// psCheck: BSD-style e (ps auxe, ps eww) prints every process's
// environment, where the bot's tokens live.
func psCheck(j *judge, c *cmd, opts []opt, operands []arg) string {
	for _, o := range operands {
		if t := o.text; t != "" && strings.IndexByte(t, 'e') >= 0 && strings.Trim(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") == "" {
			j.danger("ps " + t + " prints the environment of other processes, which holds secrets")
			return ""
		}
	}
	return ""
}

func teeCheck(j *judge, c *cmd, opts []opt, operands []arg) string {
	for _, f := range operands {
		if t, ok := f.lit(); ok && harmlessSinks[t] {
			continue
		}
		j.output(f, "tee")
	}
	return ""
}

// cdCheck follows a literal cd or pushd. From a directory that is not
// known (where the script starts, or after cd $X) a relative cd is kept
// relative: cd .aws && cat credentials reads .aws/credentials wherever
// .aws is, and a relative directory never makes an rm target protected.
func cdCheck(j *judge, c *cmd, opts []opt, operands []arg) string {
	switch {
	case len(operands) == 0 && c.name == "cd":
		j.cwd = "~"
	case len(operands) == 0:
		j.cwd = "" // pushd with no operand swaps the top two directories
	case operands[0].dynamic && !operands[0].glob:
		// cd /proc/$PPID && cat environ: a directory under /proc stays
		// known as /proc/*, so what is read there is still judged.
		p := j.resolve(operands[0])
		if p != operands[0].text { // a variable assigned a literal
			j.cwd = cmp.Or(joinPath(j.cwd, p), p)
			break
		}
		w := wildPath(p)
		if !strings.HasPrefix(w, "/") && strings.HasPrefix(j.cwd, "/proc") {
			w = j.cwd + "/" + w
		}
		j.cwd = ""
		if w == "/proc" || strings.HasPrefix(w, "/proc/") {
			j.cwd = path.Clean(w)
		}
	case operands[0].dynamic || operands[0].glob || operands[0].text == "-":
		j.cwd = ""
	case j.cwd == "":
		j.cwd = operands[0].text
	default:
		j.cwd = joinPath(j.cwd, operands[0].text)
	}
	return ""
}

// forgetCwd: after popd the directory is no longer known.
func forgetCwd(j *judge, c *cmd, opts []opt, operands []arg) string {
	j.cwd = ""
	return ""
}

func dateCheck(j *judge, c *cmd, opts []opt, operands []arg) string {
	for _, o := range operands {
		if !strings.HasPrefix(o.text, "+") {
			return "date " + o.text + " sets the clock"
		}
	}
	return ""
}

func topCheck(j *judge, c *cmd, opts []opt, operands []arg) string {
	if !hasOpt(opts, 'b', "") {
		return "top without -b needs a terminal"
	}
	return ""
}

func mtrCheck(j *judge, c *cmd, opts []opt, operands []arg) string {
	if !hasOpt(opts, 'r', "report") && !hasOpt(opts, 'w', "report-wide") && !hasOpt(opts, 'j', "json") {
		return "mtr without --report needs a terminal"
	}
	return ""
}

func ifconfigCheck(j *judge, c *cmd, opts []opt, operands []arg) string {
	for _, o := range opts {
		if !o.is('a', "") && !o.is('s', "") && !o.is('v', "") {
			return "ifconfig " + o.String() + " is not a look"
		}
	}
	return ""
}

func sysctlCheck(j *judge, c *cmd, opts []opt, operands []arg) string {
	for _, o := range operands {
		if strings.Contains(o.text, "=") {
			return "sysctl " + o.text + " changes a kernel setting"
		}
	}
	return ""
}

func mountCheck(j *judge, c *cmd, opts []opt, operands []arg) string {
	for _, o := range opts {
		if !o.is('l', "") && !o.is('t', "types") && !o.is('O', "test-opts") && !o.is('h', "help") && !o.is('V', "version") {
			return "mount " + o.String() + " is not a look"
		}
	}
	return ""
}

// ipCheck allows ip [OPTIONS] OBJECT [show|list|get] on the objects that
// can only be listed that way. ip has its own single-dash long options
// (-brief, -batch), so it is parsed here rather than by parseArgs.
func ipCheck(j *judge, c *cmd, opts []opt, operands []arg) string {
	args := c.args
	for len(args) > 0 && strings.HasPrefix(args[0].text, "-") {
		switch strings.TrimPrefix(args[0].text, "-") {
		case "4", "6", "0", "B", "M", "s", "stats", "statistics", "d", "details", "r", "resolve",
			"o", "oneline", "br", "brief", "c", "color", "j", "json", "p", "pretty", "h", "human",
			"human-readable", "iec", "t", "timestamp", "ts", "tshort", "a", "all":
		case "n", "netns", "f", "family", "l", "loops", "rc", "rcvbuf":
			args = args[1:] // the value
		default:
			return "ip " + args[0].text + " is not a look"
		}
		if len(args) > 0 {
			args = args[1:]
		}
	}
	if len(args) == 0 {
		return ""
	}
	obj := args[0].text
	switch obj {
	case "address", "addr", "a", "link", "l", "route", "r", "ro", "neigh", "n", "neighbour", "neighbor",
		"rule", "ru", "maddress", "maddr", "m", "netns", "tunnel", "tun", "ntable", "netconf", "mroute",
		"tuntap", "vrf", "nexthop", "nh", "xfrm":
	case "monitor", "mo":
		return ""
	default:
		return "ip " + obj + " is not a look"
	}
	if len(args) == 1 {
		return ""
	}
	// ip matches commands by prefix, in an order of its own: ip link s is
	// ip link set. Only unambiguous listing words are looks.
	switch v := args[1].text; {
	case in(v, "show", "sh", "list", "lst", "get", "help"):
		return ""
	case v == "s" && in(obj, "address", "addr", "a", "route", "r", "ro", "neigh", "n", "neighbour", "neighbor", "rule", "ru"):
		return "" // these objects check show before any other command starting with s
	default:
		return "ip " + obj + " " + args[1].text + " changes the network"
	}
}

// joinPath resolves p against dir ("" when unknown) for rm targets after cd.
func joinPath(dir, p string) string {
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") {
		return p
	}
	if dir == "" {
		return ""
	}
	return dir + "/" + p
}

// jq, yq, test, set, ulimit and getent: small rules of their own.

// yqCheck: yq's load operators read any file named in the expression.
func yqCheck(j *judge, c *cmd, opts []opt, operands []arg) string {
	exprs := operands
	for _, o := range opts {
		if o.is(0, "expression") {
			exprs = append(exprs, o.value)
		}
	}
	for _, e := range exprs {
		if strings.Contains(e.text, "load") {
			return "yq " + e.text + " loads another file"
		}
	}
	return ""
}

// testCheck: test -v 'a[$(cmd)]' evaluates the subscript, which runs cmd.
func testCheck(j *judge, c *cmd, opts []opt, operands []arg) string {
	for i, a := range c.args {
		if (a.text == "-v" || a.text == "-R") && i+1 < len(c.args) && strings.ContainsAny(c.args[i+1].text, "[`$") {
			return c.name + " -v " + c.args[i+1].text + " evaluates an array subscript, which can run code"
		}
	}
	return ""
}

// setShort are the letters of set options that change nothing outside the
// shell and no later command's meaning. Left out: -k (assignments after
// a command name go to its environment: set -k; ls LD_PRELOAD=x), -a
// (every later assignment is exported, ${LD_PRELOAD:=x} too), -H, -T, -p.
const setShort = "bBCeEfhmnuvxt"

var setLong = []string{"braceexpand", "errexit", "errtrace", "hashall", "monitor", "noclobber",
	"noexec", "noglob", "nounset", "pipefail", "verbose", "xtrace", "notify", "onecmd", "ignoreeof", "nolog"}

// setCheck: set -e, set -o pipefail, set -- a b change the shell's own state
// only; set -k and unknown options are not looks.
func setCheck(j *judge, c *cmd, opts []opt, operands []arg) string {
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		t := a.text
		if t == "--" || t == "-" {
			return ""
		}
		if a.dynamic {
			return "cannot tell what " + t + " sets"
		}
		if len(t) < 2 || t[0] != '-' && t[0] != '+' {
			return "" // positional parameters follow
		}
		for k := 1; k < len(t); k++ {
			switch {
			case t[k] == 'o':
				// set -euo pipefail: the next word names the option; set -o
				// alone lists them.
				if i+1 < len(c.args) {
					i++
					if !in(c.args[i].text, setLong...) {
						return "set " + t + " " + c.args[i].text + " changes how the shell runs commands"
					}
				}
			case strings.IndexByte(setShort, t[k]) < 0:
				return "set " + t + " changes how the shell runs commands"
			}
		}
	}
	return ""
}

// ulimitCheck: limits are numbers; any other operand may be evaluated.
func ulimitCheck(j *judge, c *cmd, opts []opt, operands []arg) string {
	for _, o := range operands {
		if !isDigits(o.text) && !in(o.text, "unlimited", "hard", "soft") {
			return "ulimit " + o.text + " is not a number"
		}
	}
	return ""
}

// getentCheck: the shadow databases hold password hashes.
func getentCheck(j *judge, c *cmd, opts []opt, operands []arg) string {
	for _, o := range operands {
		if in(o.text, "shadow", "gshadow") {
			j.danger("getent " + o.text + " prints password hashes")
			return ""
		}
	}
	return ""
}

// globalValued are the global options of the raw readers (kubectl, git,
// docker, helm...) that take the next word as their value.
var globalValued = map[string]bool{"-n": true, "--namespace": true, "--context": true, "--cluster": true,
	"--kubeconfig": true, "-C": true, "-c": true, "--git-dir": true, "--work-tree": true, "-H": true, "--host": true,
	"--config": true, "-f": true, "--file": true, "-p": true, "--project-name": true, "--project-directory": true,
	"--env-file": true, "--profile": true, "-s": true, "--server": true, "--user": true, "--as": true,
	"--kube-context": true, "--namespace-id": true, "--root": true, "-M": true, "--machine": true, "-chdir": true}

// leadingVerbWord returns the first word of a raw reader's command line
// that is neither an option nor a global option's value: its verb.
func leadingVerbWord(args []arg) (arg, bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.text == "--" && !a.dynamic {
			return arg{}, false
		}
		if a.isOption() {
			if globalValued[a.text] {
				i++
			}
			continue
		}
		return a, true
	}
	return arg{}, false
}
