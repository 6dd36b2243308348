package shell

import (
	"encoding/json"
	"strings"
)

// Commands carried to another machine, container or namespace are
// commands (issue 16, mechanism 4): docker|podman|nerdctl exec|run,
// kubectl exec|debug|run, crictl exec, ctr run|task exec, nsenter,
// unshare, chroot, ssh, and the cloud CLIs' remote-run verbs. The carried
// command is judged as if it ran here (rm -rf / is as absurd in a
// container); the vehicle is judged too: a privileged container, the
// host's PID, IPC or mount namespace, a host directory mounted in, or
// added capabilities are privilege, and a shell with no script on the far
// side (docker exec -it api sh, ssh host) is a danger, since whatever is
// typed there is never seen.

// effPrivilegedVehicle and effBlindShell are the reasons, one per effect.
const (
	effPrivilegedVehicle = "runs with the host's privileges (privileged, host namespaces, host mounts or added capabilities)"
	effBlindShell        = "opens a shell with no script on the far side: what is typed there is never judged"
	effOtherEnv          = "prints another process's or container's environment, which holds its secrets"
)

// containerRunSpec are the options of docker|podman|nerdctl run, create
// and exec that take a value.
var containerRunSpec = mustSpec("-e -u -w -v -p -l -h -m -c -a --env --env-file --user --workdir --detach-keys --name " +
	"--network --net --entrypoint --volume --publish --mount --platform --cpus --memory --restart --label --hostname " +
	"--add-host --cap-add --cap-drop --device --pid --ipc --uts --userns --security-opt --tmpfs --log-driver --log-opt " +
	"--health-cmd --health-interval --health-retries --health-timeout --ulimit --dns --dns-search --ip --ip6 --gpus " +
	"--shm-size --stop-signal --stop-timeout --cgroupns --runtime --pull --label-file --cidfile --volumes-from --link " +
	"--expose --network-alias --mac-address --memory-swap --memory-reservation --cpuset-cpus --cpu-shares --blkio-weight " +
	"--oom-score-adj --sysctl --annotation --group-add --cgroup-parent --attach --device-cgroup-rule --isolation --kernel-memory " +
	"--pids-limit --storage-opt --volume-driver --init-path --mount-propagation --cpu-period --cpu-quota --env-host --secret " +
	"--pod --arch --os --variant --hooks-dir --rootfs --systemd --image-volume --tz --chrootdirs --personality --timeout")

// The option specs of the vehicles, built once.
var (
	crictlGlobal = mustSpec("-r -i -t --runtime-endpoint --image-endpoint --timeout --config -c")
	crictlExec   = mustSpec("--timeout")
	ctrGlobal    = mustSpec("-n --namespace -a --address --timeout")
	ctrExec      = mustSpec("--exec-id --cwd --user -u --fifo-dir --log-uri")
	ctrRun       = mustSpec("--mount --env --env-file --label --runtime --cwd --user -u --with-ns --cap-add --snapshotter --platform --cni")
	unshareSpec  = mustSpec("--propagation --setgroups --map-user --map-group --setuid --setgid --root --wd -S -G -R -w --kill-child --monotonic --boottime --map-users --map-groups")
	nsenterSpec  = mustSpec("-t --target -S --setuid -G --setgid -r --root -w --wd --env -Z")
	nspawnSpec   = mustSpec("-D -i -M -u -E --directory --image --machine --user --setenv --bind --bind-ro --chdir --network-interface --private-users")
	composeSpec  = mustSpec("-f -p --file --project-name --project-directory --env-file --profile --ansi --parallel --progress")
	composeRun   = mustSpec("-e -u -w -l -p -v --env --user --workdir --label --publish --volume --name --entrypoint --index")
)

// vehicleNames are the programs vehicle knows; vehicleVerbs, for those
// with subcommands, the words one of which must be on the line for it to
// carry a command (a cheap test before the options are parsed).
var (
	vehicleNames = map[string]bool{"docker": true, "podman": true, "nerdctl": true, "kubectl": true, "oc": true,
		"crictl": true, "ctr": true, "nsenter": true, "unshare": true, "aws": true, "gcloud": true, "az": true,
		"docker-compose": true, "podman-compose": true, "lxc": true, "incus": true, "vagrant": true, "multipass": true,
		"machinectl": true, "systemd-nspawn": true, "nomad": true}
	vehicleVerbs = map[string][]string{
		"docker": {"run", "create", "exec", "inspect"}, "podman": {"run", "create", "exec", "inspect"},
		"nerdctl": {"run", "create", "exec", "inspect"}, "kubectl": {"exec", "debug", "run", "attach"},
		"oc": {"exec", "debug", "run", "attach", "rsh"}, "crictl": {"exec"}, "ctr": {"exec", "run"},
		"docker-compose": {"exec", "run"}, "podman-compose": {"exec", "run"}, "lxc": {"exec", "shell"}, "incus": {"exec", "shell"},
		"vagrant": {"ssh"}, "multipass": {"exec", "shell"}, "machinectl": {"shell", "login"}, "nomad": {"exec"},
		"aws": {"send-command", "start-session", "execute-command", "ssh"}, "gcloud": {"ssh"},
		"az": {"run-command", "exec", "invoke", "ssh"},
	}
)

// hostDirs are host paths whose mount into a container gives it the host.
var hostDirs = []string{"/", "/etc", "/root", "/home", "/var", "/var/lib", "/var/run", "/run", "/proc", "/sys",
	"/dev", "/boot", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/opt", "/srv"}

// hostMount reports whether a -v/--volume/--mount value mounts a host
// directory that gives the container the host, or the container
// runtime's socket.
func hostMount(v string) bool {
	src := v
	if strings.Contains(v, "source=") || strings.Contains(v, "src=") || strings.Contains(v, "type=") {
		src = ""
		for _, kv := range strings.Split(v, ",") {
			k, val, _ := strings.Cut(kv, "=")
			if k == "source" || k == "src" {
				src = val
			}
		}
	} else {
		src, _, _ = strings.Cut(v, ":")
	}
	if src == "" {
		return false
	}
	if strings.HasSuffix(src, ".sock") || strings.Contains(src, "docker.sock") || strings.Contains(src, "containerd.sock") {
		return true
	}
	clean := strings.TrimSuffix(src, "/")
	if clean == "" {
		clean = "/"
	}
	return in(clean, hostDirs...) || strings.HasPrefix(clean, "/etc/") || strings.HasPrefix(clean, "/root/") ||
		strings.HasPrefix(clean, "/var/lib/") || strings.HasPrefix(clean, "/proc/") || strings.HasPrefix(clean, "/sys/") ||
		strings.HasPrefix(clean, "/dev/") || strings.HasPrefix(clean, "/boot/")
}

// privileged reports what in a container's options gives it the host.
func privileged(opts []opt) string {
	for _, o := range opts {
		v := strings.ToLower(o.value.text)
		switch {
		case o.is(0, "privileged"):
			return "--privileged"
		case (o.is(0, "pid") || o.is(0, "ipc") || o.is(0, "uts") || o.is(0, "userns") || o.is(0, "cgroupns") || o.is(0, "network") || o.is(0, "net")) && v == "host":
			if o.long == "network" || o.long == "net" {
				continue // the host's network is not its privileges
			}
			return "--" + o.long + "=host"
		case o.is(0, "cap-add"), o.is(0, "device"), o.is(0, "device-cgroup-rule"):
			return "--" + o.long + " " + o.value.text
		case o.is(0, "security-opt") && (strings.Contains(v, "unconfined") || strings.Contains(v, "disable") || strings.Contains(v, "no-new-privileges=false")):
			return "--security-opt " + o.value.text
		case (o.is('v', "volume") || o.is(0, "mount")) && hostMount(o.value.text):
			return o.String() + " " + o.value.text
		}
	}
	return ""
}

// vehicle judges the commands a program carries elsewhere, and the
// vehicle; it reports whether it found one.
func (j *judge) vehicle(shown, name string, args []arg, depth int) bool {
	if verbs, ok := vehicleVerbs[name]; !vehicleNames[name] || ok && !hasOperand(args, verbs) {
		return false
	}
	switch name {
	case "docker", "podman", "nerdctl":
		return j.containerVehicle(shown, args, depth)
	case "kubectl", "oc":
		return j.kubeVehicle(shown, args, depth)
	case "crictl":
		_, rest := crictlGlobal.parseLeading(args)
		if len(rest) == 0 || rest[0].text != "exec" {
			return false
		}
		_, inner := crictlExec.parseLeading(rest[1:])
		if len(inner) > 0 {
			j.farSide(shown+" exec", inner[1:], depth)
		}
		return true
	case "ctr":
		_, rest := ctrGlobal.parseLeading(args)
		if len(rest) >= 2 && in(rest[0].text, "task", "tasks", "t") && rest[1].text == "exec" {
			_, inner := ctrExec.parseLeading(rest[2:])
			if len(inner) > 0 {
				j.farSide(shown+" task exec", inner[1:], depth)
			}
			return true
		}
		if len(rest) >= 1 && rest[0].text == "run" {
			opts, inner := ctrRun.parseLeading(rest[1:])
			for _, o := range opts {
				if o.is(0, "privileged") || o.is(0, "with-ns") || o.is(0, "cap-add") || o.is(0, "mount") && hostMount(o.value.text) {
					j.danger(shown + " run " + o.String() + " " + effPrivilegedVehicle)
					break
				}
			}
			if len(inner) > 2 {
				j.farSide(shown+" run", inner[2:], depth)
			}
			return true
		}
	case "nsenter":
		return j.nsenter(shown, args, depth)
	case "unshare":
		j.unknown(shown + " runs a command in new namespaces")
		opts, rest := unshareSpec.parseLeading(args)
		for _, o := range opts {
			if o.is('r', "map-root-user") || o.is(0, "map-auto") {
				j.danger(shown + " " + o.String() + " " + effPrivilegedVehicle)
				break
			}
		}
		j.farSide(shown, rest, depth)
		return true
	case "aws", "gcloud", "az":
		return j.cloudRemote(shown, name, args, depth)
	case "docker-compose", "podman-compose":
		return j.composeVehicle(shown, args, depth)
	case "lxc", "incus", "multipass", "machinectl":
		// lxc exec NAME -- CMD, lxc shell NAME, multipass exec NAME -- CMD,
		// machinectl shell NAME [CMD].
		j.unknown(shown + " runs a command in a container or another machine")
		for i, a := range args {
			if a.text == "--" && !a.dynamic {
				j.farSide(shown, args[i+1:], depth)
				return true
			}
		}
		ops := cloudOperands(args)
		if len(ops) > 2 && name == "machinectl" {
			j.farSide(shown, ops[2:], depth)
			return true
		}
		j.danger(shown + " " + effBlindShell)
		return true
	case "nomad":
		// nomad alloc exec [options] ALLOC CMD.
		ops := cloudOperands(args)
		for i, o := range ops {
			if o.text == "exec" {
				if i+2 < len(ops) {
					j.farSide(shown+" exec", ops[i+2:], depth)
				} else {
					j.danger(shown + " exec " + effBlindShell)
				}
				return true
			}
		}
		return false
	case "vagrant":
		j.unknown(shown + " runs a command on another machine")
		vals := optValues(args, "-c", "--command")
		if len(vals) == 0 {
			j.danger(shown + " ssh " + effBlindShell)
		}
		for _, v := range vals {
			j.carry(shown+" ssh -c", v, shellText, depth)
		}
		return true
	case "systemd-nspawn":
		j.unknown(shown + " runs a command in a container")
		_, rest := nspawnSpec.parseLeading(args)
		j.farSide("systemd-nspawn", rest, depth)
		return true
	}
	return false
}

// containerVehicle: docker|podman|nerdctl [container] run|create|exec.
func (j *judge) containerVehicle(shown string, args []arg, depth int) bool {
	_, rest := dockerGlobal.parseLeading(args)
	if len(rest) > 0 && rest[0].text == "container" {
		rest = rest[1:]
	}
	if len(rest) > 0 && rest[0].text == "compose" {
		return j.composeVehicle(shown+" compose", rest[1:], depth)
	}
	if len(rest) > 0 && rest[0].text == "inspect" {
		// docker inspect -f '{{.Config.Env}}': the container's environment.
		for _, v := range optValues(rest[1:], "-f", "--format") {
			if t := strings.ToLower(v.text); strings.Contains(t, "env") || strings.Contains(t, ".config}}") || strings.Contains(t, "json .}}") {
				j.danger(shown + " inspect " + effOtherEnv)
			}
		}
		return false
	}
	if len(rest) == 0 || !in(rest[0].text, "run", "create", "exec") {
		return false
	}
	sub := rest[0].text
	opts, inner := containerRunSpec.parseLeading(rest[1:])
	if why := privileged(opts); why != "" {
		j.danger(shown + " " + sub + " " + why + " " + effPrivilegedVehicle)
	}
	for _, o := range opts {
		if o.is(0, "health-cmd") {
			j.carry(shown+" --health-cmd", o.value, shellText, depth)
		}
		if o.is(0, "entrypoint") && o.value.text != "" && len(inner) > 0 {
			// --entrypoint sh IMAGE -c CMD: the entry point is the command.
			j.farSide(shown+" "+sub, append([]arg{o.value}, inner[1:]...), depth)
			return true
		}
	}
	if len(inner) > 1 {
		j.farSide(shown+" "+sub, inner[1:], depth)
	} else if sub == "run" && hasAnyOpt(rest[1:len(rest)-len(inner)], "-i --interactive") && hasAnyOpt(rest[1:len(rest)-len(inner)], "-t --tty") {
		j.danger(shown + " run -it " + effBlindShell)
	}
	return true
}

// kubeVehicle: kubectl exec|debug|run|attach ... [-- CMD].
func (j *judge) kubeVehicle(shown string, args []arg, depth int) bool {
	opts, ops := kubectlSpec.parseInto(j, args)
	if len(ops) == 0 || !in(ops[0].text, "exec", "debug", "run", "attach", "rsh") {
		return false
	}
	if ops[0].text == "rsh" && len(ops) > 2 {
		// oc rsh POD CMD: the words after the pod are the command.
		for i, a := range args {
			if a.text == ops[1].text {
				j.farSide(shown+" rsh", args[i+1:], depth)
				return true
			}
		}
	}
	verb := ops[0].text
	var carried []arg
	for i, a := range args {
		if a.text == "--" && !a.dynamic {
			carried = args[i+1:]
			break
		}
	}
	if verb == "debug" && len(ops) > 1 && (strings.HasPrefix(ops[1].text, "node/") || ops[1].text == "node" || ops[1].text == "nodes") {
		j.danger(shown + " debug " + ops[1].text + " " + effPrivilegedVehicle)
	}
	for _, a := range args {
		t := strings.ToLower(a.text)
		if strings.HasPrefix(t, "--profile") && (strings.Contains(t, "sysadmin") || strings.Contains(t, "netadmin")) ||
			strings.HasPrefix(t, "--overrides") || strings.HasPrefix(t, "--privileged") {
			if strings.Contains(t, "privileged") || strings.Contains(t, "hostpid") || strings.Contains(t, "hostpath") ||
				strings.Contains(t, "hostnetwork") || strings.Contains(t, "hostipc") || strings.Contains(t, "sysadmin") ||
				strings.Contains(t, "netadmin") || strings.Contains(t, "capabilities") {
				j.danger(shown + " " + verb + " " + clipWord(a.text) + " " + effPrivilegedVehicle)
				break
			}
		}
	}
	for _, o := range opts {
		// --overrides '{...}' given as a separate word.
		if o.long == "overrides" {
			t := strings.ToLower(o.value.text)
			if strings.Contains(t, "privileged") || strings.Contains(t, "hostpid") || strings.Contains(t, "hostpath") {
				j.danger(shown + " " + verb + " --overrides " + effPrivilegedVehicle)
			}
		}
	}
	switch {
	case carried != nil:
		j.farSide(shown+" "+verb, carried, depth)
	case verb == "attach", verb == "rsh", hasAnyOpt(args, "-i --stdin") && hasAnyOpt(args, "-t --tty"):
		// kubectl debug -it pod --image=busybox, oc rsh pod: a shell.
		j.danger(shown + " " + verb + " " + effBlindShell)
	}
	return true
}

// nsenter: entering PID 1's mount or PID namespace is the host.
func (j *judge) nsenter(shown string, args []arg, depth int) bool {
	j.unknown(shown + " runs a command in another process's namespaces")
	opts, rest := nsenterSpec.parseLeading(args)
	target, enters := "", false
	for _, o := range opts {
		switch {
		case o.is('t', "target"):
			target = o.value.text
		case o.is('m', "mount"), o.is('p', "pid"), o.is('a', "all"), o.is('U', "user"), o.is('i', "ipc"), o.is('u', "uts"), o.is('n', "net"), o.is('C', "cgroup"):
			enters = true
		}
	}
	if enters && (target == "1" || target == "" || strings.HasPrefix(target, "$")) {
		j.danger(shown + " -t " + target + " " + effPrivilegedVehicle)
	}
	j.farSide(shown, rest, depth)
	return true
}

// cloudRemote: the cloud CLIs' verbs that run a command on a machine.
func (j *judge) cloudRemote(shown, name string, args []arg, depth int) bool {
	ops := cloudOperands(args)
	has := func(words ...string) bool { return hasOperand(ops, words) }
	switch {
	case name == "aws" && has("ssm") && has("send-command"):
		for _, o := range optValues(args, "--parameters") {
			for _, c := range ssmCommands(o.text) {
				j.carry(shown+" ssm send-command", arg{text: c, dynamic: o.dynamic}, shellText, depth)
			}
		}
		return true
	case name == "aws" && has("ssm") && has("start-session"), name == "aws" && has("ec2-instance-connect") && has("ssh"):
		j.danger(shown + " " + effBlindShell)
		return true
	case name == "aws" && has("ecs") && has("execute-command"):
		for _, o := range optValues(args, "--command") {
			j.farSideText(shown+" ecs execute-command", o, depth)
		}
		return true
	case name == "az" && has("run-command"):
		for _, o := range optValues(args, "--scripts") {
			j.carry(shown+" run-command", o, shellText, depth)
		}
		return true
	case name == "az" && (has("container") && has("exec") || has("aks") && has("command") && has("invoke") || has("ssh") && has("vm")):
		vals := optValues(args, "--exec-command", "--command")
		if len(vals) == 0 {
			j.danger(shown + " " + effBlindShell)
		}
		for _, o := range vals {
			j.farSideText(shown, o, depth)
		}
		return true
	case name == "gcloud" && has("ssh"):
		vals := optValues(args, "--command")
		for i, a := range args {
			if a.text == "--" && !a.dynamic && i+1 < len(args) {
				vals = append(vals, joinArgs(args[i+1:]))
				break
			}
		}
		if len(vals) == 0 {
			j.danger(shown + " ssh " + effBlindShell)
		}
		for _, o := range vals {
			j.carry(shown+" ssh --command", o, shellText, depth)
		}
		return true
	}
	return false
}

// optValues returns the values of the named long options (--x v, --x=v);
// --scripts takes every word up to the next option.
func optValues(args []arg, names ...string) []arg {
	var out []arg
	for i := 0; i < len(args); i++ {
		n, v, eq := strings.Cut(args[i].text, "=")
		if !in(n, names...) {
			continue
		}
		if eq {
			out = append(out, arg{text: v, dynamic: args[i].dynamic})
			continue
		}
		for k := i + 1; k < len(args) && (!strings.HasPrefix(args[k].text, "--") || args[k].dynamic); k++ {
			out = append(out, args[k])
			if n != "--scripts" {
				break
			}
		}
	}
	return out
}

// ssmCommands reads the commands out of an SSM --parameters value:
// commands=["a","b"], commands='a', or JSON {"commands":["a"]}.
func ssmCommands(v string) []string {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "{") {
		var p map[string][]string
		if err := json.Unmarshal([]byte(v), &p); err != nil {
			return []string{v} // judged as text: unreadable JSON is not a pass
		}
		return p["commands"]
	}
	rest, ok := strings.CutPrefix(v, "commands=")
	if !ok {
		return nil
	}
	if strings.HasPrefix(rest, "[") {
		var list []string
		if err := json.Unmarshal([]byte(rest), &list); err == nil {
			return list
		}
		rest = strings.Trim(rest, "[]")
	}
	return []string{strings.Trim(rest, `"'`)}
}

// farSideText judges a command given as one word (--command 'ls -l').
func (j *judge) farSideText(name string, v arg, depth int) {
	if v.dynamic {
		j.danger(name + " runs a command built at run time (" + v.text + ")")
		return
	}
	j.carry(name, v, shellText, depth)
	if f := strings.Fields(v.text); len(f) == 1 && shells[f[0]] || len(f) == 1 && strings.HasSuffix(f[0], "sh") && shells[f[0][strings.LastIndexByte(f[0], '/')+1:]] {
		j.danger(name + " " + effBlindShell)
	}
}

// farSide judges the command a vehicle runs on the far side, given as
// words: as if it ran here, and a shell with no script, or a printout of
// the environment there, is a danger. Nothing there is a look from here.
func (j *judge) farSide(name string, argv []arg, depth int) {
	if len(argv) == 0 {
		if strings.HasPrefix(name, "nsenter") || strings.HasPrefix(name, "unshare") || strings.HasPrefix(name, "chroot") || strings.HasPrefix(name, "systemd-nspawn") {
			j.danger(name + " " + effBlindShell)
		}
		return
	}
	if n, _, _ := commandName(argv[0]); in(n, "env", "printenv") && onlyOptions(argv[1:]) || n == "printenv" {
		j.danger(name + " " + argv[0].text + " " + effOtherEnv)
	}
	inner := stripWrappers(argv)
	if len(inner) > 0 {
		cmdName, _, _ := commandName(inner[0])
		switch {
		case shells[cmdName] && !hasScript(inner[1:]):
			j.danger(name + " " + inner[0].text + " " + effBlindShell)
		case in(cmdName, "env", "printenv") && onlyOptions(inner[1:]), cmdName == "export" && len(inner) <= 2, cmdName == "set" && len(inner) == 1,
			cmdName == "declare" && len(inner) == 2 && in(inner[1].text, "-x", "-p", "-px"):
			j.danger(name + " " + inner[0].text + " " + effOtherEnv)
		case cmdName == "printenv":
			j.danger(name + " printenv " + effOtherEnv)
		}
	}
	j.far++
	j.remote(func() { j.command(argv, depth) })
	j.far--
}

// farSecrets records a danger for a command on the far side that prints
// the environment there, or a variable whose name says it holds a secret
// (sh -c 'echo $DB_PASSWORD'): the local scrubbing does not reach it.
func (j *judge) farSecrets(argv []arg, name string) {
	if in(name, "env", "printenv") && onlyOptions(argv[1:]) || name == "printenv" || name == "export" && len(argv) == 1 ||
		name == "set" && len(argv) == 1 || name == "declare" && len(argv) == 2 && in(argv[1].text, "-x", "-p", "-px") {
		j.danger(argv[0].text + " " + effOtherEnv)
		return
	}
	for _, a := range argv[1:] {
		if a.dynamic && secretVarName(a.text) {
			j.danger(argv[0].text + " " + a.text + " " + effOtherEnv)
			return
		}
	}
}

// secretVarName reports whether a word expands a variable whose name says
// it holds a secret: $DB_PASSWORD, ${API_TOKEN}, $AWS_SECRET_ACCESS_KEY.
func secretVarName(t string) bool {
	u := strings.ToUpper(t)
	for _, w := range []string{"PASS", "SECRET", "TOKEN", "API_KEY", "APIKEY", "PRIVATE", "CREDENTIAL", "_KEY"} {
		if i := strings.Index(u, w); i > 0 && strings.LastIndexByte(u[:i], '$') >= 0 {
			return true
		}
	}
	return false
}

// hasScript reports whether a shell's words give it a script: -c TEXT, or
// a script file operand (not -i, -l, -s).
func hasScript(args []arg) bool {
	for _, a := range args {
		t := a.text
		if t == "-c" || strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.ContainsRune(t, 'c') {
			return true
		}
		if !strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "+") {
			return true
		}
	}
	return false
}

// onlyOptions reports whether args hold no operand.
func onlyOptions(args []arg) bool {
	for _, a := range args {
		if !strings.HasPrefix(a.text, "-") || a.dynamic {
			return false
		}
	}
	return true
}

// composeVehicle: docker compose exec|run SERVICE CMD.
func (j *judge) composeVehicle(shown string, args []arg, depth int) bool {
	_, rest := composeSpec.parseLeading(args)
	if len(rest) == 0 || !in(rest[0].text, "exec", "run") {
		return false
	}
	sub := rest[0].text
	opts, inner := composeRun.parseLeading(rest[1:])
	if why := privileged(opts); why != "" {
		j.danger(shown + " " + sub + " " + why + " " + effPrivilegedVehicle)
	}
	if len(inner) > 1 {
		j.farSide(shown+" "+sub, inner[1:], depth)
	}
	return true
}

// kubeEnvPrint records a danger for kubectl get whose output template
// picks the containers' environment (-o jsonpath='{..env}'), and kubectl
// set env --list, which prints it: the literal values there are secrets
// as often as not.
func (j *judge) kubeEnvPrint(shown string, args []arg) {
	if hasOperand(args, []string{"set"}) && hasOperand(args, []string{"env"}) && hasAnyOpt(args, "--list") {
		j.danger(shown + " set env --list " + effOtherEnv)
		return
	}
	if !hasOperand(args, []string{"get"}) {
		return
	}
	for i, a := range args {
		t := strings.ToLower(a.text)
		v := ""
		switch {
		case strings.HasPrefix(t, "-o=") || strings.HasPrefix(t, "--output=") || strings.HasPrefix(t, "--template="):
			_, v, _ = strings.Cut(t, "=")
		case strings.HasPrefix(t, "-o") && len(t) > 2 && !strings.HasPrefix(t, "--"):
			v = t[2:]
		case (t == "-o" || t == "--output" || t == "--template") && i+1 < len(args):
			v = strings.ToLower(args[i+1].text)
		}
		if strings.Contains(v, ".env") || strings.Contains(v, "env[") || strings.Contains(v, "env}") {
			j.danger(shown + " get -o " + clipWord(v) + " " + effOtherEnv)
			return
		}
	}
}
